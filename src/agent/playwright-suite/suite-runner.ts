/**
 * Runs one Playwright check suite: its code bundle downloaded and checked,
 * unpacked into a directory of its own, its dependencies installed and its
 * tests run by the check's commands on the check's engine, in the job's
 * confinement — then one result with every test, the report and what the
 * tests attached, all scrubbed.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, lstat, mkdir, realpath, writeFile } from 'node:fs/promises';
import { fileInside } from '../sandbox/contained-file.js';
import { LogLines, truncateLine } from '../sandbox/log-lines.js';
import { delimiter, dirname, extname, join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import Value from 'typebox/value';
import { DependencyInstallError, InvalidSettingsError, ScriptError, ScriptTimeoutError } from '../../errors/index.js';
import type { Logger } from '../../logging.js';
import { MAX_ARTIFACT_BYTES, type ArtifactRef, type Result } from '../../protocol/agent-api.js';
import { PlaywrightSettingsSchema, type PlaywrightSettings } from '../../protocol/playwright-settings.js';
import { safeArtifactLabel, type ArtifactLabel } from '../artifact-label.js';
import { DEFAULT_FFMPEG_PATH } from '../playwright-ffmpeg.js';
import type { SandboxUser, SandboxView } from '../isolation/isolation.js';
import type { JobRunner } from '../script-harness/job-runner.js';
import type { ScriptJob } from '../script-harness/script-job.js';
import type { ResultScrubber } from '../script-harness/scrubbers.js';
import type { SandboxRunOutcome } from '../sandbox/sandbox-process.js';
import type { ServiceClient } from '../service-client.js';
import { chownTree } from '../multistep/job-directory.js';
import { downloadCodeBundle, unpackCodeBundle } from './code-bundle.js';
import { EngineCache, type InstalledEngine } from './engines.js';
import { newestNpmDebugLog, NPM_DEBUG_LOG_ARTIFACT, NPM_LOGS_DIRECTORY, npmErrorText } from './npm-output.js';
import { linkBuilds, prepareBrowsersDirectory } from './suite-browsers.js';
import { AGENT_CONFIG_FILE, agentConfigSource, PROJECT_CONFIG_FILES, testCommandLine } from './suite-command.js';
import { fileScrubberOf, HTML_REPORT_ARTIFACT, HTML_REPORT_FOLDER, packHtmlReport } from './suite-html-report.js';
import { parseSuiteReport, type SuiteReport } from './suite-report.js';

export interface SuiteRunnerOptions {
  enginesDirectory: string;
  /** DEPENDENCY_CACHE: where npm (and bun) keep downloaded packages between runs. */
  dependencyCache: string | undefined;
  chromiumPath: string;
  /**
   * PLAYWRIGHT_BROWSERS_PATH: where the operator had `npx playwright install`
   * put Playwright's own Firefox and WebKit (and ffmpeg); undefined: none.
   */
  playwrightBrowsersPath?: string | undefined;
  /** Videos are recorded with this ffmpeg where Playwright's own build is not installed; Debian's by default. */
  ffmpegPath?: string;
  memoryLimitBytes: number;
  client: Pick<ServiceClient, 'downloadCodeBundle'>;
  agentEnv: NodeJS.ProcessEnv;
  /** Tests put a fake in; the agent installs engines through npm. */
  engines?: Pick<EngineCache, 'resolve'>;
}

/** Every test of a big suite may attach a trace, screenshots and a video; a result lists this many. */
const MAX_ARTIFACTS = 100;
/** Agent settings an install needs; never a registry token, which the suite's code would see too. */
const SUITE_PASSED_THROUGH = ['NODE_EXTRA_CA_CERTS', 'npm_config_registry', 'npm_config_cafile', 'NPM_CONFIG_REGISTRY', 'NPM_CONFIG_CAFILE'];

export class PlaywrightSuiteRunner implements JobRunner {
  readonly #engines: Pick<EngineCache, 'resolve'>;

  constructor(private readonly options: SuiteRunnerOptions) {
    this.#engines = options.engines ?? new EngineCache(options.enginesDirectory, options.agentEnv);
  }

