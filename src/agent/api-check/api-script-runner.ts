/**
 * API checks with setup or teardown scripts (the script lane). Scripts are
 * the customer's code, so they run in the job's sandbox, in the runtime's
 * Node.js; the request itself is sent by the agent, as in the uptime lane,
 * so its timings are the probe's own and the sandbox needs no way to hand
 * back a socket. A run is therefore up to three steps:
 *
 *   1. setup: a sandbox process runs the setup scripts in order with the
 *      prepared `request` (variables filled, body encoded), and writes back
 *      the request as they left it;
 *   2. the agent checks that request and sends it (api-run.ts);
 *   3. teardown: a fresh sandbox process runs the teardown scripts with the
 *      request and the `response`, and writes back the response as they left
 *      it. Assertions are evaluated by the agent after teardown, on that
 *      response, so a teardown may reshape what is asserted on.
 *
 * Each phase has a directory of its own, made by the agent for it and
 * removed with the job; its output is read through a checked handle once its
 * process is gone. A script that throws fails the run with
 * API_SETUP_SCRIPT_FAILED or API_TEARDOWN_SCRIPT_FAILED, one that runs past
 * API_SCRIPT_TIMEOUT_MS with API_SCRIPT_TIMEOUT, a request a setup script
 * broke with API_REQUEST_INVALID.
 */
import { dirname, join } from 'node:path';
import {
  ApiScriptTimeoutError,
  ApiSetupScriptError,
  ApiTeardownScriptError,
  RuntimeMissingError,
  ScriptError,
} from '../../errors/index.js';
import type { Logger } from '../../logging.js';
import type { Job, Result } from '../../protocol/agent-api.js';
import { API_SCRIPT_TIMEOUT_MS, ApiSettingsSchema, type ApiScript, type ApiSettings } from '../../protocol/api-settings.js';
import type { IsolationBackend } from '../isolation/isolation.js';
import { reserveJobDirectory } from '../multistep/job-directory.js';
import { installedRuntimeList, type InstalledRuntime } from '../multistep/multistep-runner.js';
import { nodeFlags } from '../multistep/runner-command.js';
import { settingsParser } from '../probes/settings-parser.js';
import type { ProbeOutcome } from '../probes/probe.js';
import { LogLines, truncateLine } from '../sandbox/log-lines.js';
import type { JobRunner } from '../script-harness/job-runner.js';
import type { ScriptJob } from '../script-harness/script-job.js';
import { jobDestinationPolicy } from '../probes/destination-guard.js';
import { exchangeApiRequest, invertOutcome, judgeApiResponse, type ApiResponse } from './api-run.js';
import { checkScriptRequest, prepareRequest, resolveAssertions, type OutgoingRequest } from './request.js';
import {
  INPUT_FILE,
  OUTPUT_FILE,
  PROGRESS_FILE,
  SANDBOX_PROGRAM,
  SANDBOX_PROGRAM_FILE,
  type PhaseInput,
  type PhaseOutput,
} from './sandbox-program.js';

export interface ApiScriptRunnerOptions {
  sandboxRoot: string;
  memoryLimitBytes: number;
  isolation: IsolationBackend;
  /** The runtimes scripts may run on; those installed in the project's runtimes/ when left out. */
  runtimes?: InstalledRuntime[];
}

/** The runtime of a job that names none: the newest installed. */
const PREFERRED_RUNTIME = '2026.04';
/** Starting the runtime's Node.js and loading the program, on top of the scripts' own time. */
const START_MARGIN_MS = 5000;

const parseSettings = settingsParser(ApiSettingsSchema, 'API check');

type Phase = PhaseInput['phase'];

export class ApiScriptRunner implements JobRunner {
  readonly #runtimes: ReadonlyMap<string, InstalledRuntime>;

  constructor(private readonly options: ApiScriptRunnerOptions) {
    this.#runtimes = new Map((options.runtimes ?? installedRuntimeList()).map((runtime) => [runtime.id, runtime]));
  }

  async start(logger: Logger): Promise<boolean> {
    if (this.#runtimes.size === 0) {
      logger.warn('no runtime is installed: API checks with setup or teardown scripts are not taken');
      return false;
    }
    return true;
  }

  /** Nothing of this kind records traces; credentials in headers are masked in its result either way. */
  hidesSensitiveHeaders(): boolean {
    return true;
  }

