/**
 * The one spec both sides run, and the Playwright config the CLI side runs it
 * with: the same reporter, trace and worker settings the agent writes for a
 * job, so the two runs do the same work.
 */
import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SPEC = `import { test, expect } from '@playwright/test';

test('home page answers', async ({ request }) => {
  await test.step('GET /', async () => {
    const response = await request.get(process.env.TARGET_URL);
    expect(response.status()).toBe(200);
  });
});
`;

/** A throw-away Playwright project: the spec, a config with `use`, and the runtime's node_modules. */
export async function cliProject(
  runtimeDirectory: string,
  options: { spec?: string; use?: Record<string, unknown> } = {},
): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'outpost-bench-cli-'));
  await mkdir(join(root, 'tests'));
  await writeFile(join(root, 'tests', 'check.spec.js'), options.spec ?? SPEC);
  await writeFile(join(root, 'package.json'), '{ "private": true }\n');
  await writeFile(
    join(root, 'playwright.config.cjs'),
    `module.exports = ${JSON.stringify({
      testDir: join(root, 'tests'),
      retries: 0,
      workers: 1,
      reporter: [['json', { outputFile: join(root, 'report.json') }]],
      outputDir: join(root, 'results'),
      use: options.use ?? { trace: 'on' },
    })};\n`,
  );
  await symlink(join(runtimeDirectory, 'node_modules'), join(root, 'node_modules'), 'dir');
  return root;
}