  async start(logger: Logger): Promise<boolean> {
    // Engines come from the npm registry, through npm.
    if (!onPath('npm', this.options.agentEnv.PATH ?? process.env.PATH ?? '')) {
      logger.warn('npm is not on the PATH: this agent takes no Playwright check suites');
      return false;
    }
    if (!existsSync(this.options.chromiumPath)) {
      logger.warn(`${this.options.chromiumPath} is missing: Playwright suites can run API tests only`);
    }
    if (!existsSync(this.#ffmpegPath)) {
      logger.warn(`ffmpeg is missing at ${this.#ffmpegPath}: Playwright suites record videos only with Playwright's own ffmpeg (PLAYWRIGHT_BROWSERS_PATH)`);
    }
    const browsers = this.options.playwrightBrowsersPath;
    if (browsers && !existsSync(browsers)) logger.warn(`PLAYWRIGHT_BROWSERS_PATH ${browsers} does not exist: Firefox and WebKit projects of suites will fail`);
    return true;
  }

  get #ffmpegPath(): string {
    return this.options.ffmpegPath ?? DEFAULT_FFMPEG_PATH;
  }

  /** Playwright from 1.51 on records credential headers in traces: hide them too. */
  hidesSensitiveHeaders(): boolean {
    return true;
  }

