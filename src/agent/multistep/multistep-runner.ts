/**
 * Runs one multi-step check: its script, a Playwright test using the
 * `request` fixture and `test.step`, in a fresh sandbox process of the
 * check's runtime, and turns the run into a Result — every text in it
 * scrubbed, its trace scrubbed and uploaded.
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import Value from 'typebox/value';
import { InvalidSettingsError, OutpostError, ScriptError, ScriptMemoryError, ScriptTimeoutError } from '../../errors/index.js';
import type { ArtifactRef, Job, Result } from '../../protocol/agent-api.js';
import { MultiStepSettingsSchema } from '../../protocol/multistep-settings.js';
import { resultFrame } from '../result-frame.js';
import { fileInside } from '../sandbox/contained-file.js';
import { LogLines, truncateLine } from '../sandbox/log-lines.js';
import { runSandboxed, type SandboxLimits, type SandboxRunOutcome } from '../sandbox/sandbox-process.js';
import { sandboxEnvironment, startEnvironment, startsWarm } from '../sandbox/sandbox-environment.js';
import type { SandboxIdentities } from '../sandbox/sandbox-user.js';
import type { WarmPool, WarmSandbox } from '../sandbox/warm-pool.js';
import { killAll } from '../sandbox/process-tree.js';
import { createJobDirectory, fillJobDirectory, SCRIPT_FILE, type JobDirectory, type JobFiles } from './job-directory.js';
import { parseRunReport, type RunReport } from './playwright-report.js';
import { nodeFlags, playwrightArgs } from './runner-command.js';
import { runWarm } from './warm-sandbox.js';


export interface InstalledRuntime {
  id: string;
  nodeJsVersion: string;
  /** The runtime's directory, whose node_modules the script resolves packages from. */
  directory: string;
  node: string;
  playwrightCli: string;
}

/** What the runner needs of the rest of the agent. */
export interface MultiStepContext {
  runtime: InstalledRuntime;
  identities: SandboxIdentities;
  sandboxRoot: string;
  memoryLimitBytes: number;
  serviceSecrets: Record<string, string>;
  agentEnv: NodeJS.ProcessEnv;
  chromiumPath: string | undefined;
  scrub: ResultScrubber;
  /** Scrubs and uploads one file; answers what the result says of it. */
  upload(job: Job, name: string, contentType: string, path: string): Promise<ArtifactRef>;
  signal: AbortSignal;
  /** Warm sandboxes to start jobs in; every job starts cold without. */
  warm?: WarmPool<InstalledRuntime>;
}

export interface ResultScrubber {
  text(text: string): string;
  /** Deep: every string in the value, keys included. */
  value<T>(value: T): T;
}

const OUTPUT_LIMIT_BYTES = 1024 * 1024;
const REPORT_LIMIT_BYTES = 64 * 1024 * 1024;
/** Playwright gets the budget; the sandbox is killed a little later, so a timeout is Playwright's to report. */
const KILL_MARGIN_MS = 5000;

export async function runMultiStep(job: Job, agentId: string, context: MultiStepContext): Promise<Result> {
  // Once more over the whole result: whatever path a text took into it, no secret leaves.
  return context.scrub.value(await run(job, agentId, context));
}

