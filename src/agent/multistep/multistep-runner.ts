/**
 * Multi-step checks: the check's script, a Playwright test using the
 * `request` fixture and `test.step`, run by the check's runtime in a warm
 * sandbox when one waits for the job's seat, cold otherwise; the run's
 * report turned into a Result with each step, the logs and the trace.
 */
import { existsSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import Value from 'typebox/value';
import { InvalidSettingsError, RuntimeMissingError, ScriptError, ScriptTimeoutError } from '../../errors/index.js';
import type { Logger } from '../../logging.js';
import type { ArtifactRef, Job, Result } from '../../protocol/agent-api.js';
import { MultiStepSettingsSchema } from '../../protocol/multistep-settings.js';
import { installedRuntimes, runtimePaths } from '../../runtimes/installed.js';
import { safeArtifactLabel } from '../artifact-label.js';
import type { IsolationBackend, SandboxView } from '../isolation/isolation.js';
import type { JobRunner } from '../script-harness/job-runner.js';
import type { ScriptJob } from '../script-harness/script-job.js';
import type { ResultScrubber } from '../script-harness/scrubbers.js';
import { LogLines, truncateLine } from '../sandbox/log-lines.js';
import { startEnvironment, startsWarm } from '../sandbox/sandbox-environment.js';
import type { SandboxRunOutcome } from '../sandbox/sandbox-process.js';
import type { WarmPool, WarmSandbox } from '../sandbox/warm-pool.js';
import { createJobDirectory, fillJobDirectory, SCRIPT_FILE, type JobFiles } from './job-directory.js';
import { parseRunReport, type RunReport } from './playwright-report.js';
import { nodeFlags, playwrightArgs } from './runner-command.js';
import { createWarmPool, runWarm } from './warm-sandbox.js';

export interface InstalledRuntime {
  id: string;
  nodeJsVersion: string;
  /** The runtime's directory, whose node_modules the script resolves packages from. */
  directory: string;
  node: string;
  playwrightCli: string;
}

export interface MultiStepRunnerOptions {
  sandboxRoot: string;
  memoryLimitBytes: number;
  agentEnv: NodeJS.ProcessEnv;
  chromiumPath: string;
  isolation: IsolationBackend;
  /** Keep a sandbox started ahead per seat. */
  warm: boolean;
  /** The runtimes to offer; those installed in the project's runtimes/ when left out. */
  runtimes?: InstalledRuntime[];
}

/** Runtimes from 2025.04 on also hide Authorization, cookie and API-key headers in traces. */
const SENSITIVE_HEADERS_FROM = '2025.04';
/** An idle warm sandbox is replaced after this long, so none sits for hours on what it loaded. */
const WARM_MAX_AGE_MS = 5 * 60_000;
/** Playwright gets the budget; the sandbox is killed a little later, so a timeout is Playwright's to report. */
const KILL_MARGIN_MS = 5000;
const OUTPUT_NOTE_LIMIT = 1024 * 1024;

export function installedRuntimeList(): InstalledRuntime[] {
  return installedRuntimes().map((record) => {
    const paths = runtimePaths(record.name);
    return { id: record.name, nodeJsVersion: record.nodeJsVersion, directory: paths.dir, node: paths.node, playwrightCli: paths.playwrightCli };
  });
}

export class MultiStepRunner implements JobRunner {
  readonly #runtimes: ReadonlyMap<string, InstalledRuntime>;
  #warm: WarmPool<InstalledRuntime> | undefined;

  constructor(private readonly options: MultiStepRunnerOptions) {
    this.#runtimes = new Map((options.runtimes ?? installedRuntimeList()).map((runtime) => [runtime.id, runtime]));
  }

  runtimes(): string[] {
    return [...this.#runtimes.keys()];
  }

  async start(logger: Logger): Promise<boolean> {
    if (this.#runtimes.size === 0) {
      logger.warn('no runtime is installed: this agent takes no script jobs (outpost runtimes install)');
      return false;
    }
    logger.info({ runtimes: [...this.#runtimes.keys()] }, 'script runtimes installed');
    if (this.options.warm) {
      // Started by each seat's first job, not here: an agent that never gets a script job never pays for one.
      this.#warm = createWarmPool({
        sandboxRoot: this.options.sandboxRoot,
        memoryLimitBytes: this.options.memoryLimitBytes,
        agentEnv: this.options.agentEnv,
        chromiumPath: () => this.#chromiumPath(),
        isolation: this.options.isolation,
        maxAgeMs: WARM_MAX_AGE_MS,
        onError: (error) => logger.warn(`warm sandbox: ${error instanceof Error ? error.message : String(error)}`),
      });
    }
    return true;
  }

  async stop(): Promise<void> {
    await this.#warm?.stop();
  }

  idleSandboxes(): number {
    return this.#warm?.idleCount ?? 0;
  }

  /** Jobs handed a warm sandbox, and jobs that found none they could use (benchmarks, tests). */
  get warmStats(): { warm: number; cold: number } {
    return this.#warm?.stats ?? { warm: 0, cold: 0 };
  }

  /** The seat's idle sandbox once everything under way for it is done (tests, benchmarks). */
  idleSandbox(seat: number): Promise<WarmSandbox | undefined> {
    return this.#warm?.idleSandbox(seat) ?? Promise.resolve(undefined);
  }

  hidesSensitiveHeaders(job: Job): boolean {
    return (job.runtimeId ?? '') >= SENSITIVE_HEADERS_FROM;
  }

  #chromiumPath(): string | undefined {
    return existsSync(this.options.chromiumPath) ? this.options.chromiumPath : undefined;
  }

  async run(script: ScriptJob): Promise<Result> {
    const { job } = script;
    if (!Value.Check(MultiStepSettingsSchema, job.settings)) {
      throw new InvalidSettingsError('a MULTI_STEP job needs settings.script (and optional dependencies)');
    }
    const runtime = job.runtimeId ? this.#runtimes.get(job.runtimeId) : undefined;
    if (!runtime) {
      throw new RuntimeMissingError(
        `Runtime ${job.runtimeId ?? '(none)'} is not installed on this agent (installed: ${[...this.#runtimes.keys()].join(', ') || 'none'})`,
      );
    }
    const settings = job.settings;
    const chromiumPath = this.#chromiumPath();
    const timeoutMs = job.timeoutSeconds * 1000;
    const files: JobFiles = {
      script: settings.script,
      dependencies: settings.dependencies,
      playwrightConfig: (root) => playwrightConfig(root, timeoutMs, chromiumPath),
    };
    const nodeBin = dirname(runtime.node);
    const temp = this.options.isolation.privateTemp;
    const usable = startsWarm(
      script.environment('', nodeBin),
      startEnvironment({ home: '', ...(temp ? { temp } : {}), nodeBinDirectory: nodeBin, agentEnv: this.options.agentEnv }),
    );
    const warm = await this.#warm?.take(runtime, script.seat, usable);
    try {
      let root: string;
      let outcome: SandboxRunOutcome;
      if (warm) {
        script.adopt(warm.confinement);
        script.owns(warm.root);
        root = warm.root;
        await fillJobDirectory({ root, checkDirectory: join(root, 'check'), remove: async () => undefined }, files, warm.confinement.owner);
        outcome = await runWarm(warm, { env: script.environment(root, nodeBin), argv: playwrightArgs(root) }, (process) =>
          script.supervise(process, timeoutMs + KILL_MARGIN_MS, viewOf(runtime, root, chromiumPath)),
        );
      } else {
        const directory = await createJobDirectory({
          ...files,
          sandboxRoot: this.options.sandboxRoot,
          runtimeNodeModules: join(runtime.directory, 'node_modules'),
          user: (await script.confinement()).owner,
        });
        script.owns(directory.root);
        root = directory.root;
        outcome = await script.run({
          command: runtime.node,
          args: [...nodeFlags(runtime, root, this.options.memoryLimitBytes, chromiumPath, temp), runtime.playwrightCli, ...playwrightArgs(root)],
          cwd: root,
          env: script.environment(root, nodeBin),
          view: viewOf(runtime, root, chromiumPath),
          timeoutMs: timeoutMs + KILL_MARGIN_MS,
        });
      }
      const report = await script.readReport(join(root, 'report.json'), root, parseRunReport).catch((error: unknown) => {
        // A report that cannot be read is told in the result; the run's own output may say why.
        return error instanceof Error ? error : new ScriptError(String(error));
      });
      return await judge(script, runtime, outcome, report instanceof Error ? undefined : report, root, report instanceof Error ? report : undefined);
    } finally {
      // Everything the job started is gone by now (supervision kills it all): the seat may get its next warm sandbox.
      this.#warm?.refill(runtime, script.seat);
    }
  }
}

function viewOf(runtime: InstalledRuntime, root: string, chromiumPath: string | undefined): SandboxView {
  return { writable: [root], readable: [runtime.directory, ...(chromiumPath ? [dirname(chromiumPath)] : [])] };
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

async function judge(
  script: ScriptJob,
  runtime: InstalledRuntime,
  outcome: SandboxRunOutcome,
  report: RunReport | undefined,
  root: string,
  reportError: Error | undefined,
): Promise<Result> {
  const { job } = script;
  const scrub = (text: string) => script.scrub.text(text);
  const logs = logLines(report, outcome, script.scrub);
  const responseTime = Math.round(report?.durationMs ?? outcome.durationMs);
  const stopped = script.stoppedFor(outcome, 'script');
  if (stopped) return script.errored(stopped, responseTime, logs);
  if (reportError) return script.errored(reportError, responseTime, logs);
  if (!report || report.tests === 0) {
    const why = report?.error ?? lastLines(outcome.stderr || outcome.stdout) ?? `the runner exited with code ${String(outcome.exitCode)}`;
    return script.errored(new ScriptError(scrub(`The script did not run to a verdict: ${why}`)), responseTime, logs);
  }
  const artifacts: ArtifactRef[] = [];
  for (const [index, attachment] of report.attachments.entries()) {
    const label = attachment.name === 'trace'
      ? { name: index === 0 ? 'trace.zip' : `trace-${index}.zip`, contentType: 'application/zip' }
      : safeArtifactLabel(
          script.scrub,
          { name: attachment.name, extension: extname(attachment.path) || 'bin', contentType: attachment.contentType },
          { suffix: `-${index}` },
        );
    artifacts.push(await script.upload(root, { ...label, path: attachment.path }));
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
    ...script.base,
    stoppedAt: new Date().toISOString(),
    responseTime,
    hasFailures: failed,
    hasErrors: false,
    error: error ? { code: error.code, message: truncateLine(error.message) } : null,
    details: { steps, runtimeId: runtime.id, peakMemoryBytes: outcome.peakMemoryBytes },
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
    log.add('WARN', `${outcome.droppedBytes} bytes of output were dropped (limit ${OUTPUT_NOTE_LIMIT} per stream)`);
  }
  return log.lines;
}

function lastLines(text: string): string | undefined {
  const lines = text.split('\n').map((line) => line.trim()).filter(Boolean);
  return lines.length > 0 ? lines.slice(-5).join(' | ') : undefined;
}