  async run(script: ScriptJob): Promise<Result> {
    const { job } = script;
    if (!Value.Check(PlaywrightSettingsSchema, job.settings)) {
      throw new InvalidSettingsError('a PLAYWRIGHT job needs settings.bundle, engine, installCommand, testCommand, pwProjects and pwTags');
    }
    const settings = job.settings;
    const chromiumPath = existsSync(this.options.chromiumPath) ? this.options.chromiumPath : undefined;
    // Download, install and tests share the job's budget.
    const deadline = script.startedAt.getTime() + job.timeoutSeconds * 1000;
    const logs = new LogLines(script.scrub);
    try {
      const budget = AbortSignal.any([script.signal, AbortSignal.timeout(Math.max(1, deadline - Date.now()))]);
      const engine = await this.#engines.resolve(settings.engine, budget);
      const root = await script.directory('suite');
      const project = join(root, 'project');
      const reportFile = join(root, 'report.json');
      await mkdir(project);
      // The run's Playwright registry: the agent's, read-only to the job (see suite-browsers.ts).
      const browsers = await script.directory('suite-browsers');
      await chmod(browsers, 0o755);
      const missingBrowserScript = await prepareBrowsersDirectory(browsers);
      const confinement = await script.confinement();
      await downloadCodeBundle(this.options.client, settings.bundle, join(root, 'bundle.tar.gz'), budget);
      await unpackCodeBundle(join(root, 'bundle.tar.gz'), project, confinement.owner);
      await writeFile(
        join(project, AGENT_CONFIG_FILE),
        agentConfigSource({
          projectConfig: PROJECT_CONFIG_FILES.find((file) => existsSync(join(project, file))),
          reportFile,
          chromiumPath,
          browsersDirectory: browsers,
          missingBrowserScript,
          htmlReportFolder: join(root, HTML_REPORT_FOLDER),
        }),
      );
      await script.giveToJob(root);
      const cache = this.options.dependencyCache ? await dependencyCacheFor(this.options.dependencyCache, job.checkId, confinement.owner) : undefined;
      const env = this.#environment(script, engine, root, cache, chromiumPath);
      const ffmpegPath = existsSync(this.#ffmpegPath) ? this.#ffmpegPath : undefined;
      const operatorBrowsers = this.options.playwrightBrowsersPath;
      const view: SandboxView = {
        writable: [root, ...(cache ? [cache] : [])],
        readable: [
          this.options.enginesDirectory,
          ...(chromiumPath ? [dirname(chromiumPath)] : []),
          browsers,
          ...(operatorBrowsers ? [operatorBrowsers] : []),
          ...(ffmpegPath ? [dirname(ffmpegPath)] : []),
        ],
      };
      const shell = (command: string, commandEnv: Record<string, string>) =>
        script.run({ command: '/bin/sh', args: ['-c', command], cwd: project, env: commandEnv, view, timeoutMs: Math.max(1, deadline - Date.now()) });

      const install = await shell(settings.installCommand, env);
      const stopped = script.stoppedFor(install, 'suite');
      if (stopped) return script.errored(stopped, install.durationMs, logs.add('ERROR', install.stderr || install.stdout).lines);
      if (install.exitCode !== 0) {
        logs.add('INFO', install.stdout).add('ERROR', install.stderr);
        const output = install.stderr || install.stdout;
        const why = npmErrorText(output) ?? lastLines(output) ?? `exit code ${String(install.exitCode)}`;
        const result = script.errored(new DependencyInstallError(`${settings.installCommand} failed: ${why}`), install.durationMs, logs.lines);
        return { ...result, artifacts: [...result.artifacts, ...(await npmDebugLog(script, root))] };
      }
      logs.add('INFO', `${settings.installCommand}: done in ${(install.durationMs / 1000).toFixed(1)} s`);

      // Nothing of the job runs between its commands: the agent's registry gets the builds of the Playwright just installed.
      const builds = await linkBuilds({ directory: browsers, project, root, operatorBrowsers, ffmpegPath }).catch((error: unknown) => {
        logs.add('WARN', `Playwright's browsers were not set up: ${(error as Error).message}`);
        return undefined;
      });
      if (builds && !builds.revisions) {
        logs.add('WARN', "Playwright's browsers.json was not found in the project's node_modules: no video can be recorded, and Firefox and WebKit projects fail");
      }
      // Only the tests look there: an install command's `npx playwright install` still writes to the job's HOME.
      const testEnv = { ...env, PLAYWRIGHT_BROWSERS_PATH: browsers };
      const tests = await shell(testCommandLine(settings.testCommand, { projects: settings.pwProjects, tags: settings.pwTags }), testEnv);
      logs.add('INFO', tests.stdout);
      const ended = script.stoppedFor(tests, 'suite');
      if (ended) return script.errored(ended, tests.durationMs, logs.add('ERROR', tests.stderr).lines);
      const report = await script.readReport(reportFile, root, parseSuiteReport);
      return await judge(script, settings, engine, tests, report, root, reportFile, logs);
    } catch (error) {
      const why = script.signal.aborted
        ? 'cancelled'
        : (error as Error).name === 'TimeoutError'
          ? new ScriptTimeoutError(`The suite's download and install took longer than ${job.timeoutSeconds} s`)
          : error;
      return script.errored(why, Date.now() - script.startedAt.getTime(), logs.lines);
    }
  }

  #environment(
    script: ScriptJob,
    engine: InstalledEngine,
    root: string,
    cache: string | undefined,
    chromiumPath: string | undefined,
  ): Record<string, string> {
    const env = script.environment(root, engine.binDirectory);
    // Browsers are the machine's: nothing downloads one, and a config may name this one itself.
    env.PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD = '1';
    if (chromiumPath) env.PLAYWRIGHT_CHROMIUM_EXECUTABLE_PATH = chromiumPath;
    env.PLAYWRIGHT_HTML_OPEN = 'never';
    // Installs go out through the customer's network: its TLS-inspecting CAs and registry mirror apply.
    for (const key of SUITE_PASSED_THROUGH) {
      const value = this.options.agentEnv[key];
      if (value !== undefined) env[key] = value;
    }
    env.npm_config_update_notifier = 'false';
    env.npm_config_fund = 'false';
    env.npm_config_audit = 'false';
    // npm's debug logs stay with the job (uploaded when a command fails), never in a cache kept between runs.
    env.npm_config_logs_dir = join(root, NPM_LOGS_DIRECTORY);
    if (cache) {
      env.npm_config_cache = join(cache, 'npm');
      env.BUN_INSTALL_CACHE_DIR = join(cache, 'bun');
    }
    return env;
  }
}

/**
 * The check's own corner of DEPENDENCY_CACHE. Per check, not shared between
 * checks: a cache one job writes and another reads would carry one check's
 * code into another's run. Handed to the job's user for the run.
 */
async function dependencyCacheFor(cache: string, checkId: string, user: SandboxUser | null): Promise<string> {
  await mkdir(cache, { recursive: true });
  await chmod(cache, 0o711);
  const own = join(cache, `check-${createHash('sha256').update(checkId).digest('hex').slice(0, 16)}`);
  await mkdir(own, { recursive: true, mode: 0o700 });
  if (user) await chownTree(own, user);
  return own;
}

function onPath(command: string, path: string): boolean {
  return path.split(delimiter).some((directory) => directory !== '' && existsSync(join(directory, command)));
}

