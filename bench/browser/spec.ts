/**
 * The browser spec both sides run, against the loopback shop of
 * test/support/shop-app.ts, and the throw-away Playwright project the CLI side
 * runs it in: the `use` options and the ffmpeg link the agent's browser
 * runner gives a BROWSER job (headless, trace on, video on when ffmpeg
 * exists, screenshot only on failure, the machine's Chromium), so the two
 * runs do the same browser work.
 */
import { mkdir, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { browserKind } from '../../src/agent/browser/browser-runner.js';
import { cliProject as sandboxCliProject } from '../sandbox/spec.js';

export const CHROMIUM = '/usr/bin/chromium';

/** Open a page, click a link, check a heading, fill and send a form. */
export const SPEC = `import { test, expect } from '@playwright/test';

test('log in to the shop', async ({ page }) => {
  await test.step('open the home page', async () => {
    await page.goto(process.env.TARGET_URL);
    await expect(page).toHaveTitle('Outpost Shop');
  });
  await test.step('go to the log-in form', async () => {
    await page.getByRole('link', { name: 'Log in' }).click();
    await expect(page.getByRole('heading', { name: 'Log in' })).toBeVisible();
  });
  await test.step('log in', async () => {
    await page.getByLabel('User').fill('ada');
    await page.getByLabel('Password').fill(process.env.SHOP_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect(page.getByRole('heading', { name: 'Welcome, ada' })).toBeVisible();
  });
});
`;

export interface CliProject {
  root: string;
  /** Where the project's Playwright finds its browsers' helpers (the machine's ffmpeg, linked as the agent links it). */
  browsersPath: string;
  /** Whether runs record a video (ffmpeg is installed). */
  video: boolean;
}

/** A throw-away Playwright project: the spec, a config with the browser runner's `use`, and the runtime's node_modules. */
export async function cliProject(runtimeId: string, runtimeDirectory: string): Promise<CliProject> {
  const kind = browserKind({ chromiumPath: CHROMIUM });
  const use = kind.use(CHROMIUM);
  const root = await sandboxCliProject(runtimeDirectory, { spec: SPEC, use });
  // The agent links the machine's ffmpeg where the runtime's Playwright looks for its own build, under the job's HOME.
  for (const [link, target] of Object.entries(kind.files?.(root, { id: runtimeId, directory: runtimeDirectory }).links ?? {})) {
    await mkdir(dirname(join(root, link)), { recursive: true });
    await symlink(target, join(root, link));
  }
  return { root, browsersPath: join(root, '.cache', 'ms-playwright'), video: use.video === 'on' };
}
