/**
 * Public Playwright example projects, run by hand (never in CI):
 *
 *   npm run build && npx tsx bench/public-examples/run.ts <dir>[=<baseURL>] ...
 *
 * Each <dir> is an example project copied out of its public repository. It is
 * copied again into a work directory, its public base URLs moved to loopback
 * stand-ins (projects.ts; nothing else in its files changes), and run
 *
 * 1. with `npx playwright test`: runtime 2026.04's Node.js and Playwright,
 *    the machine's Chromium, Chromium projects only;
 * 2. through a real Outpost service and agent on their embedded defaults:
 *    each spec that fits one file (no relative import) as a BROWSER check,
 *    and the whole project as a Playwright check suite.
 *
 * `=<baseURL>` gives a project without a Playwright config the baseURL its
 * specs expect from elsewhere (a checkly.config's playwrightConfig).
 *
 * It prints each spec's outcome under each, the tests that differ with their
 * errors, and the ratio of specs passing through Outpost to specs passing
 * under `npx playwright test`. Chromium resolves loopback only (LOOPBACK_ONLY).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { stripVTControlCharacters } from 'node:util';
import { dirname, join, relative, resolve } from 'node:path';
import { create as createTar } from 'tar';
import { browserKind } from '../../src/agent/browser/browser-runner.js';
import { parseSuiteReport } from '../../src/agent/playwright-suite/suite-report.js';
import { runtimePaths } from '../../src/runtimes/installed.js';
import { startPlaywrightDev, startWebShop } from '../../test/support/public-sites.js';
import { startTodoMvc } from '../../test/support/todomvc-site.js';
import { agentWarnings, ServiceApi, freePort, until } from '../sandbox/service.js';
import { start, startBenchService, type Child } from '../uptime/processes.js';
import { CHROMIUM, DROPPED_ENV, extraPackages, linkModules, prepareProject, type PreparedProject, type Rewrite } from './projects.js';

const RUNTIME = process.env.PUBLIC_EXAMPLES_RUNTIME ?? '2026.04';
const PLAYWRIGHT_VERSION = (JSON.parse(readFileSync(join(runtimePaths(RUNTIME).dir, 'node_modules/@playwright/test/package.json'), 'utf8')) as { version: string }).version;
const CLI = resolve(import.meta.dirname, '../../dist/cli.js');
/** Kept between runs: the suites' npm downloads and engines. */
const CACHE = join(tmpdir(), 'outpost-public-examples-cache');
const FINAL = new Set(['PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED']);
const RELATIVE_IMPORT = /(?:from\s+|require\(\s*|import\(\s*)['"]\.{1,2}\//;

/** Playwright's test status: passed, failed, timedOut, skipped, interrupted (or a session's, where no test ran). */
type Outcome = string;
/** Test outcomes of one way of running, keyed `file › title` (file relative to the project). */
type Outcomes = Map<string, { status: Outcome; error?: string | undefined }>;

interface ProjectRun {
  project: PreparedProject;
  dropped: string[];
  npx: Outcomes;
  npxNote?: string;
  browser: Outcomes;
  /** Spec files that are no browser check, and why. */
  notBrowser: Map<string, string>;
  suite: Outcomes;
  suiteNote?: string;
}

const children: Child[] = [];
const cleanups: (() => Promise<void>)[] = [];

const firstLine = (text: unknown): string | undefined =>
  typeof text === 'string' ? stripVTControlCharacters(text).split('\n').find((line) => line.trim())?.trim().slice(0, 200) : undefined;

function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((done) => child.once('close', (code) => done({ code, stderr })));
}

/** Outcomes of a Playwright JSON report, keyed by the spec's path in the project. */
function reportOutcomes(text: string, projectRoot: string): Outcomes {
  const rootDir = (JSON.parse(text) as { config?: { rootDir?: string } }).config?.rootDir ?? projectRoot;
  const outcomes: Outcomes = new Map();
  for (const test of parseSuiteReport(text).tests) {
    outcomes.set(`${relative(projectRoot, join(rootDir, test.file))} › ${test.title}`, { status: test.status, error: firstLine(test.error) });
  }
  return outcomes;
}

/** Where the runtime's Playwright finds ffmpeg for videos: the machine's, linked as the agent links it. */
async function browsersPath(work: string): Promise<string> {
  const home = join(work, 'browsers-home');
  const kind = browserKind({ chromiumPath: CHROMIUM });
  const paths = runtimePaths(RUNTIME);
  for (const [link, target] of Object.entries(kind.files?.(home, { id: RUNTIME, directory: paths.dir }).links ?? {})) {
    await mkdir(dirname(join(home, link)), { recursive: true });
    if (!existsSync(join(home, link))) await symlink(target, join(home, link));
  }
  return join(home, '.cache', 'ms-playwright');
}

async function npxPlaywrightTest(project: PreparedProject, work: string): Promise<{ outcomes: Outcomes; dropped: string[]; note?: string }> {
  const reportFile = join(work, `${project.name}-npx-report.json`);
  const droppedFile = join(work, `${project.name}-dropped.json`);
  const { code, stderr } = await run('npx', ['--no-install', 'playwright', 'test', '--reporter=json'], {
    cwd: project.root,
    env: {
      PATH: `${dirname(runtimePaths(RUNTIME).node)}:${join(project.root, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
      HOME: process.env.HOME,
      FORCE_COLOR: '0',
      PLAYWRIGHT_JSON_OUTPUT_FILE: reportFile,
      PLAYWRIGHT_BROWSERS_PATH: await browsersPath(work),
      [DROPPED_ENV]: droppedFile,
    },
  });
  const dropped = existsSync(droppedFile) ? (JSON.parse(await readFile(droppedFile, 'utf8')) as string[]) : [];
  if (!existsSync(reportFile)) return { outcomes: new Map(), dropped, note: `no report (exit ${String(code)}): ${stderr.slice(-500)}` };
  return { outcomes: reportOutcomes(await readFile(reportFile, 'utf8'), project.root), dropped };
}

/** npm-installs the packages the projects ask for besides Playwright (dotenv, http-server), once, for the npx runs. */
async function installExtras(projects: PreparedProject[], work: string): Promise<string | undefined> {
  const wanted = Object.assign({}, ...(await Promise.all(projects.map((project) => extraPackages(project.root))))) as Record<string, string>;
  if (Object.keys(wanted).length === 0) return undefined;
  const directory = join(work, 'extras');
  await mkdir(directory, { recursive: true });
  await writeFile(join(directory, 'package.json'), '{ "private": true }\n');
  const specs = Object.entries(wanted).map(([name, range]) => `${name}@${range}`);
  const { code, stderr } = await run('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--ignore-scripts', ...specs], {
    cwd: directory,
    env: process.env,
  });
  if (code !== 0) throw new Error(`npm install ${specs.join(' ')} failed: ${stderr.slice(-1000)}`);
  console.log(`npx side: installed ${specs.join(', ')} beside the runtime's packages`);
  return join(directory, 'node_modules');
}

/** A webServer the project's config starts for its own tests (`npm run start` on a port): the browser checks need it running. */
async function projectWebServer(project: PreparedProject): Promise<(() => Promise<void>) | undefined> {
  const config = (await Promise.all(['ts', 'js', 'mjs', 'cjs'].map((ext) => readFile(join(project.root, `playwright.project.config.${ext}`), 'utf8').catch(() => '')))).join('\n');
  const port = /webServer[\s\S]*?port:\s*(\d+)/.exec(config)?.[1];
  const manifest = JSON.parse(await readFile(join(project.root, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  if (!port || !/command:\s*['"]npm run start['"]/.test(config) || !manifest.scripts?.start) return undefined;
  // Its own process group, so that stopping it stops the server npm started.
  const child = spawn('npm', ['run', 'start'], {
    cwd: project.root,
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, PATH: `${dirname(runtimePaths(RUNTIME).node)}:${join(project.root, 'node_modules/.bin')}:${process.env.PATH ?? ''}` },
  });
  const stop = async () => {
    if (child.exitCode !== null || child.pid === undefined) return;
    const exited = new Promise((done) => child.once('exit', done));
    process.kill(-child.pid, 'SIGTERM');
    await exited;
  };
  try {
    await until(
      () =>
        new Promise<boolean>((done) => {
          const socket = connect(Number(port), '127.0.0.1', () => (socket.destroy(), done(true)));
          socket.once('error', () => done(false));
        }),
      30_000,
      `the project's web server on port ${port}`,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return stop;
}

async function runCheck(api: ServiceApi, checkId: string, timeoutMs: number): Promise<{ status: string; detail: any }> {
  const triggered = await api.call<{ sessions: { checkSessionId: string }[] }>('POST', '/v2/check-sessions/trigger', { target: { checkId: [checkId] } });
  let session: { status: string; results: { checkResultLink: string }[] } | undefined;
  await until(
    async () => {
      session = await api.call('GET', `/v1/check-sessions/${triggered.sessions[0]!.checkSessionId}`);
      return FINAL.has(session!.status);
    },
    timeoutMs,
    'a finished session',
    500,
  );
  const link = session!.results[0]?.checkResultLink;
  return { status: session!.status, detail: link ? await api.call('GET', new URL(link).pathname) : undefined };
}

async function browserChecks(api: ServiceApi, location: string, project: PreparedProject, files: string[]): Promise<{ outcomes: Outcomes; notBrowser: Map<string, string> }> {
  const outcomes: Outcomes = new Map();
  const notBrowser = new Map<string, string>();
  for (const file of files) {
    const script = await readFile(join(project.root, file), 'utf8');
    if (RELATIVE_IMPORT.test(script)) {
      notBrowser.set(file, 'imports a file of its project (a browser check is one file)');
      continue;
    }
    const created = await api.call<{ id: string }>('POST', '/v1/checks/browser', {
      name: `${project.name}/${file}`.slice(0, 200),
      activated: false,
      privateLocations: [location],
      runtimeId: RUNTIME,
      script,
      ...(project.baseURL ? { playwrightConfig: { use: { baseURL: project.baseURL } } } : {}),
    });
    const { status, detail } = await runCheck(api, created.id, 300_000);
    const tests = (detail?.details?.tests ?? []) as { title: string; status: string; error?: string }[];
    for (const test of tests) outcomes.set(`${file} › ${test.title}`, { status: test.status, error: firstLine(test.error) });
    if (tests.length === 0) outcomes.set(`${file} › (no test ran)`, { status: status.toLowerCase(), error: firstLine(JSON.stringify(detail?.error ?? null)) });
  }
  return { outcomes, notBrowser };
}

async function checkSuite(api: ServiceApi, service: { apiKey: string; accountId: string }, location: string, project: PreparedProject, work: string): Promise<{ outcomes: Outcomes; note?: string }> {
  const bundle = join(work, `${project.name}.tar.gz`);
  await createTar({ gzip: true, file: bundle, cwd: project.root, portable: true, filter: (path) => !/(^|\/)node_modules(\/|$)/.test(path) }, ['.']);
  const uploaded = await fetch(`${api.base}/v1/code-bundles`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.apiKey}`, 'x-service-account': service.accountId, 'content-type': 'application/gzip' },
    body: await readFile(bundle),
  });
  if (uploaded.status !== 201) return { outcomes: new Map(), note: `the bundle was refused: ${uploaded.status} ${await uploaded.text()}` };
  const { id: codeBundleId } = (await uploaded.json()) as { id: string };
  const created = await api.call<{ id: string }>('POST', '/v1/checks/playwright', {
    name: `${project.name} suite`,
    codeBundleId,
    activated: false,
    privateLocations: [location],
    // `npm ci` (the default) needs a lockfile, which these examples do not publish; Playwright is pinned to the
    // runtime's version the npx side runs, so that both sides run the same Playwright on the same Chromium.
    ...(project.hasLockfile ? {} : { installCommand: `npm install --no-audit --no-fund @playwright/test@${PLAYWRIGHT_VERSION}` }),
  });
  const { status, detail } = await runCheck(api, created.id, 1_800_000);
  const tests = (detail?.details?.tests ?? []) as { title: string; file: string; status: string; error?: string }[];
  const outcomes: Outcomes = new Map(tests.map((test) => [`${test.file} › ${test.title}`, { status: test.status, error: firstLine(test.error) }]));
  return { outcomes, ...(tests.length === 0 ? { note: `${status}: ${JSON.stringify(detail?.error ?? null).slice(0, 500)}` } : {}) };
}

/** A spec's outcome from its tests': passed when every test that ran passed. */
function specOutcome(outcomes: Outcomes, file: string): string {
  const tests = [...outcomes].filter(([key]) => key.startsWith(`${file} › `)).map(([, value]) => value.status);
  if (tests.length === 0) return '—';
  const ran = tests.filter((status) => status !== 'skipped');
  const passed = ran.filter((status) => status === 'passed').length;
  return passed === ran.length ? `passed (${passed})` : `failed (${passed}/${ran.length})`;
}

/** The suite reports files relative to its test directory; npx and browser checks relative to the project. */
function suiteFileKey(suite: Outcomes, npxKeys: string[]): Outcomes {
  const mapped: Outcomes = new Map();
  for (const [key, value] of suite) mapped.set(npxKeys.find((candidate) => candidate === key || candidate.endsWith(`/${key}`)) ?? key, value);
  return mapped;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows.map((row) => `  ${row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()}`).join('\n');
}

function report(runs: ProjectRun[]): void {
  let npxPassing = 0;
  let outpostPassing = 0;
  let browserPassing = 0;
  let browserOfNpxPassing = 0;
  let suitePassing = 0;
  for (const result of runs) {
    const { project } = result;
    const files = [...new Set([...result.npx.keys(), ...result.suite.keys()].map((key) => key.split(' › ')[0]!))].sort();
    console.log(`\n${project.name}${project.baseURL ? ` (baseURL ${project.baseURL})` : ''}`);
    if (result.dropped.length) console.log(`  projects dropped (not Chromium): ${result.dropped.join(', ')}`);
    console.log(`  rewritten: ${Object.entries(project.rewritten).map(([file, count]) => `${file} (${count})`).join(', ') || 'nothing'}`);
    for (const [file, urls] of Object.entries(project.excluded)) console.log(`  not run (no stand-in for ${urls}): ${file}`);
    if (project.leftPublic.length) console.log(`  public URLs left in files no test runs: ${project.leftPublic.join('; ')}`);
    if (result.npxNote) console.log(`  npx: ${result.npxNote}`);
    if (result.suiteNote) console.log(`  suite: ${result.suiteNote}`);
    const rows = [['spec', 'npx playwright test', 'browser check', 'check suite']];
    for (const file of files) {
      const npx = specOutcome(result.npx, file);
      const browser = result.notBrowser.has(file) ? 'not one file' : specOutcome(result.browser, file);
      const suite = specOutcome(result.suite, file);
      rows.push([file, npx, browser, suite]);
      const isPassed = (value: string) => value.startsWith('passed');
      if (!isPassed(npx)) continue;
      npxPassing += 1;
      if (isPassed(suite)) suitePassing += 1;
      if (!result.notBrowser.has(file)) {
        browserOfNpxPassing += 1;
        if (isPassed(browser)) browserPassing += 1;
      }
      if (isPassed(suite) && (result.notBrowser.has(file) || isPassed(browser))) outpostPassing += 1;
    }
    console.log(table(rows));
    const differing: string[] = [];
    for (const [key, { status, error }] of result.npx) {
      const suite = result.suite.get(key);
      const browser = result.browser.get(key);
      if (suite?.status !== status) differing.push(`  ${key}: npx ${status}${error ? ` (${error})` : ''}; suite ${suite?.status ?? 'not run'}${suite?.error ? ` (${suite.error})` : ''}`);
      const file = key.split(' › ')[0]!;
      if (!result.notBrowser.has(file) && browser?.status !== status)
        differing.push(`  ${key}: npx ${status}${error ? ` (${error})` : ''}; browser check ${browser?.status ?? 'not run'}${browser?.error ? ` (${browser.error})` : ''}`);
    }
    for (const [key, { status, error }] of result.npx) if (status !== 'passed' && status !== 'skipped') differing.push(`  ${key}: fails under npx too: ${error ?? status}`);
    for (const [way, outcomes] of [['suite', result.suite], ['browser check', result.browser]] as const) {
      for (const [key, { status }] of outcomes) if (!result.npx.has(key)) differing.push(`  ${key}: ${way} ${status}; not run by npx`);
    }
    if (differing.length) console.log(`  tests that fail or differ:\n${[...new Set(differing)].join('\n')}`);
  }
  console.log(`\nspecs passing under npx playwright test: ${npxPassing}`);
  console.log(`  of them passing as a check suite: ${suitePassing}; as a browser check (of ${browserOfNpxPassing} that are one file): ${browserPassing}`);
  console.log(`  passing through Outpost (in the suite, and as a browser check where one): ${outpostPassing}`);
  console.log(`ratio Outpost ÷ npx playwright test: ${npxPassing ? (outpostPassing / npxPassing).toFixed(3) : 'n/a'} (${outpostPassing}/${npxPassing})`);
}

async function startAgent(api: ServiceApi, rawKey: string, work: string): Promise<Child> {
  const refused: string[] = [];
  // The embedded default first; users where this machine refuses it namespaces.
  for (const isolation of [undefined, 'users']) {
    const healthPort = await freePort();
    const child = start(process.execPath, [CLI, 'agent'], {
      API_KEY: rawKey,
      API_URL: api.base,
      AGENT_HEALTH_PORT: String(healthPort),
      LOG_LEVEL: process.env.PUBLIC_EXAMPLES_AGENT_LOG_LEVEL ?? 'WARN',
      SHUTDOWN_GRACE_SECONDS: '5',
      SANDBOX_DIR: join(work, 'sandboxes'),
      CHROMIUM_PATH: CHROMIUM,
      ENGINES_DIR: join(CACHE, 'engines'),
      DEPENDENCY_CACHE: join(CACHE, 'dependencies'),
      ...(isolation ? { SANDBOX_ISOLATION: isolation, SANDBOX_UID_BASE: '62600', SANDBOX_UID_COUNT: '100' } : {}),
    });
    children.push(child);
    try {
      await until(
        async () => {
          if (child.process.exitCode !== null) throw new Error('exited');
          return (await fetch(`http://127.0.0.1:${healthPort}/-/readiness`).catch(() => undefined))?.status === 200;
        },
        60_000,
        'agent ready',
      );
      console.log(`agent: isolation ${isolation ?? 'embedded default'}${refused.length ? ` (not: ${refused.join('; ')})` : ''}`);
      return child;
    } catch {
      refused.push(`${isolation ?? 'default'}: ${(await agentWarnings(child)).join(' | ').slice(0, 300)}`);
      await child.stop();
    }
  }
  throw new Error(`the agent did not start: ${refused.join('; ')}`);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.length === 0) throw new Error('usage: tsx bench/public-examples/run.ts <project dir>[=<baseURL>] ...');
  const work = await mkdtemp(join(tmpdir(), 'outpost-public-examples-'));
  // Sandbox users reach the suite's directories through it.
  await chmod(work, 0o755);
  cleanups.push(() => rm(work, { recursive: true, force: true }));
  await mkdir(CACHE, { recursive: true });
  await chmod(CACHE, 0o755);

  const todomvc = await startTodoMvc();
  const playwrightDev = await startPlaywrightDev();
  const webshop = await startWebShop();
  cleanups.push(() => todomvc.close(), () => playwrightDev.close(), () => webshop.close());
  const rewrites: Rewrite[] = [
    { from: 'https://demo.playwright.dev/todomvc', to: todomvc.appUrl },
    { from: 'https://playwright.dev/', to: playwrightDev.url },
    { from: 'https://www.danube-web.shop', to: webshop.url.replace(/\/$/, '') },
  ];
  console.log(`stand-ins: ${rewrites.map(({ from, to }) => `${from} → ${to}`).join(', ')}`);

  const projects: PreparedProject[] = [];
  for (const arg of args) {
    const [directory, baseURL] = arg.split(/=(.*)/s) as [string, string | undefined];
    const rewrittenBase = baseURL ? rewrites.reduce((url, { from, to }) => url.split(from).join(to), baseURL) : undefined;
    projects.push(await prepareProject(resolve(directory), work, rewrites, rewrittenBase));
  }
  const extras = await installExtras(projects, work);
  const runs: ProjectRun[] = [];
  for (const project of projects) {
    await linkModules(project.root, join(runtimePaths(RUNTIME).dir, 'node_modules'), extras);
    const started = performance.now();
    const npx = await npxPlaywrightTest(project, work);
    console.log(`${project.name}: npx playwright test, ${npx.outcomes.size} tests in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    runs.push({ project, dropped: npx.dropped, npx: npx.outcomes, ...(npx.note ? { npxNote: npx.note } : {}), browser: new Map(), notBrowser: new Map(), suite: new Map() });
  }

  // A first look at the stand-ins: npx only.
  if (process.env.PUBLIC_EXAMPLES_NPX_ONLY) return report(runs);
  const { base, accountId, apiKey, location, rawKey } = await startBenchService(CLI, children);
  const api = new ServiceApi(base, accountId, apiKey);
  const agent = await startAgent(api, rawKey, work);
  for (const result of runs) {
    const { project } = result;
    const files = [...new Set([...result.npx.keys()].map((key) => key.split(' › ')[0]!))].sort();
    let started = performance.now();
    const stopServer = await projectWebServer(project);
    try {
      const browser = await browserChecks(api, location.slugName, project, files);
      result.browser = browser.outcomes;
      result.notBrowser = browser.notBrowser;
    } finally {
      await stopServer?.();
    }
    console.log(`${project.name}: ${files.length - result.notBrowser.size} browser checks in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    started = performance.now();
    const suite = await checkSuite(api, { apiKey, accountId }, location.slugName, project, work);
    result.suite = suiteFileKey(suite.outcomes, [...result.npx.keys()]);
    if (suite.note) result.suiteNote = suite.note;
    console.log(`${project.name}: check suite, ${suite.outcomes.size} tests in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
  for (const line of [...new Set(await agentWarnings(agent))].slice(0, 10)) console.log(`agent said: ${line.slice(0, 300)}`);
  report(runs);
}

try {
  await main();
} finally {
  for (const child of children.reverse()) await child.stop();
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
}
