/**
 * Multi-step checks: the check's script, a Playwright test using the
 * `request` fixture and `test.step`, run by the check's runtime in a warm
 * sandbox when one waits for the job's seat, cold otherwise; the run's
 * report turned into a Result with each step, the logs and the trace.
 * Browser checks run on the same machinery as another ScriptKind
 * (`forKind`, script-kind.ts), sharing the runtimes and warm sandboxes.
 */
import { existsSync } from 'node:fs';
import { dirname, extname, join, normalize } from 'node:path';
import Value from 'typebox/value';
import { InvalidSettingsError, RuntimeMissingError, ScriptError, ScriptTimeoutError } from '../../errors/index.js';
import type { Logger } from '../../logging.js';
import type { ArtifactRef, Job, Result } from '../../protocol/agent-api.js';
import { MultiStepSettingsSchema, scriptPathProblem, type MultiStepSettings } from '../../protocol/multistep-settings.js';
import { installedRuntimes, runtimePaths } from '../../runtimes/installed.js';
import { safeArtifactLabel, type ArtifactLabel } from '../artifact-label.js';
import type { IsolationBackend, SandboxView } from '../isolation/isolation.js';
import type { JobRunner } from '../script-harness/job-runner.js';
import type { ScriptJob } from '../script-harness/script-job.js';
import type { ResultScrubber } from '../script-harness/scrubbers.js';
import { LogLines, truncateLine } from '../sandbox/log-lines.js';
import { startEnvironment, startsWarm } from '../sandbox/sandbox-environment.js';
import type { SandboxRunOutcome } from '../sandbox/sandbox-process.js';
import type { WarmPool, WarmSandbox } from '../sandbox/warm-pool.js';
import { createJobDirectory, DEFAULT_SCRIPT_FILE, fillJobDirectory, type JobFiles } from './job-directory.js';
import { parseRunReport, type AttachmentReport, type RunReport } from './playwright-report.js';
import { runConfigSource } from './run-config.js';
import { nodeFlags, playwrightArgs } from './runner-command.js';
import { MULTI_STEP_KIND, type ScriptKind } from './script-kind.js';
import { scriptScreenshots } from './script-screenshots.js';
import { userPathRewriter } from './user-paths.js';
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

/** What the runners of every kind on one set of runtimes share: the runtimes and each seat's warm sandbox. */
interface Shared {
  runtimes: ReadonlyMap<string, InstalledRuntime>;
  /** Made by the first kind started; seats are the harness's, so one pool serves every kind. */
  warm: WarmPool<InstalledRuntime> | undefined;
}

export class MultiStepRunner implements JobRunner {
  readonly #shared: Shared;
  readonly #kind: ScriptKind;
  /** The runner built from options, not by forKind: it speaks for the runtimes and sandboxes in the hello and metrics. */
  readonly #primary: boolean;