  #runtimeFor(job: Job): InstalledRuntime {
    const wanted = job.runtimeId ?? (this.#runtimes.has(PREFERRED_RUNTIME) ? PREFERRED_RUNTIME : [...this.#runtimes.keys()].sort().at(-1));
    const runtime = wanted === undefined ? undefined : this.#runtimes.get(wanted);
    if (!runtime) {
      throw new RuntimeMissingError(
        `Runtime ${wanted ?? '(none)'} is not installed on this agent (installed: ${[...this.#runtimes.keys()].join(', ') || 'none'})`,
      );
    }
    return runtime;
  }

  async run(script: ScriptJob): Promise<Result> {
    const { job } = script;
    const settings = parseSettings(job.settings);
    const destinations = jobDestinationPolicy(job);
    const runtime = this.#runtimeFor(job);
    const started = performance.now();
    const logs = new LogLines(script.scrub);
    try {
      let request = prepareRequest(settings.request, job.environmentVariables);
      if (settings.setupScripts.length > 0) {
        const output = await this.#phase(script, runtime, 'setup', settings.setupScripts, request, null, logs);
        request = checkScriptRequest(output.request);
      }
      // The job's time less what its scripts may take (the service sizes timeoutSeconds so).
      const scriptCount = settings.setupScripts.length + settings.tearDownScripts.length;
      const requestBudget = Math.max(1000, job.timeoutSeconds * 1000 - scriptCount * API_SCRIPT_TIMEOUT_MS);
      const exchange = await exchangeApiRequest(request, settings.request, script.signal, requestBudget, destinations);
      if (script.signal.aborted) throw new ScriptError('cancelled');
      let response = exchange.response;
      if (response !== undefined && settings.tearDownScripts.length > 0) {
        const seen = { ...response, statusCode: response.status, timings: exchange.timings };
        const output = await this.#phase(script, runtime, 'teardown', settings.tearDownScripts, request, seen, logs);
        response = responseAfterTeardown(output.response, response);
      }
      const assertions = resolveAssertions(settings.request.assertions, job.environmentVariables);
      return resultOf(script, settings, judgeApiResponse({ ...settings, request: { assertions } }, request, exchange, response), logs);
    } catch (error) {
      if (script.signal.aborted) return script.errored('cancelled', performance.now() - started, logs.lines);
      return script.errored(error, performance.now() - started, logs.lines);
    }
  }

  /** One phase's scripts in a sandbox process of their own; throws the phase's error when a script failed. */
  async #phase(
    script: ScriptJob,
    runtime: InstalledRuntime,
    phase: Phase,
    scripts: ApiScript[],
    request: OutgoingRequest,
    response: unknown,
    logs: LogLines,
  ): Promise<PhaseOutput> {
    const input: PhaseInput = { phase, timeoutMs: API_SCRIPT_TIMEOUT_MS, scripts, request, response };
    // A fresh directory per phase, written by the agent alone: nothing a setup script left can redirect the teardown's files.
    const directory = await reserveJobDirectory({
      sandboxRoot: this.options.sandboxRoot,
      runtimeNodeModules: join(runtime.directory, 'node_modules'),
      user: (await script.confinement()).owner,
      extraFiles: { [SANDBOX_PROGRAM_FILE]: SANDBOX_PROGRAM, [INPUT_FILE]: JSON.stringify(input) },
    });
    const root = directory.root;
    script.owns(root);
    const temp = this.options.isolation.privateTemp;
    const outcome = await script.run({
      command: runtime.node,
      args: [...nodeFlags(runtime, root, this.options.memoryLimitBytes, undefined, temp), join(root, SANDBOX_PROGRAM_FILE), root],
      cwd: root,
      env: script.environment(root, dirname(runtime.node)),
      view: { writable: [root], readable: [runtime.directory] },
      timeoutMs: scripts.length * API_SCRIPT_TIMEOUT_MS + START_MARGIN_MS,
    });
    const failing = phase === 'setup' ? ApiSetupScriptError : ApiTeardownScriptError;
    // Read before the verdict on the process, whose output (console lines) is worth having either way.
    const read = await script
      .readReport(join(root, OUTPUT_FILE), root, (text) => JSON.parse(text) as PhaseOutput)
      .catch((error: unknown) => (error instanceof Error ? error : new ScriptError(String(error))));
    const output = read instanceof Error ? undefined : read;
    // The phase's own directory is the script's to write in: nothing of the output is taken on trust.
    for (const line of output && Array.isArray(output.logs) ? output.logs : []) {
      if (typeof line?.message === 'string') logs.add(typeof line.level === 'string' ? line.level.slice(0, 16) : 'INFO', line.message);
    }
    // What a script wrote to the streams itself, past console.
    if (outcome.stdout.trim()) logs.add('INFO', outcome.stdout);
    if (outcome.stderr.trim()) logs.add('ERROR', outcome.stderr);
    const stopped = script.stoppedFor(outcome, `${phase} script`);
    if (stopped === 'cancelled') throw new ScriptError('cancelled');
    if (outcome.killedFor === 'timeout') {
      const progress = await script
        .readReport(join(root, PROGRESS_FILE), root, (text) => JSON.parse(text) as { index?: unknown })
        .catch(() => undefined);
      const index = typeof progress?.index === 'number' ? progress.index : undefined;
      throw new ApiScriptTimeoutError(
        `${describeScript(phase, index, scripts)} ran longer than ${API_SCRIPT_TIMEOUT_MS / 1000} s and was stopped`,
      );
    }
    if (stopped) throw stopped;
    if (read instanceof Error) throw read;
    if (!output) {
      const why = lastLine(outcome.stderr) ?? `the process exited with code ${String(outcome.exitCode)} before it finished`;
      throw new failing(script.scrub.text(`The ${phase} scripts did not finish: ${why}`));
    }
    if (typeof output.failure === 'object' && output.failure !== null) {
      const { index, message, timedOut } = output.failure;
      if (timedOut) {
        throw new ApiScriptTimeoutError(`${describeScript(phase, index, scripts)} ran longer than ${API_SCRIPT_TIMEOUT_MS / 1000} s`);
      }
      throw new failing(truncateLine(script.scrub.text(`${describeScript(phase, index, scripts)} failed: ${String(message)}`)));
    }
    return output;
  }
}

