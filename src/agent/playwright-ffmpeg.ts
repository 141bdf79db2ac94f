/**
 * Where Playwright looks for its own builds (ffmpeg, Firefox, WebKit), and
 * how the agent puts the machine's ffmpeg there. Playwright records videos
 * with the ffmpeg build of its registry (`<registry>/ffmpeg-<revision>/ffmpeg-linux`,
 * the revision named by its playwright-core's browsers.json) and nowhere
 * else; Debian's ffmpeg (`/usr/bin/ffmpeg`) does the same work, so a link at
 * that path lets Playwright record without its download. Browser checks put
 * the link in the job's HOME (`.cache/ms-playwright`, Playwright's default
 * registry); Playwright suites in a registry directory of the job's own.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Debian's ffmpeg, used where Playwright's own build is not installed. */
export const DEFAULT_FFMPEG_PATH = '/usr/bin/ffmpeg';

/** Playwright's registry when PLAYWRIGHT_BROWSERS_PATH is unset, relative to HOME (on Linux). */
export const HOME_REGISTRY = join('.cache', 'ms-playwright');

/**
 * Where playwright-core's browsers.json may be under a directory holding
 * node_modules: nested under playwright where another playwright-core is
 * hoisted (@playwright/test → playwright → playwright-core), else hoisted.
 */
export function browsersJsonCandidates(directory: string): string[] {
  return [
    join(directory, 'node_modules', 'playwright', 'node_modules', 'playwright-core', 'browsers.json'),
    join(directory, 'node_modules', '@playwright', 'test', 'node_modules', 'playwright-core', 'browsers.json'),
    join(directory, 'node_modules', 'playwright-core', 'browsers.json'),
  ];
}

/** A revision is a number; anything else in browsers.json is not used in a path. */
const REVISION = /^[0-9]{1,10}$/;

/** Each build's revision in a browsers.json (`ffmpeg` → `1011`); throws when it is not one. */
export function buildRevisions(browsersJson: string): Map<string, string> {
  const browsers = (JSON.parse(browsersJson) as { browsers?: unknown }).browsers;
  if (!Array.isArray(browsers)) throw new Error('browsers.json lists no browsers');
  const revisions = new Map<string, string>();
  for (const browser of browsers as { name?: unknown; revision?: unknown }[]) {
    if (typeof browser?.name === 'string' && typeof browser.revision === 'string' && REVISION.test(browser.revision)) {
      revisions.set(browser.name, browser.revision);
    }
  }
  return revisions;
}

/** Where, under a registry directory, Playwright looks for the ffmpeg build of `revision`. */
export function ffmpegLinkPath(revision: string): string {
  return join(`ffmpeg-${revision}`, 'ffmpeg-linux');
}

const revisions = new Map<string, string | undefined>();

/**
 * The ffmpeg build revision a runtime's Playwright looks for (its
 * browsers.json). Runtimes are the agent's own and never change: read once.
 */
export function runtimeFfmpegRevision(runtimeDirectory: string): string | undefined {
  if (revisions.has(runtimeDirectory)) return revisions.get(runtimeDirectory);
  let revision: string | undefined;
  for (const candidate of browsersJsonCandidates(runtimeDirectory)) {
    try {
      revision = buildRevisions(readFileSync(candidate, 'utf8')).get('ffmpeg');
      if (revision) break;
    } catch {
      // not this layout
    }
  }
  revisions.set(runtimeDirectory, revision);
  return revision;
}