  constructor(
    private readonly options: MultiStepRunnerOptions,
    kind: ScriptKind = MULTI_STEP_KIND,
    shared?: Shared,
  ) {
    this.#kind = kind;
    this.#primary = shared === undefined;
    this.#shared = shared ?? {
      runtimes: new Map((options.runtimes ?? installedRuntimeList()).map((runtime) => [runtime.id, runtime])),
      warm: undefined,
    };
  }

  /** A runner of another kind on the same runtimes and warm sandboxes. */
  forKind(kind: ScriptKind): MultiStepRunner {
    return new MultiStepRunner(this.options, kind, this.#shared);
  }

  get #runtimes(): ReadonlyMap<string, InstalledRuntime> {
    return this.#shared.runtimes;
  }

  get #warm(): WarmPool<InstalledRuntime> | undefined {
    return this.#shared.warm;
  }

  runtimes(): string[] {
    return this.#primary ? [...this.#runtimes.keys()] : [];
  }

  async start(logger: Logger): Promise<boolean> {
    const kind = this.#kind.checkType;
    if (this.#runtimes.size === 0) {
      logger.warn(`no runtime is installed: this agent takes no ${kind} jobs (outpost runtimes install)`);
      return false;
    }
    const unavailable = this.#kind.unavailable();
    if (unavailable) {
      logger.warn(`${unavailable}: this agent takes no ${kind} jobs`);
      return false;
    }
    const caveat = this.#kind.caveat?.();
    if (caveat) logger.warn(`${kind} jobs: ${caveat}`);
    if (this.#primary) logger.info({ runtimes: [...this.#runtimes.keys()] }, 'script runtimes installed');
    if (this.options.warm && !this.#shared.warm) {
      // Started by each seat's first job, not here: an agent that never gets a script job never pays for one.
      this.#shared.warm = createWarmPool({
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
    // Idempotent: every kind sharing the pool may stop it.
    await this.#warm?.stop();
  }

  idleSandboxes(): number {
    return this.#primary ? (this.#warm?.idleCount ?? 0) : 0;
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
    const kind = this.#kind;
    if (!Value.Check(MultiStepSettingsSchema, job.settings)) {
      throw new InvalidSettingsError(`a ${kind.checkType} job needs settings.script (and optional dependencies)`);
    }
    const settings = job.settings;
    // The service checked it; the agent writes nothing where the rule says no, whoever sent the job.
    const pathProblem = settings.scriptPath === undefined ? undefined : scriptPathProblem(settings.scriptPath);
    if (pathProblem) throw new InvalidSettingsError(`settings.scriptPath ${JSON.stringify(settings.scriptPath)} ${pathProblem}`);
    const runtime = job.runtimeId ? this.#runtimes.get(job.runtimeId) : undefined;
    if (!runtime) {
      throw new RuntimeMissingError(
        `Runtime ${job.runtimeId ?? '(none)'} is not installed on this agent (installed: ${[...this.#runtimes.keys()].join(', ') || 'none'})`,
      );
    }
    const chromiumPath = this.#chromiumPath();
    const timeoutMs = job.timeoutSeconds * 1000;
    const scriptPath = settings.scriptPath ?? DEFAULT_SCRIPT_FILE;
    const files: JobFiles = {
      script: settings.script,
      scriptPath,
      dependencies: settings.dependencies,
      playwrightConfig: (root) =>
        runConfigSource({
          root,
          testFile: kind.entryName ?? scriptPath,
          timeoutMs,
          agentUse: kind.use(chromiumPath),
          user: settings.playwrightConfig,
        }),
      entry: (root) => {
        const content = kind.files?.(root, runtime, scriptPath).entry;
        return kind.entryName && content !== undefined ? { name: kind.entryName, content } : undefined;
      },
      links: (root) => kind.files?.(root, runtime, scriptPath).links ?? {},
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
      return await judge(script, runtime, kind, outcome, report instanceof Error ? undefined : report, root, report instanceof Error ? report : undefined, settings);
    } finally {
      // Everything the job started is gone by now (supervision kills it all): the seat may get its next warm sandbox.
      this.#warm?.refill(runtime, script.seat);
    }
  }
}

function viewOf(runtime: InstalledRuntime, root: string, chromiumPath: string | undefined): SandboxView {
  return { writable: [root], readable: [runtime.directory, ...(chromiumPath ? [dirname(chromiumPath)] : [])] };
}

async function judge(
  script: ScriptJob,
  runtime: InstalledRuntime,
  kind: ScriptKind,
  outcome: SandboxRunOutcome,
  report: RunReport | undefined,
  root: string,
  reportError: Error | undefined,
  settings: MultiStepSettings,
): Promise<Result> {
  const { job } = script;
  // Paths as the user's project has them (`tests/login.spec.ts:12:5`), then scrubbed: the rewriting cannot join a secret anew.
  const userPaths = await userPathRewriter(root);
  const scrubber: ResultScrubber = { text: (text) => script.scrub.text(userPaths(text)), value: (value) => script.scrub.value(value) };
  const scrub = (text: string) => scrubber.text(text);
  const logs = logLines(report, outcome, scrubber);
  const responseTime = Math.round(report?.durationMs ?? outcome.durationMs);
  const stopped = script.stoppedFor(outcome, 'script');
  if (stopped) return script.errored(stopped, responseTime, logs);
  if (reportError) return script.errored(reportError, responseTime, logs);
  if (!report || report.tests === 0) {
    const why = report?.error ?? lastLines(outcome.stderr || outcome.stdout) ?? `the runner exited with code ${String(outcome.exitCode)}`;
    return script.errored(new ScriptError(scrub(`The script did not run to a verdict: ${why}`)), responseTime, logs);
  }
  const artifacts: ArtifactRef[] = [];
  const names = new Set<string>();
  const manyTests = report.tests > 1;
  for (const [index, attachment] of report.attachments.entries()) {
    const label = uniqueLabel(names, (suffix) => attachmentLabel(scrubber, attachment, index, manyTests, suffix), index);
    artifacts.push(await script.upload(root, { ...label, path: attachment.path }));
  }
  // Image files the script saved itself (`page.screenshot({ path })`): not the report's, not the files the agent wrote.
  const known = new Set([
    ...report.attachments.map((attachment) => attachment.path),
    ...settings.dependencies.map((dependency) => join(root, 'check', normalize(dependency.path))),
  ]);
  for (const [offset, image] of (await scriptScreenshots(root, known)).entries()) {
    const index = report.attachments.length + offset;
    const label = uniqueLabel(
      names,
      (suffix) => safeArtifactLabel(scrubber, { name: image.name, extension: extname(image.path), contentType: image.contentType }, { suffix: suffix ?? `-${index}` }),
      index,
    );
    artifacts.push(await script.upload(root, { ...label, path: image.path }));
  }
  const found = await kind.findings?.(script, root, report);
  artifacts.push(...(found?.artifacts ?? []));
  const shouldFail = settings.shouldFail === true;
  // shouldFail turns a script that failed its assertions into a pass and one that passed into a failure; a timeout stays an error.
  const failed = shouldFail && !report.timedOut ? report.passed : !report.passed;
  const error = report.timedOut
    ? new ScriptTimeoutError(scrub(report.error ?? `The test exceeded its ${job.timeoutSeconds} s timeout`)).toJSON()
    : failed
      ? shouldFail
        ? { code: 'SHOULD_FAIL', message: 'The script passed, but the check is set to pass only when it fails (shouldFail)' }
        : { code: 'SCRIPT_FAILED', message: scrub(report.error ?? 'The script failed') }
      : null;
  const steps = report.steps.map((step) => ({
    name: scrub(step.name),
    durationMs: step.durationMs,
    status: step.status,
    ...(step.error ? { error: scrub(step.error) } : {}),
  }));
  // Each test's outcome, as Playwright's report has it: a script of several tests says which of them failed, not only the first error.
  const tests = report.outcomes.map((test) => ({
    title: scrub(test.title),
    status: test.status,
    durationMs: test.durationMs,
    ...(test.error ? { error: scrub(test.error) } : {}),
  }));
  return {
    ...script.base,
    stoppedAt: new Date().toISOString(),
    responseTime,
    hasFailures: failed,
    hasErrors: false,
    error: error ? { code: error.code, message: truncateLine(error.message) } : null,
    details: { steps, tests, runtimeId: runtime.id, peakMemoryBytes: outcome.peakMemoryBytes, ...found?.details },
    logs,
    artifacts,
  };
}

/** Playwright's own names for what it records of each test, and the artifact names they become. */
const RECORDINGS: Record<string, string> = { trace: 'trace', screenshot: 'screenshot', video: 'video' };

/**
 * An attachment's artifact name. A run of one test keeps the names it always
 * had: `trace.zip`, `<attachment>-<n>.<ext>`. A run of several names each
 * after its test: `trace-<test>.zip`, `screenshot-<test>.png`,
 * `video-<test>.webm`, `<attachment>-<test>.<ext>`, the test's title scrubbed
 * and cut to fit. `suffix`: the agent's, when the name was taken already.
 */
function attachmentLabel(
  scrubber: ResultScrubber,
  attachment: AttachmentReport,
  index: number,
  manyTests: boolean,
  suffix: string | undefined,
): ArtifactLabel {
  const isTrace = attachment.name === 'trace';
  const extension = isTrace ? 'zip' : extname(attachment.path) || 'bin';
  const contentType = isTrace ? 'application/zip' : attachment.contentType;
  if (!manyTests) {
    if (isTrace && suffix === undefined) return { name: 'trace.zip', contentType };
    return safeArtifactLabel(scrubber, { name: attachment.name, extension, contentType }, { suffix: suffix ?? `-${index}` });
  }
  const recording = RECORDINGS[attachment.name];
  return recording
    ? safeArtifactLabel(scrubber, { name: attachment.test, extension, contentType }, { prefix: `${recording}-`, ...(suffix ? { suffix } : {}) })
    : safeArtifactLabel(scrubber, { name: `${attachment.name}-${attachment.test}`, extension, contentType }, suffix ? { suffix } : {});
}

/** The label `make` gives, or, when its name is taken (two tests whose titles read alike once cut), the one with `-<index>` after it. */
function uniqueLabel(names: Set<string>, make: (suffix: string | undefined) => ArtifactLabel, index: number): ArtifactLabel {
  let label = make(undefined);
  if (names.has(label.name)) label = make(`-${index}`);
  names.add(label.name);
  return label;
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
