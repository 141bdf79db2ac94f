/**
 * Browser checks: the check's script, a Playwright test using `page` (and
 * `browser`, `context`) and `test.step`, run on the multi-step machinery
 * (runtime, job directory, confinement, warm sandboxes, report, trace) as a
 * ScriptKind of its own. What it adds: the machine's Chromium, headless,
 * with the flags it needs in a sandbox; a screenshot on failure, a video
 * (when ffmpeg is installed) and the trace, all uploaded through the
 * scrubbing path; and what the pages saw (console errors, failed requests,
 * web vitals) in the result's details. Each test's outcome and the
 * screenshots the script saved are every script kind's (multistep-runner.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_SCRIPT_FILE } from '../multistep/job-directory.js';
import type { MultiStepRunner } from '../multistep/multistep-runner.js';
import type { InstalledRuntimeRef, KindFindings, ScriptKind } from '../multistep/script-kind.js';
import { DEFAULT_FFMPEG_PATH, ffmpegLinkPath, HOME_REGISTRY, runtimeFfmpegRevision } from '../playwright-ffmpeg.js';
import type { JobRunner } from '../script-harness/job-runner.js';
import { browserEntrySource, ENTRY_FILE, FINDINGS_FILE } from './browser-entry.js';
import { NO_FINDINGS, parseBrowserFindings } from './browser-findings.js';

export interface BrowserRunnerOptions {
  chromiumPath: string;
  /** Playwright records videos through ffmpeg; Debian's is used where Playwright's own build is not installed. */
  ffmpegPath?: string;
}

export { DEFAULT_FFMPEG_PATH };

/**
 * Chromium in a job's confinement: no GPU, no QUIC, none of its background
 * traffic (Playwright already turns off most of it, and the sandbox's
 * `--no-sandbox`: the job's user namespace refuses Chromium one of its own).
 */
export const CHROMIUM_ARGS = ['--disable-gpu', '--disable-quic', '--disable-background-networking', '--no-first-run'];

/** A BROWSER runner on the runtimes and warm sandboxes of `multiStep`. */
export function browserRunner(multiStep: MultiStepRunner, options: BrowserRunnerOptions): JobRunner {
  return multiStep.forKind(browserKind(options));
}

export function browserKind(options: BrowserRunnerOptions): ScriptKind {
  const ffmpegPath = options.ffmpegPath ?? DEFAULT_FFMPEG_PATH;
  const ffmpeg = (): string | undefined => (existsSync(ffmpegPath) ? ffmpegPath : undefined);
  return {
    checkType: 'BROWSER',
    entryName: ENTRY_FILE,
    unavailable: () => (existsSync(options.chromiumPath) ? undefined : `Chromium is missing at ${options.chromiumPath} (CHROMIUM_PATH)`),
    caveat: () => (ffmpeg() ? undefined : `ffmpeg is missing at ${ffmpegPath}: runs are recorded without a video`),
    use: (chromiumPath) => ({
      headless: true,
      trace: 'on',
      screenshot: 'only-on-failure',
      video: ffmpeg() ? 'on' : 'off',
      launchOptions: { ...(chromiumPath ? { executablePath: chromiumPath } : {}), args: CHROMIUM_ARGS },
    }),
    files: (root: string, runtime: InstalledRuntimeRef, scriptPath: string = DEFAULT_SCRIPT_FILE) => {
      const found = ffmpeg();
      const revision = found ? runtimeFfmpegRevision(runtime.directory) : undefined;
      return {
        entry: browserEntrySource(join(root, FINDINGS_FILE), scriptPath),
        // Where Playwright looks for its ffmpeg build (HOME is the job's directory): the machine's ffmpeg.
        links: found && revision ? { [join(HOME_REGISTRY, ffmpegLinkPath(revision))]: found } : {},
      };
    },
    findings: async (script, root): Promise<KindFindings> => {
      const findings =
        (await script.readReport(join(root, FINDINGS_FILE), root, parseBrowserFindings).catch(() => undefined)) ?? NO_FINDINGS;
      return { details: { ...findings }, artifacts: [] };
    },
  };
}