async function judge(
  script: ScriptJob,
  settings: PlaywrightSettings,
  engine: InstalledEngine,
  outcome: SandboxRunOutcome,
  report: SuiteReport | undefined,
  root: string,
  reportFile: string,
  logs: LogLines,
): Promise<Result> {
  const scrub = (text: string) => script.scrub.text(text);
  const ran = report ? report.tests.filter((test) => test.status !== 'skipped').length : 0;
  if (!report || ran === 0) {
    logs.add('ERROR', outcome.stderr);
    const output = outcome.stderr || outcome.stdout;
    const why = report?.errors[0] ?? npmErrorText(output) ?? lastLines(output) ?? `the test command exited with code ${String(outcome.exitCode)}`;
    const filters = settings.pwProjects.length + settings.pwTags.length > 0 ? ' (do pwProjects and pwTags match any test?)' : '';
    const result = script.errored(new ScriptError(scrub(`No test ran to a verdict${filters}: ${why}`)), outcome.durationMs, logs.lines);
    return { ...result, artifacts: [...result.artifacts, ...(await npmDebugLog(script, root))] };
  }
  // readReport made sure it is a regular file of the job's directory.
  const artifacts: ArtifactRef[] = [await script.upload(root, { name: 'report.json', contentType: 'application/json', path: await realpath(reportFile) })];
  const htmlReport = await uploadHtmlReport(script, root, logs);
  if (htmlReport) artifacts.push(htmlReport);
  const room = MAX_ARTIFACTS - artifacts.length;
  const attachments = await attachmentsInside(report, root);
  for (const [index, attachment] of attachments.slice(0, room).entries()) {
    const { name, contentType } = artifactLabel(index, attachment, script.scrub);
    artifacts.push(await script.upload(root, { name, contentType, path: attachment.path }));
  }
  if (attachments.length > room) {
    logs.add('WARN', `${attachments.length - room} attachments were not uploaded (at most ${MAX_ARTIFACTS} artifacts per run)`);
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
    ...script.base,
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

/** `NN-<test>-<attachment>.<ext>`, scrubbed, within the service's artifact name rule; the declared type, scrubbed and checked. */
function artifactLabel(index: number, attachment: SuiteReport['attachments'][number], scrub: ResultScrubber): ArtifactLabel {
  return safeArtifactLabel(
    scrub,
    { name: `${attachment.test}-${attachment.name}`, extension: extname(attachment.path) || 'bin', contentType: attachment.contentType },
    { prefix: `${String(index + 1).padStart(2, '0')}-` },
  );
}


/** npm's debug log of the job's last npm command, when npm wrote one. */
async function npmDebugLog(script: ScriptJob, root: string): Promise<ArtifactRef[]> {
  const log = await newestNpmDebugLog(root);
  return log ? [await script.upload(root, { name: NPM_DEBUG_LOG_ARTIFACT, contentType: 'text/plain', path: log })] : [];
}

/**
 * Playwright's HTML report, when the project's config asked for one (the
 * agent's config sends it to the job's directory), zipped with every file
 * scrubbed, as one artifact.
 */
async function uploadHtmlReport(script: ScriptJob, root: string, logs: LogLines): Promise<ArtifactRef | undefined> {
  const folder = join(root, HTML_REPORT_FOLDER);
  if (!(await lstat(folder).then(() => true, () => false))) return undefined;
  const scrubFile = fileScrubberOf(script.scrub);
  if (!scrubFile) {
    logs.add('WARN', 'The HTML report was not uploaded: it could not be scrubbed here');
    return undefined;
  }
  const scratch = await script.directory('suite-report');
  const packed = await packHtmlReport(folder, root, scratch, scrubFile, MAX_ARTIFACT_BYTES);
  if ('skipped' in packed) {
    logs.add('WARN', `The HTML report was not uploaded: ${packed.skipped}`);
    return undefined;
  }
  return script.upload(scratch, { name: HTML_REPORT_ARTIFACT, contentType: 'application/zip', path: packed.zip });
}

function lastLines(text: string): string | undefined {
  const lines = stripVTControlCharacters(text).split('\n').map((line) => line.trim()).filter(Boolean);
  return lines.length > 0 ? lines.slice(-5).join(' | ') : undefined;
}

