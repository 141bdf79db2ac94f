/**
 * What sets one kind of Playwright script check apart when it runs on the
 * multi-step machinery (runtime, job directory, warm sandboxes, report,
 * artifacts): MULTI_STEP scripts use `request`, BROWSER scripts `page` and
 * the machine's Chromium. Everything else is the multi-step runner's.
 */
import type { ArtifactRef } from '../../protocol/agent-api.js';
import type { ScriptJob } from '../script-harness/script-job.js';
import type { RunReport } from './playwright-report.js';

export interface InstalledRuntimeRef {
  id: string;
  /** The runtime's directory (its node_modules hold Playwright). */
  directory: string;
}

/** A file of the job directory the agent writes, outside the check's own `check/`. */
export interface KindFiles {
  /** The content of `check/<entryName>`, the test file Playwright runs, which loads the script. */
  entry?: string;
  /** Symbolic links, relative to the job directory → their targets. */
  links?: Record<string, string>;
}

export interface KindFindings {
  /** Added to the result's `details`, beside `steps` and `tests`. */
  details: Record<string, unknown>;
  /** Artifacts uploaded after those of the report. */
  artifacts: ArtifactRef[];
}

export interface ScriptKind {
  checkType: 'MULTI_STEP' | 'BROWSER';
  /**
   * The test file Playwright runs, in `check/`, when it is not the script
   * itself: the kind's own file, which loads the script. Neither the script
   * nor a dependency may take its name.
   */
  entryName?: string;
  /** Why this agent cannot run the kind at all; undefined when it can. */
  unavailable(): string | undefined;
  /** Said once at start when the kind runs with something missing (a video needs ffmpeg). */
  caveat?(): string | undefined;
  /** The agent's part of Playwright's `use` for the run, laid over the check's own `playwrightConfig.use` (run-config.ts). */
  use(chromiumPath: string | undefined): Record<string, unknown>;
  /** What the agent writes into the job's directory beside the script, which is at `check/<scriptPath>` (DEFAULT_SCRIPT_FILE when left out). */
  files?(root: string, runtime: InstalledRuntimeRef, scriptPath?: string): KindFiles;
  /**
   * After the run, with everything of it gone: what the kind adds to the
   * result, beyond what every kind's has (steps, tests, the report's
   * attachments, screenshots the script saved).
   */
  findings?(script: ScriptJob, root: string, report: RunReport): Promise<KindFindings>;
}

export const MULTI_STEP_KIND: ScriptKind = {
  checkType: 'MULTI_STEP',
  unavailable: () => undefined,
  use: (chromiumPath) => ({
    trace: 'on',
    ...(chromiumPath ? { launchOptions: { executablePath: chromiumPath } } : {}),
  }),
};