async function run(job: Job, agentId: string, context: MultiStepContext): Promise<Result> {
  const startedAt = new Date();
  const base = resultFrame(job, agentId, startedAt);
  if (!Value.Check(MultiStepSettingsSchema, job.settings)) {
    return errored(base, new InvalidSettingsError('a MULTI_STEP job needs settings.script (and optional dependencies)'), 0, []);
  }
  const settings = job.settings;
  const user = await context.identities.acquire();
  let directory: JobDirectory | undefined;
  let warm: WarmSandbox | undefined;
  try {
    const timeoutMs = job.timeoutSeconds * 1000;
    const files: JobFiles = {
      script: settings.script,
      dependencies: settings.dependencies,
      playwrightConfig: (root) => playwrightConfig(root, timeoutMs, context.chromiumPath),
    };
    const environment = (home: string) =>
      sandboxEnvironment({
        job,
        serviceSecrets: context.serviceSecrets,
        home,
        nodeBinDirectory: dirname(context.runtime.node),
        agentEnv: context.agentEnv,
      });
    const limits: SandboxLimits = {
      timeoutMs: timeoutMs + KILL_MARGIN_MS,
      memoryLimitBytes: context.memoryLimitBytes,
      outputLimitBytes: OUTPUT_LIMIT_BYTES,
      signal: context.signal,
    };
    warm = await context.warm?.take(context.runtime, user, startsWarmFor(environment, context));
    let outcome: SandboxRunOutcome;
    if (warm) {
      const sandbox = warm;
      directory = { root: sandbox.root, checkDirectory: join(sandbox.root, 'check'), remove: () => sandbox.remove() };
      await fillJobDirectory(directory, files, user);
      outcome = await runWarm(sandbox, { env: environment(sandbox.root), argv: playwrightArgs(sandbox.root) }, limits);
    } else {
      directory = await createJobDirectory({
        ...files,
        sandboxRoot: context.sandboxRoot,
        runtimeNodeModules: join(context.runtime.directory, 'node_modules'),
        user,
      });
      const root = directory.root;
      outcome = await runSandboxed({
        command: context.runtime.node,
        args: [...nodeFlags(context.runtime, root, context.memoryLimitBytes, context.chromiumPath), context.runtime.playwrightCli, ...playwrightArgs(root)],
        cwd: root,
        env: environment(root),
        user,
        ...limits,
      });
    }
    const report = await readReport(join(directory.root, 'report.json'), directory.root);
    return await judge(job, base, outcome, report, directory.root, context);
  } catch (error) {
    return errored(base, error, 0, []);
  } finally {
    // A warm sandbox whose job failed before it was handed over is still waiting for it.
    if (warm && !warm.process.hasExited()) await killAll(warm.process.selector);
    await directory?.remove();
    // Everything the job started is gone by now (the sandbox's own clean-up): the user may get its next warm sandbox.
    context.warm?.refill(context.runtime, user);
    context.identities.release(user);
  }
}

/** Whether the job's environment is one a process started before it can take on (sandbox-environment.ts). */
function startsWarmFor(environment: (home: string) => Record<string, string>, context: MultiStepContext): boolean {
  const start = startEnvironment({ home: '', nodeBinDirectory: dirname(context.runtime.node), agentEnv: context.agentEnv });
  return startsWarm(environment(''), start);
}

function playwrightConfig(root: string, timeoutMs: number, chromiumPath: string | undefined): string {
  const config = {
    testDir: join(root, 'check'),
    testMatch: [SCRIPT_FILE],
    timeout: timeoutMs,
    retries: 0,
    workers: 1,
    forbidOnly: false,
    reporter: [['json', { outputFile: join(root, 'report.json') }]],
    outputDir: join(root, 'results'),
    preserveOutput: 'always',
    use: {
      trace: 'on',
      ...(chromiumPath ? { launchOptions: { executablePath: chromiumPath } } : {}),
    },
  };
  return `// Written by the agent for one run; the check's script cannot change what was loaded.\nmodule.exports = ${JSON.stringify(config, null, 2)};\n`;
}

