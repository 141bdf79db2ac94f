/**
 * The browsers a suite's tests get besides Debian's Chromium. Each run has a
 * registry directory of its own (its PLAYWRIGHT_BROWSERS_PATH), the agent's,
 * read-only to the job. Once the suite's dependencies are installed, and so
 * which Playwright it runs is known (its playwright-core's browsers.json),
 * the agent links there the builds of exactly that Playwright it has:
 *
 * - Firefox and WebKit from the operator's PLAYWRIGHT_BROWSERS_PATH (or the
 *   job's own HOME registry, where an install command ran
 *   `npx playwright install`), when installed whole (INSTALLATION_COMPLETE);
 * - ffmpeg, for videos: Playwright's build from there too, else the
 *   machine's (Debian's `/usr/bin/ffmpeg`) at the path Playwright looks for.
 *
 * The generated config gives a Firefox or WebKit project with no build here
 * the stand-in script, which fails its tests at once saying so.
 */
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { browsersJsonCandidates, buildRevisions, ffmpegLinkPath, HOME_REGISTRY } from '../playwright-ffmpeg.js';
import { readContainedFile } from '../sandbox/contained-file.js';
import { MISSING_BROWSER_SCRIPT } from './suite-command.js';

export const MISSING_BROWSER_FILE = 'outpost-missing-browser';
const BROWSERS_JSON_LIMIT = 1024 * 1024;

/** Writes the stand-in for missing browsers into the run's registry directory, before anything of the job runs. */
export async function prepareBrowsersDirectory(directory: string): Promise<string> {
  const script = join(directory, MISSING_BROWSER_FILE);
  await writeFile(script, MISSING_BROWSER_SCRIPT, { mode: 0o755 });
  return script;
}

export interface LinkedBuilds {
  /** The suite's Playwright's revisions were found. */
  revisions: boolean;
  /** Builds linked, as `<name>-<revision>` → where from. */
  linked: Record<string, string>;
}

/**
 * Links the builds the suite's Playwright needs into `directory`. The
 * project's files are the job's: browsers.json is read through a checked
 * handle, and only revision numbers of it end up in a path.
 */
export async function linkBuilds(options: {
  directory: string;
  project: string;
  root: string;
  /** The operator's PLAYWRIGHT_BROWSERS_PATH. */
  operatorBrowsers: string | undefined;
  /** The machine's ffmpeg, when it has one. */
  ffmpegPath: string | undefined;
}): Promise<LinkedBuilds> {
  let revisions: Map<string, string> | undefined;
  for (const candidate of browsersJsonCandidates(options.project)) {
    try {
      revisions = buildRevisions((await readContainedFile(candidate, options.root, BROWSERS_JSON_LIMIT)).toString('utf8'));
      break;
    } catch {
      // not this layout
    }
  }
  const linked: Record<string, string> = {};
  if (!revisions) return { revisions: false, linked };
  const sources = [...(options.operatorBrowsers ? [options.operatorBrowsers] : []), join(options.root, HOME_REGISTRY)];
  for (const name of ['firefox', 'webkit']) {
    const revision = revisions.get(name);
    if (!revision) continue;
    const build = `${name}-${revision}`;
    const source = sources.find((registry) => existsSync(join(registry, build, 'INSTALLATION_COMPLETE')));
    if (source) {
      await symlink(join(source, build), join(options.directory, build));
      linked[build] = join(source, build);
    }
  }
  const ffmpeg = revisions.get('ffmpeg');
  if (ffmpeg) {
    const build = `ffmpeg-${ffmpeg}`;
    const source = sources.find((registry) => existsSync(join(registry, ffmpegLinkPath(ffmpeg))));
    if (source) {
      await symlink(join(source, build), join(options.directory, build));
      linked[build] = join(source, build);
    } else if (options.ffmpegPath) {
      await mkdir(join(options.directory, build), { mode: 0o755 });
      await symlink(options.ffmpegPath, join(options.directory, ffmpegLinkPath(ffmpeg)));
      linked[build] = options.ffmpegPath;
    }
  }
  return { revisions: true, linked };
}