function describeScript(phase: Phase, index: number | undefined, scripts: ApiScript[]): string {
  if (index === undefined || !Number.isInteger(index) || index < 0 || index >= scripts.length) return `A ${phase} script`;
  const origin = scripts[index]!.origin;
  return `${phase === 'setup' ? 'Setup' : 'Teardown'} script ${index + 1} of ${scripts.length} (${origin === 'group' ? "the group's" : origin === 'snippet' ? 'a snippet' : "the check's"})`;
}

function lastLine(text: string): string | undefined {
  const lines = text.split('\n').map((line) => line.trim()).filter(Boolean);
  return lines.at(-1);
}

/** The response as teardown scripts left it: status, headers and body may change; anything unusable keeps what was received. */
function responseAfterTeardown(value: unknown, received: ApiResponse): ApiResponse {
  if (typeof value !== 'object' || value === null) return received;
  const raw = value as Record<string, unknown>;
  // `statusCode` is the name the comparable product uses; `status` ours. Whichever a script changed counts.
  const status = raw.statusCode !== received.status && isStatus(raw.statusCode) ? raw.statusCode : isStatus(raw.status) ? raw.status : received.status;
  const headers: Record<string, string> = {};
  if (typeof raw.headers === 'object' && raw.headers !== null && !Array.isArray(raw.headers)) {
    for (const [name, header] of Object.entries(raw.headers)) {
      if (typeof header === 'string' || typeof header === 'number' || typeof header === 'boolean') headers[name.toLowerCase()] = String(header);
    }
  }
  const body = typeof raw.body === 'string' ? raw.body : raw.body === undefined || raw.body === null ? '' : JSON.stringify(raw.body);
  return {
    status,
    statusText: typeof raw.statusText === 'string' ? raw.statusText : received.statusText,
    headers: typeof raw.headers === 'object' && raw.headers !== null ? headers : received.headers,
    body,
    bodyTruncated: received.bodyTruncated,
  };
}

function isStatus(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 999;
}

function resultOf(script: ScriptJob, settings: ApiSettings, judged: ProbeOutcome, logs: LogLines): Result {
  const outcome = settings.shouldFail ? invertOutcome(judged) : judged;
  return {
    ...script.base,
    stoppedAt: new Date().toISOString(),
    responseTime: outcome.responseTime,
    hasErrors: outcome.hasErrors,
    hasFailures: outcome.hasFailures,
    isDegraded: outcome.isDegraded,
    error: outcome.error ? { code: outcome.error.code, message: truncateLine(outcome.error.message) } : null,
    timings: outcome.timings,
    statusCode: outcome.statusCode,
    assertions: outcome.assertions,
    details: { ...outcome.details, scripts: { setup: settings.setupScripts.length, teardown: settings.tearDownScripts.length } },
    logs: logs.lines,
  };
}
