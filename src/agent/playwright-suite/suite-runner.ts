/**
 * Runs one Playwright check suite: its code bundle downloaded and checked,
 * unpacked into a directory of its own, its dependencies installed and its
 * tests run by the check's commands on the check's engine, as the job's
 * sandbox user — then one result with every test, the report and what the
 * tests attached, all scrubbed.
 */
import { existsSync } from 'node:fs';
import { lstat, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { fileInside } from '../sandbox/contained-file.js';
import { LogLines, truncateLine } from '../sandbox/log-lines.js';
import { extname, join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import Value from 'typebox/value';
import {
  DependencyInstallError,
  InvalidSettingsError,
  OutpostError,
  ScriptError,
  ScriptMemoryError,
  ScriptTimeoutError,
} from '../../errors/index.js';
import type { ArtifactRef, Job, Result } from '../../protocol/agent-api.js';
import { PlaywrightSettingsSchema, type PlaywrightSettings } from '../../protocol/playwright-settings.js';
import { errored, type ResultScrubber } from '../multistep/multistep-runner.js';
import { resultFrame } from '../result-frame.js';
import { sandboxEnvironment } from '../sandbox/sandbox-environment.js';
import { runSandboxed, type SandboxRunOutcome } from '../sandbox/sandbox-process.js';
import type { SandboxIdentities, SandboxUser } from '../sandbox/sandbox-user.js';
import type { ServiceClient } from '../service-client.js';
import { downloadCodeBundle, unpackCodeBundle } from './code-bundle.js';
import type { EngineCache, InstalledEngine } from './engines.js';
import { AGENT_CONFIG_FILE, agentConfigSource, PROJECT_CONFIG_FILES, testCommandLine } from './suite-command.js';
import { createSuiteDirectory, dependencyCacheFor, giveTo, type SuiteDirectory } from './suite-directory.js';
import { parseSuiteReport, type SuiteReport } from './suite-report.js';

export interface SuiteContext {
  engines: Pick<EngineCache, 'resolve'>;
  client: Pick<ServiceClient, 'downloadCodeBundle'>;
  identities: SandboxIdentities;
  sandboxRoot: string;
  memoryLimitBytes: number;
  serviceSecrets: Record<string, string>;
  agentEnv: NodeJS.ProcessEnv;
  chromiumPath: string | undefined;
  /** DEPENDENCY_CACHE: where npm (and bun) keep downloaded packages between runs. */
  dependencyCache: string | undefined;
  scrub: ResultScrubber;
  /** Scrubs and uploads one file; answers what the result says of it. */
  upload(name: string, contentType: string, path: string): Promise<ArtifactRef>;
  signal: AbortSignal;
}

const OUTPUT_LIMIT_BYTES = 1024 * 1024;
const REPORT_LIMIT_BYTES = 64 * 1024 * 1024;
/** Every test of a big suite may attach a trace, screenshots and a video; a result lists this many. */
const MAX_ARTIFACTS = 100;
/** Agent settings an install needs; never a registry token, which the suite's code would see too. */
const SUITE_PASSED_THROUGH = ['NODE_EXTRA_CA_CERTS', 'npm_config_registry', 'npm_config_cafile', 'NPM_CONFIG_REGISTRY', 'NPM_CONFIG_CAFILE'];

export async function runPlaywrightSuite(job: Job, agentId: string, context: SuiteContext): Promise<Result> {
  // Once more over the whole result: whatever path a text took into it, no secret leaves.
  return context.scrub.value(await run(job, agentId, context));
}

async function run(job: Job, agentId: string, context: SuiteContext): Promise<Result> {
  const startedAt = new Date();
  const base = resultFrame(job, agentId, startedAt);
  if (!Value.Check(PlaywrightSettingsSchema, job.settings)) {
    return errored(base, new InvalidSettingsError('a PLAYWRIGHT job needs settings.bundle, engine, installCommand, testCommand, pwProjects and pwTags'), 0, []);
  }
  const settings = job.settings;
  // Download, install and tests share the job's budget.
  const deadline = startedAt.getTime() + job.timeoutSeconds * 1000;
  const logs = new LogLines(context.scrub);
  const user = await context.identities.acquire();
  let directory: SuiteDirectory | undefined;
  try {
    const budget = AbortSignal.any([context.signal, AbortSignal.timeout(Math.max(1, deadline - Date.now()))]);
    const engine = await context.engines.resolve(settings.engine, budget);
    directory = await createSuiteDirectory(context.sandboxRoot);
    await downloadCodeBundle(context.client, settings.bundle, directory.bundle, budget);
    await unpackCodeBundle(directory.bundle, directory.project, user);
    await writeFile(
      join(directory.project, AGENT_CONFIG_FILE),
      agentConfigSource({
        projectConfig: PROJECT_CONFIG_FILES.find((file) => existsSync(join(directory!.project, file))),
        reportFile: directory.report,
        chromiumPath: context.chromiumPath,
      }),
    );
    await giveTo(directory.root, user);
    const env = await suiteEnvironment(job, engine, directory, user, context);
    const shell = (command: string) =>
      runSandboxed({
        command: '/bin/sh',
        args: ['-c', command],
        cwd: directory!.project,
        env,
        user,
        timeoutMs: Math.max(1, deadline - Date.now()),
        memoryLimitBytes: context.memoryLimitBytes,
        outputLimitBytes: OUTPUT_LIMIT_BYTES,
        signal: context.signal,
      });

    const install = await shell(settings.installCommand);
    const stopped = stoppedFor(install, job, context);
    if (stopped) return finish(base, stopped, install.durationMs, logs.add('ERROR', install.stderr || install.stdout).lines);
    if (install.exitCode !== 0) {
      logs.add('INFO', install.stdout).add('ERROR', install.stderr);
      const why = lastLines(install.stderr || install.stdout) ?? `exit code ${String(install.exitCode)}`;
      return finish(base, new DependencyInstallError(`${settings.installCommand} failed: ${why}`), install.durationMs, logs.lines);
    }
    logs.add('INFO', `${settings.installCommand}: done in ${(install.durationMs / 1000).toFixed(1)} s`);

    const tests = await shell(testCommandLine(settings.testCommand, { projects: settings.pwProjects, tags: settings.pwTags }));
    logs.add('INFO', tests.stdout);
    const report = await readReport(directory.report, directory.root);
    const ended = stoppedFor(tests, job, context);
    if (ended) return finish(base, ended, tests.durationMs, logs.add('ERROR', tests.stderr).lines);
    return await judge(base, settings, engine, tests, report, directory, logs, context);
  } catch (error) {
    const why = context.signal.aborted
      ? 'cancelled'
      : (error as Error).name === 'TimeoutError'
        ? new ScriptTimeoutError(`The suite's download and install took longer than ${job.timeoutSeconds} s`)
        : error;
    return finish(base, why, Date.now() - startedAt.getTime(), logs.lines);
  } finally {
    await directory?.remove();
    context.identities.release(user);
  }
}

async function suiteEnvironment(
  job: Job,
  engine: InstalledEngine,
  directory: SuiteDirectory,
  user: SandboxUser | null,
  context: SuiteContext,
): Promise<Record<string, string>> {
  const env = sandboxEnvironment({
    job,
    serviceSecrets: context.serviceSecrets,
    home: directory.root,
    nodeBinDirectory: engine.binDirectory,
    agentEnv: context.agentEnv,
  });
  // Browsers are the machine's: nothing downloads one, and a config may name this one itself.
  env.PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD = '1';
  if (context.chromiumPath) env.PLAYWRIGHT_CHROMIUM_EXECUTABLE_PATH = context.chromiumPath;
  env.PLAYWRIGHT_HTML_OPEN = 'never';
  // Installs go out through the customer's network: its TLS-inspecting CAs and registry mirror apply.
  for (const key of SUITE_PASSED_THROUGH) {
    const value = context.agentEnv[key];
    if (value !== undefined) env[key] = value;
  }
  env.npm_config_update_notifier = 'false';
  env.npm_config_fund = 'false';
  env.npm_config_audit = 'false';
  if (context.dependencyCache) {
    const cache = await dependencyCacheFor(context.dependencyCache, user);
    env.npm_config_cache = join(cache, 'npm');
    env.BUN_INSTALL_CACHE_DIR = join(cache, 'bun');
  }
  return env;
}

/** The run ended because the agent stopped it: time, memory or a cancel. */
function stoppedFor(outcome: SandboxRunOutcome, job: Job, context: SuiteContext): OutpostError | 'cancelled' | undefined {
  if (outcome.killedFor === 'memory') {
    const limit = Math.round(context.memoryLimitBytes / 1024 / 1024);
    return new ScriptMemoryError(`The suite used more than ${limit} MB of memory and was stopped`);
  }
  if (outcome.killedFor === 'timeout') return new ScriptTimeoutError(`The suite ran longer than ${job.timeoutSeconds} s and was stopped`);
  if (outcome.killedFor === 'cancelled') return 'cancelled';
  return undefined;
}

function finish(base: Result, error: unknown, durationMs: number, logs: Result['logs']): Result {
  const responseTime = Math.round(durationMs);
  if (error === 'cancelled') {
    return { ...errored(base, new ScriptError('The run was cancelled'), responseTime, logs), isCancelled: true, aborted: true };
  }
  return errored(base, error, responseTime, logs);
}


async function readReport(reportPath: string, root: string): Promise<SuiteReport | undefined> {
  if (!existsSync(reportPath) && !(await isLink(reportPath))) return undefined;
  const path = await fileInside(reportPath, root);
  if (!path) throw new ScriptError('the suite\'s report is not a regular file in the job\'s directory; it was not read');
  try {
    const { size } = await stat(path);
    if (size > REPORT_LIMIT_BYTES) {
      throw new ScriptError(`the suite's report is ${size} bytes, over the ${REPORT_LIMIT_BYTES}-byte limit`);
    }
    return parseSuiteReport(await readFile(path, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (error instanceof OutpostError) throw error;
    throw new ScriptError(`the suite's report could not be read: ${(error as Error).message}`);
  }
}

async function judge(
  base: Result,
  settings: PlaywrightSettings,
  engine: InstalledEngine,
  outcome: SandboxRunOutcome,
  report: SuiteReport | undefined,
  directory: SuiteDirectory,
  logs: LogLines,
  context: SuiteContext,
): Promise<Result> {
  const scrub = (text: string) => context.scrub.text(text);
  const ran = report ? report.tests.filter((test) => test.status !== 'skipped').length : 0;
  if (!report || ran === 0) {
    logs.add('ERROR', outcome.stderr);
    const why = report?.errors[0] ?? lastLines(outcome.stderr || outcome.stdout) ?? `the test command exited with code ${String(outcome.exitCode)}`;
    const filters = settings.pwProjects.length + settings.pwTags.length > 0 ? ' (do pwProjects and pwTags match any test?)' : '';
    return finish(base, new ScriptError(scrub(`No test ran to a verdict${filters}: ${why}`)), outcome.durationMs, logs.lines);
  }
  // readReport made sure it is a regular file of the job's directory.
  const artifacts: ArtifactRef[] = [await context.upload('report.json', 'application/json', (await realpath(directory.report)))];
  const attachments = await attachmentsInside(report, directory.root);
  for (const [index, attachment] of attachments.slice(0, MAX_ARTIFACTS - 1).entries()) {
    artifacts.push(await context.upload(artifactName(index, attachment.test, attachment.name, attachment.path), attachment.contentType, attachment.path));
  }
  if (attachments.length > MAX_ARTIFACTS - 1) {
    logs.add('WARN', `${attachments.length - (MAX_ARTIFACTS - 1)} attachments were not uploaded (at most ${MAX_ARTIFACTS} artifacts per run)`);
  }
  const failed = report.tests.filter((test) => test.status === 'failed' || test.status === 'timedOut' || test.status === 'interrupted');
  const failing = failed.length > 0 || report.errors.length > 0;
  const verdictFailed = settings.shouldFail === true ? !failing : failing;
  const first = failed[0];
  const message = first
    ? `${failed.length} of ${ran} tests failed; first: [${first.project}] ${first.title}: ${first.error ?? first.status}`
    : report.errors[0]
      ? `The suite failed outside its tests: ${report.errors[0]}`
      : `All ${ran} tests passed, but the check expects the suite to fail (shouldFail)`;
  return {
    ...base,
    stoppedAt: new Date().toISOString(),
    responseTime: report.durationMs || Math.round(outcome.durationMs),
    hasFailures: verdictFailed,
    hasErrors: false,
    // Tests that passed only on a retry: the suite passed, not cleanly.
    isDegraded: !verdictFailed && report.stats.flaky > 0,
    error: verdictFailed ? { code: 'SCRIPT_FAILED', message: truncateLine(scrub(message)) } : null,
    details: {
      engine: engine.engine,
      engineVersion: engine.version,
      stats: report.stats,
      tests: report.tests.map((test) => ({
        ...test,
        title: scrub(test.title),
        ...(test.error ? { error: scrub(test.error) } : {}),
      })),
      peakMemoryBytes: outcome.peakMemoryBytes,
    },
    logs: logs.lines,
    artifacts,
  };
}

/**
 * The report is the sandbox's writing: an attachment is uploaded only when it
 * is a regular file really inside the job's directory, links resolved, so a
 * suite cannot have the agent read anything else.
 */
async function attachmentsInside(report: SuiteReport, root: string): Promise<SuiteReport['attachments']> {
  const inside: SuiteReport['attachments'] = [];
  for (const attachment of report.attachments) {
    const real = await fileInside(attachment.path, root);
    if (real) inside.push({ ...attachment, path: real });
  }
  return inside;
}

async function isLink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink();
  } catch {
    return false;
  }
}

/** `NN-<test>-<attachment>.<ext>`, within the service's artifact name rule. */
function artifactName(index: number, test: string, name: string, path: string): string {
  const extension = extname(path).replace(/[^A-Za-z0-9.]/g, '').slice(0, 10) || '.bin';
  const slug = `${test}-${name}`.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 150);
  return `${String(index + 1).padStart(2, '0')}-${slug}${extension}`;
}


function lastLines(text: string): string | undefined {
  const lines = stripVTControlCharacters(text).split('\n').map((line) => line.trim()).filter(Boolean);
  return lines.length > 0 ? lines.slice(-5).join(' | ') : undefined;
}