async function readReport(written: string, root: string): Promise<RunReport | undefined> {
  // The script could have replaced the report with a link to any file the agent can read.
  const path = await fileInside(written, root);
  if (!path) return undefined;
  try {
    const { size } = await stat(path);
    if (size > REPORT_LIMIT_BYTES) {
      throw new ScriptError(`the run's report is ${size} bytes, over the ${REPORT_LIMIT_BYTES}-byte limit (huge output?)`);
    }
    return parseRunReport(await readFile(path, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (error instanceof OutpostError) throw error;
    throw new ScriptError(`the run's report could not be read: ${(error as Error).message}`);
  }
}

async function judge(
  job: Job,
  base: Result,
  outcome: SandboxRunOutcome,
  report: RunReport | undefined,
  root: string,
  context: MultiStepContext,
): Promise<Result> {
  const scrub = context.scrub.text.bind(context.scrub);
  const logs = logLines(report, outcome, context.scrub);
  const responseTime = Math.round(report?.durationMs ?? outcome.durationMs);
  if (outcome.killedFor === 'memory') {
    const limit = Math.round(context.memoryLimitBytes / 1024 / 1024);
    return errored(base, new ScriptMemoryError(`The script used more than ${limit} MB of memory and was stopped`), responseTime, logs);
  }
  if (outcome.killedFor === 'timeout') {
    return errored(base, new ScriptTimeoutError(`The script ran longer than ${job.timeoutSeconds} s and was stopped`), responseTime, logs);
  }
  if (outcome.killedFor === 'cancelled') {
    return { ...errored(base, new ScriptError('The run was cancelled'), responseTime, logs), isCancelled: true, aborted: true };
  }
  if (!report || report.tests === 0) {
    const why = report?.error ?? lastLines(outcome.stderr || outcome.stdout) ?? `the runner exited with code ${String(outcome.exitCode)}`;
    return errored(base, new ScriptError(scrub(`The script did not run to a verdict: ${why}`)), responseTime, logs);
  }
  const artifacts: ArtifactRef[] = [];
  for (const [index, attachment] of report.attachments.entries()) {
    const extension = attachment.path.split('.').at(-1) ?? 'bin';
    const name = attachment.name === 'trace' ? (index === 0 ? 'trace.zip' : `trace-${index}.zip`) : `${attachment.name}-${index}.${extension}`;
    // Attachment paths come from a report the script could write: only files of the job's own are taken.
    const path = await fileInside(attachment.path, root);
    artifacts.push(
      path
        ? await context.upload(job, name, attachment.contentType, path)
        : { name, contentType: attachment.contentType, size: 0, uploaded: false, error: 'not a file inside the job\'s directory; not uploaded' },
    );
  }
  const failed = !report.passed;
  const error = report.timedOut
    ? new ScriptTimeoutError(scrub(report.error ?? `The test exceeded its ${job.timeoutSeconds} s timeout`)).toJSON()
    : failed
      ? { code: 'SCRIPT_FAILED', message: scrub(report.error ?? 'The script failed') }
      : null;
  const steps = report.steps.map((step) => ({
    name: scrub(step.name),
    durationMs: step.durationMs,
    status: step.status,
    ...(step.error ? { error: scrub(step.error) } : {}),
  }));
  return {
    ...base,
    stoppedAt: new Date().toISOString(),
    responseTime,
    hasFailures: failed,
    hasErrors: false,
    error: error ? { code: error.code, message: truncateLine(error.message) } : null,
    details: { steps, runtimeId: context.runtime.id, peakMemoryBytes: outcome.peakMemoryBytes },
    logs,
    artifacts,
  };
}

function logLines(report: RunReport | undefined, outcome: SandboxRunOutcome, scrub: ResultScrubber): Result['logs'] {
  const log = new LogLines(scrub);
  for (const entry of report?.output ?? []) log.add(entry.stream === 'stderr' ? 'ERROR' : 'INFO', entry.text);
  // Without a report the runner's own output is all there is to say what went wrong.
  if (!report || report.tests === 0) log.add('ERROR', outcome.stderr);
  if (outcome.droppedBytes > 0 && !log.full) {
    log.add('WARN', `${outcome.droppedBytes} bytes of output were dropped (limit ${OUTPUT_LIMIT_BYTES} per stream)`);
  }
  return log.lines;
}

function lastLines(text: string): string | undefined {
  const lines = text.split('\n').map((line) => line.trim()).filter(Boolean);
  return lines.length > 0 ? lines.slice(-5).join(' | ') : undefined;
}


export function errored(base: Result, error: unknown, responseTime: number, logs: Result['logs']): Result {
  const described =
    error instanceof OutpostError ? error.toJSON() : { code: 'SCRIPT_ERROR', message: error instanceof Error ? error.message : String(error) };
  return {
    ...base,
    stoppedAt: new Date().toISOString(),
    responseTime,
    hasErrors: true,
    hasFailures: true,
    error: { code: described.code, message: truncateLine(described.message) },
    logs,
  };
}
