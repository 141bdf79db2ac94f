/**
 * The Playwright suite runner against real parts, through the script harness
 * under each isolation backend this machine can run: a real service serving
 * the code bundle, engines installed from the npm registry, the fixture
 * project's dependencies installed with npm ci, Debian's Chromium, a target
 * on loopback.
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create as createTar } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import type { IsolationKind } from '../../src/agent/isolation/isolation.js';
import { EngineCache } from '../../src/agent/playwright-suite/engines.js';
import { entryProblem } from '../../src/agent/playwright-suite/code-bundle.js';
import { ServiceClient } from '../../src/agent/service-client.js';
import { Secret } from '../../src/config/secret.js';
import type { Job, Result } from '../../src/protocol/agent-api.js';
import type { PlaywrightSettings } from '../../src/protocol/playwright-settings.js';
import { SCRUB_MARKER } from '../../src/scrub/marker.js';
import { isolationProblem, processesOfUids, startTestHarness, type TestHarness, type UploadedArtifact } from '../support/script-harness.js';
import { startTestService, type TestService } from '../support/service.js';

const FIXTURE = join(import.meta.dirname, '../fixtures/playwright-suite');
const SECRET = 'suite-token-7c1e-secret';
const CHROMIUM = '/usr/bin/chromium';
// Kept between runs: an engine is installed once per machine, as on an agent.
const ENGINES = join(tmpdir(), 'outpost-test-engines');
/** Each kind has a block of 100 user ids; its harness takes the first 20. */
/**
 * Under the backend the images run: what differs between backends (identity,
 * what a job sees, how it ends) is tested per backend in multistep-runner,
 * isolation-backends and the hostile scripts; these runners are the same code
 * on either, and running them twice would double the suite's slowest files.
 */
const KINDS: { kind: IsolationKind; uidBase: number }[] = [
  { kind: 'namespaces', uidBase: 63400 },
];
const UID_COUNT = 20;
const UID_BLOCK = 100;

let service: TestService;
let client: ServiceClient;
let server: Server;
let targetUrl: string;
let work: string;
const engines = new EngineCache(ENGINES, process.env);
const bundles: Record<string, { id: string; sha256: string; size: number }> = {};

const probeRoot = await mkdtemp(join(tmpdir(), 'outpost-suite-probe-'));
// The trial's user must get through to its directory, as to any sandbox root.
await chmod(probeRoot, 0o711);
const problems = new Map<IsolationKind, string | undefined>();
for (const { kind } of KINDS) problems.set(kind, await isolationProblem(kind, join(probeRoot, kind)));
await rm(probeRoot, { recursive: true, force: true });

async function upload(name: string, file: string): Promise<void> {
  const bytes = await readFile(file);
  const response = await fetch(`${service.url}/v1/code-bundles`, {
    method: 'POST',
    headers: { authorization: `Bearer ${service.apiKey}`, 'x-service-account': service.accountId, 'content-type': 'application/gzip' },
    body: bytes,
  });
  if (response.status !== 201) throw new Error(`upload ${name}: ${response.status} ${await response.text()}`);
  bundles[name] = (await response.json()) as { id: string; sha256: string; size: number };
  expect(bundles[name].sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
}

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url === '/') response.setHeader('content-type', 'text/html').end('<html><head><title>fixture</title></head><body><h1>Outpost fixture</h1></body></html>');
    else if (request.url === '/status') response.end('green');
    else response.end('ok');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  targetUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  work = await mkdtemp(join(tmpdir(), 'outpost-suite-test-'));
  // As /tmp is for an agent's sandbox root: sandbox users reach it (Bun also reads it, when finding its cwd).
  await chmod(work, 0o755);
  service = await startTestService('pglite');
  const location = await service.privateLocation();
  client = new ServiceClient(service.url, new Secret(location.rawKey));

  await createTar({ gzip: true, file: join(work, 'suite.tar.gz'), cwd: FIXTURE, portable: true }, [
    'package.json',
    'package-lock.json',
    'playwright.config.js',
    'tests',
  ]);
  await upload('suite', join(work, 'suite.tar.gz'));

  // An entry that climbs out of the project directory.
  const climbing = join(work, 'climbing', 'inner');
  await mkdir(climbing, { recursive: true });
  await writeFile(join(work, 'climbing', 'outside.txt'), 'written outside the project');
  await createTar({ gzip: true, file: join(work, 'climbing.tar.gz'), cwd: climbing, preservePaths: true }, ['../outside.txt']);
  await upload('climbing', join(work, 'climbing.tar.gz'));

  // A link to a file of the machine.
  const linking = join(work, 'linking');
  await mkdir(linking);
  await copyFile(join(FIXTURE, 'package.json'), join(linking, 'package.json'));
  await symlink('/etc/passwd', join(linking, 'passwd'));
  await createTar({ gzip: true, file: join(work, 'linking.tar.gz'), cwd: linking }, ['package.json', 'passwd']);
  await upload('linking', join(work, 'linking.tar.gz'));
}, 120_000);

afterAll(async () => {
  server?.close();
  await client?.close();
  await service?.close();
  await rm(work, { recursive: true, force: true });
});

function job(settings: Partial<PlaywrightSettings> = {}, variables: Job['environmentVariables'] = []): Job {
  const bundle = bundles.suite!;
  return {
    jobId: randomUUID(),
    checkSessionId: randomUUID(),
    checkId: randomUUID(),
    checkType: 'PLAYWRIGHT',
    name: 'suite test',
    runLocation: 'test-location',
    runSource: 'TRIGGER_API',
    attempt: 1,
    leaseExpiresAt: new Date(Date.now() + 300_000).toISOString(),
    timeoutSeconds: 600,
    runtimeId: null,
    environmentVariables: [
      { key: 'TARGET_URL', value: targetUrl, secret: false },
      { key: 'API_TOKEN', value: SECRET, secret: true },
      ...variables,
    ],
    settings: {
      bundle: { ...bundle, url: `/v1/agent/code-bundles/${bundle.id}` },
      engine: 'NODE_24',
      installCommand: 'npm ci',
      testCommand: 'npx playwright test',
      pwProjects: [],
      pwTags: [],
      shouldFail: false,
      ...settings,
    },
  };
}

/** The check's own corner of the dependency cache, as the runner names it. */
function checkCache(dependencyCache: string, checkId: string): string {
  return join(dependencyCache, `check-${createHash('sha256').update(checkId).digest('hex').slice(0, 16)}`);
}

it('says ENGINE_INSTALL_FAILED when an engine cannot be installed', async () => {
  const broken = new EngineCache(join(work, 'broken-engines'), process.env, '/bin/false');
  await expect(broken.resolve('NODE_22')).rejects.toMatchObject({ code: 'ENGINE_INSTALL_FAILED' });
});

it('refuses bundle entries that climb out of the project or link out of it', () => {
  expect(entryProblem({ path: '/etc/cron.d/x', type: 'File', linkpath: '' })).toContain('absolute');
  expect(entryProblem({ path: 'a/../../x', type: 'File', linkpath: '' })).toContain('..');
  expect(entryProblem({ path: 'a/link', type: 'SymbolicLink', linkpath: '../../x' })).toContain('outside');
  expect(entryProblem({ path: 'a/link', type: 'SymbolicLink', linkpath: '../b' })).toBeUndefined();
  expect(entryProblem({ path: 'dev', type: 'CharacterDevice', linkpath: '' })).toContain('CharacterDevice');
});

describe.each(KINDS)('Playwright suite runner under $kind isolation', ({ kind, uidBase }) => {
  const problem = problems.get(kind);
  const name = problem ? `(cannot run here: ${problem})` : 'with a fresh user id per job';

  describe.skipIf(problem !== undefined)(name, () => {
    let t: TestHarness;
    let sandboxRoot: string;
    let dependencyCache: string;

    beforeAll(async () => {
      // Short: Chromium's singleton socket lives under the job's directory, and a socket path has at most 107 bytes.
      sandboxRoot = join(work, kind);
      dependencyCache = join(work, `${kind}-dependency-cache`);
      t = await startTestHarness({
        isolation: kind,
        sandboxRoot,
        uidBase,
        uidCount: UID_COUNT,
        memoryLimitBytes: 2765 * 1024 * 1024,
        chromiumPath: CHROMIUM,
        client,
        engines,
        sandbox: { enginesDirectory: ENGINES, dependencyCache },
        // What the agent's own environment passes on: the machine's CA bundle, for the registry.
        agentEnv: process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {},
      });
      expect(t.backend.kind).toBe(kind);
      expect(t.harness.checkTypes).toContain('PLAYWRIGHT');
    });

    afterAll(async () => {
      await t?.stop();
      // Nothing of any suite runs any more, whichever user id it had; and no job directory is left.
      expect(await processesOfUids(uidBase, UID_BLOCK)).toEqual([]);
      if (sandboxRoot) expect(await readdir(sandboxRoot)).toEqual([]);
    });

    async function run(suiteJob: Job, signal?: AbortSignal): Promise<{ result: Result; uploads: UploadedArtifact[] }> {
      const result = await t.run(suiteJob, signal);
      return { result, uploads: t.uploads.filter((upload) => upload.jobId === suiteJob.jobId) };
    }

    it('installs, runs every test on NODE_24 with Debian\'s Chromium, and reports each test, the report and the traces', async () => {
      const suiteJob = job();
      const { result, uploads } = await run(suiteJob);
      expect(result.error, JSON.stringify(result.logs.slice(-15))).toBeNull();
      expect(result).toMatchObject({ checkType: 'PLAYWRIGHT', hasErrors: false, hasFailures: false, isDegraded: false });
      const details = result.details as { engine: string; engineVersion: string; stats: object; tests: { title: string; project: string; status: string; durationMs: number }[] };
      expect(details.engine).toBe('NODE_24');
      expect(details.engineVersion).toBe('v24.13.1');
      expect(details.stats).toEqual({ expected: 3, unexpected: 0, flaky: 0, skipped: 0 });
      expect(details.tests.map(({ title, project, status }) => ({ title, project, status }))).toEqual(
        expect.arrayContaining([
          { title: 'health answers ok', project: 'api', status: 'passed' },
          { title: 'status is what the suite expects', project: 'api', status: 'passed' },
          { title: 'home page shows its title', project: 'chromium', status: 'passed' },
        ]),
      );
      const names = uploads.map((upload) => upload.name);
      expect(names[0]).toBe('report.json');
      expect(names.filter((uploaded) => uploaded.endsWith('.zip'))).toHaveLength(3);
      expect(names.some((uploaded) => uploaded.includes('chromium') && uploaded.endsWith('.png'))).toBe(true);
      expect(result.artifacts.map((artifact) => artifact.name)).toEqual(names);
      expect(result.artifacts.every((artifact) => artifact.uploaded)).toBe(true);
      // The secret was printed by a test and sent as a header: it is nowhere in what leaves.
      expect(JSON.stringify(result)).not.toContain(SECRET);
      for (const upload of uploads) expect(upload.bytes.includes(SECRET)).toBe(false);
      expect(uploads[0]!.bytes.toString('utf8')).toContain(`called with token ${SCRUB_MARKER}`);
      expect(result.logs.some((line) => line.message.includes('npm ci: done'))).toBe(true);
      expect(result.logs.some((line) => line.message.includes('3 passed'))).toBe(true);
      // The dependency cache was filled by the job, in the check's own corner, for the check's next run.
      expect(existsSync(join(checkCache(dependencyCache, suiteJob.checkId), 'npm'))).toBe(true);
    }, 300_000);

    it('runs on BUN_1_3: bun installs the dependencies, bunx runs the tests', async () => {
      const suiteJob = job({ engine: 'BUN_1_3', installCommand: 'bun install', testCommand: 'bunx playwright test', pwProjects: ['api'] });
      const { result } = await run(suiteJob);
      expect(result.error, JSON.stringify(result.logs.slice(-10))).toBeNull();
      expect(result.details).toMatchObject({ engine: 'BUN_1_3', engineVersion: '1.3.14', stats: { expected: 2, unexpected: 0 } });
      // Bun's cache is in the check's own corner too.
      expect(existsSync(join(checkCache(dependencyCache, suiteJob.checkId), 'bun'))).toBe(true);
    }, 300_000);

    it('runs only the tests with the tags asked for, and only the projects asked for', async () => {
      const tagged = await run(job({ pwTags: ['@browser'] }));
      expect(tagged.result.hasFailures).toBe(false);
      expect((tagged.result.details.tests as { title: string }[]).map((test) => test.title)).toEqual(['home page shows its title']);
      const projected = await run(job({ pwProjects: ['api'] }));
      expect((projected.result.details.tests as { project: string }[]).map((test) => test.project)).toEqual(['api', 'api']);
      const none = await run(job({ pwTags: ['@nothing-has-this'] }));
      expect(none.result).toMatchObject({ hasErrors: true, error: { code: 'SCRIPT_ERROR' } });
      expect(none.result.error!.message).toContain('pwProjects and pwTags');
    }, 300_000);

    it('fails the check when a test fails, naming the test and its error', async () => {
      const { result } = await run(job({ pwProjects: ['api'] }, [{ key: 'EXPECTED_STATUS', value: 'red', secret: false }]));
      expect(result).toMatchObject({ hasFailures: true, hasErrors: false, error: { code: 'SCRIPT_FAILED' } });
      expect(result.error!.message).toContain('1 of 2 tests failed');
      expect(result.error!.message).toContain('status is what the suite expects');
      const failed = (result.details.tests as { title: string; status: string; error?: string }[]).find((test) => test.status === 'failed');
      expect(failed?.error).toContain('red');
    }, 300_000);

    it('refuses a bundle whose SHA-256 is not the job\'s, before anything runs', async () => {
      const suiteJob = job();
      (suiteJob.settings as PlaywrightSettings).bundle.sha256 = '0'.repeat(64);
      const { result, uploads } = await run(suiteJob);
      expect(result).toMatchObject({ hasErrors: true, error: { code: 'CODE_BUNDLE_CHECKSUM_MISMATCH' } });
      expect(uploads).toEqual([]);
    }, 60_000);

    it('refuses a bundle with an entry climbing out of the project, or a link to the machine\'s files', async () => {
      for (const bundleName of ['climbing', 'linking']) {
        const bundle = bundles[bundleName]!;
        const { result } = await run(job({ bundle: { ...bundle, url: `/v1/agent/code-bundles/${bundle.id}` } }));
        expect(result).toMatchObject({ hasErrors: true, error: { code: 'CODE_BUNDLE_INVALID' } });
      }
      expect(existsSync(join(sandboxRoot, 'outside.txt'))).toBe(false);
    }, 60_000);

    it('never reads or uploads a file outside the job\'s directory that the suite points its report at', async () => {
      const forged = JSON.stringify({
        suites: [{ title: 'x.spec.js', specs: [{ title: 'forged', file: 'x.spec.js', tests: [{ projectName: 'p', status: 'expected', results: [{ status: 'passed', duration: 1, attachments: [{ name: 'trace', contentType: 'text/plain', path: '/etc/shadow' }] }] }] }] }],
        errors: [],
        stats: { expected: 1, unexpected: 0, flaky: 0, skipped: 0, duration: 1 },
      });
      // `; true` takes the arguments the agent appends.
      const pointing = await run(job({ installCommand: 'true', testCommand: `printf '%s' '${forged}' > "$HOME/report.json"; true` }));
      expect(pointing.result.error).toBeNull();
      expect(pointing.uploads.map((upload) => upload.name)).toEqual(['report.json']);
      const linked = await run(job({ installCommand: 'true', testCommand: 'ln -s /etc/shadow "$HOME/report.json"; true' }));
      expect(linked.result).toMatchObject({ hasErrors: true, error: { code: 'SCRIPT_ERROR' } });
      expect(linked.uploads).toEqual([]);
      const shadow = await readFile('/etc/shadow', 'utf8');
      const sent = JSON.stringify([pointing.result, linked.result]) + Buffer.concat(pointing.uploads.map((upload) => upload.bytes)).toString('utf8');
      expect(sent).not.toContain(shadow.split(':')[1] || 'root:');
    }, 60_000);

    it('runs on NODE_22 and NODE_26 as well', async () => {
      for (const [engine, version] of [['NODE_22', 'v22.23.3'], ['NODE_26', 'v26.10.0']] as const) {
        const { result } = await run(job({ engine, pwProjects: ['api'] }));
        expect(result.error, `${engine}: ${JSON.stringify(result.logs.slice(-5))}`).toBeNull();
        expect(result.details).toMatchObject({ engine, engineVersion: version, stats: { expected: 2 } });
      }
    }, 300_000);

    it('says so when the install command fails', async () => {
      const { result } = await run(job({ installCommand: 'echo "no registry today" >&2; exit 3' }));
      expect(result).toMatchObject({ hasErrors: true, error: { code: 'DEPENDENCY_INSTALL_FAILED' } });
      expect(result.error!.message).toContain('no registry today');
    }, 60_000);

    it('stops a run when it is cancelled, and reports it cancelled', async () => {
      const abort = new AbortController();
      setTimeout(() => abort.abort(), 3000);
      const started = Date.now();
      const { result } = await run(job({ installCommand: 'sleep 120' }), abort.signal);
      expect(Date.now() - started).toBeLessThan(30_000);
      expect(result).toMatchObject({ isCancelled: true, aborted: true, hasErrors: true });
      expect(await processesOfUids(uidBase, UID_BLOCK)).toEqual([]);
    }, 60_000);

    it('stops a run at the job\'s timeout', async () => {
      const { result } = await run({ ...job({ installCommand: 'sleep 120' }), timeoutSeconds: 4 });
      expect(result).toMatchObject({ hasErrors: true, error: { code: 'SCRIPT_TIMEOUT' } });
      expect(await processesOfUids(uidBase, UID_BLOCK)).toEqual([]);
    }, 60_000);

    it('runs a Chromium, Firefox and WebKit project at once: Chromium passes, the others fail naming their browser', async () => {
      const started = Date.now();
      const { result } = await run(job({ bundle: await fixtureBundle('browsers') }));
      const elapsed = Date.now() - started;
      // Not a launch timeout per project: a browser the agent does not have fails at once.
      expect(elapsed, JSON.stringify(result.logs.slice(-10))).toBeLessThan(60_000);
      expect(result).toMatchObject({ hasFailures: true, hasErrors: false, error: { code: 'SCRIPT_FAILED' } });
      expect(result.error!.message).toContain('2 of 3 tests failed');
      const tests = result.details.tests as { project: string; status: string; error?: string }[];
      expect(tests.map(({ project, status }) => ({ project, status }))).toEqual(
        expect.arrayContaining([
          { project: 'chromium', status: 'passed' },
          { project: 'firefox', status: 'failed' },
          { project: 'webkit', status: 'failed' },
        ]),
      );
      for (const [project, browser] of [['firefox', 'Firefox'], ['webkit', 'WebKit']]) {
        expect(tests.find((test) => test.project === project)?.error).toContain(
          `Outpost: project "${project}" needs ${browser}, which this agent does not have (set PLAYWRIGHT_BROWSERS_PATH to a directory where \`npx playwright install ${project}\` put it)`,
        );
      }
    }, 300_000);

    it('leaves a Firefox project alone when PLAYWRIGHT_BROWSERS_PATH holds the Firefox build of the suite\'s Playwright', async () => {
      // A stand-in for `npx playwright install firefox` of the fixture's Playwright (1.58.2: firefox-1509): it says who it is.
      const installed = join(work, 'operator-browsers');
      await mkdir(join(installed, 'firefox-1509', 'firefox'), { recursive: true });
      await writeFile(join(installed, 'firefox-1509', 'INSTALLATION_COMPLETE'), '');
      await writeFile(join(installed, 'firefox-1509', 'firefox', 'firefox'), '#!/bin/sh\necho "the operator\'s Firefox build ran" >&2\nexit 1\n', { mode: 0o755 });
      const operator = await startTestHarness({
        isolation: kind,
        sandboxRoot: join(work, `${kind}-pb`),
        // The block's ids after the main harness's: the block is checked for leftovers as a whole.
        uidBase: uidBase + UID_COUNT,
        uidCount: UID_COUNT,
        memoryLimitBytes: 2765 * 1024 * 1024,
        chromiumPath: CHROMIUM,
        client,
        sandbox: { enginesDirectory: ENGINES, dependencyCache, playwrightBrowsersPath: installed },
        agentEnv: process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {},
      });
      try {
        const result = await operator.run(job({ bundle: await fixtureBundle('browsers'), pwProjects: ['chromium', 'firefox'] }));
        const tests = result.details.tests as { project: string; status: string; error?: string }[];
        expect(tests.find((test) => test.project === 'chromium')?.status, JSON.stringify(result.logs.slice(-10))).toBe('passed');
        const firefox = tests.find((test) => test.project === 'firefox');
        expect(firefox?.error).toContain("the operator's Firefox build ran");
        expect(firefox?.error).not.toContain('Outpost: project');
      } finally {
        await operator.stop();
      }
      expect(await readdir(join(work, `${kind}-pb`))).toEqual([]);
    }, 300_000);

    it('records a video with the machine\'s ffmpeg when the project asks for one', async () => {
      const { result, uploads } = await run(job({ bundle: await fixtureBundle('video') }));
      expect(result.error, JSON.stringify(result.logs.slice(-10))).toBeNull();
      expect(result.details).toMatchObject({ stats: { expected: 1, unexpected: 0 } });
      const videos = uploads.filter((upload) => upload.name.endsWith('.webm'));
      expect(videos, JSON.stringify(uploads.map((upload) => upload.name))).toHaveLength(1);
      expect(videos[0]!.contentType).toBe('video/webm');
      // WebM's EBML header: a real video, not an empty file.
      expect(videos[0]!.bytes.subarray(0, 4).toString('hex')).toBe('1a45dfa3');
      expect(videos[0]!.bytes.length).toBeGreaterThan(1000);
    }, 300_000);

    it('uploads the HTML report the project asks for as one zip, with what the tests printed scrubbed inside it', async () => {
      const { result, uploads } = await run(job({ bundle: await fixtureBundle('html-report') }));
      expect(result.error, JSON.stringify(result.logs.slice(-10))).toBeNull();
      const report = uploads.find((upload) => upload.name === 'playwright-report.zip');
      expect(report, JSON.stringify(uploads.map((upload) => upload.name))).toBeDefined();
      expect(report!.contentType).toBe('application/zip');
      expect(result.artifacts.map((artifact) => artifact.name)).toContain('playwright-report.zip');
      const entries = await unzip(report!.bytes);
      const page = entries.get('index.html')?.toString('latin1');
      expect(page).toBeDefined();
      // The report's data, embedded in the page as a base64 zip, and the trace in data/: each read entry by entry.
      const embedded = /data:application\/zip;base64,([^<]*)<\/script>/.exec(page!)?.[1];
      expect(embedded).toBeTruthy();
      const data = [...(await unzip(Buffer.from(embedded!, 'base64'))).values()].map((entry) => entry.toString('utf8')).join('\n');
      expect(data).toContain(`called with token ${SCRUB_MARKER}`);
      expect(data).not.toContain(SECRET);
      const traces = [...entries].filter(([name]) => name.startsWith('data/') && name.endsWith('.zip'));
      expect(traces.length).toBeGreaterThan(0);
      for (const [, trace] of traces) {
        const text = [...(await unzip(trace)).values()].map((entry) => entry.toString('utf8')).join('\n');
        expect(text).not.toContain(SECRET);
      }
    }, 300_000);

    it('says what npm said when npm ci finds no lockfile, and uploads npm\'s debug log', async () => {
      const { result, uploads } = await run(job({ bundle: await fixtureBundle('no-lockfile') }));
      expect(result).toMatchObject({ hasErrors: true, error: { code: 'DEPENDENCY_INSTALL_FAILED' } });
      expect(result.error!.message).toContain('The `npm ci` command can only install with an existing package-lock.json');
      const log = uploads.find((upload) => upload.name === 'npm-debug.log');
      expect(log, JSON.stringify(uploads.map((upload) => upload.name))).toBeDefined();
      expect(log!.bytes.toString('utf8')).toContain('EUSAGE');
      expect(result.artifacts.map((artifact) => artifact.name)).toEqual(['npm-debug.log']);
    }, 120_000);
  });
});

/**
 * A fixture project's bundle, uploaded once: the fixture's package.json and
 * lockfile with the config and tests of `browsers/`, `video/` or
 * `html-report/`; `no-lockfile` is the main project without its lockfile.
 */
async function fixtureBundle(name: string): Promise<PlaywrightSettings['bundle']> {
  if (!bundles[name]) {
    const stage = join(work, `stage-${name}`);
    await mkdir(stage);
    await copyFile(join(FIXTURE, 'package.json'), join(stage, 'package.json'));
    if (name === 'no-lockfile') {
      await copyFile(join(FIXTURE, 'playwright.config.js'), join(stage, 'playwright.config.js'));
      await cp(join(FIXTURE, 'tests'), join(stage, 'tests'), { recursive: true });
    } else {
      await copyFile(join(FIXTURE, 'package-lock.json'), join(stage, 'package-lock.json'));
      await cp(join(FIXTURE, name), stage, { recursive: true });
    }
    await createTar({ gzip: true, file: join(work, `${name}.tar.gz`), cwd: stage, portable: true }, await readdir(stage));
    await upload(name, join(work, `${name}.tar.gz`));
  }
  const bundle = bundles[name]!;
  return { ...bundle, url: `/v1/agent/code-bundles/${bundle.id}` };
}

/** Every entry of a zip, by name. */
async function unzip(bytes: Buffer): Promise<Map<string, Buffer>> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (error, opened) => (error ? reject(error) : resolve(opened))),
  );
  const entries = new Map<string, Buffer>();
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      if (entry.fileName.endsWith('/')) return zip.readEntry();
      zip.openReadStream(entry, (error, stream) => {
        if (error) return reject(error);
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('error', reject);
        stream.on('end', () => {
          entries.set(entry.fileName, Buffer.concat(chunks));
          zip.readEntry();
        });
      });
    });
    zip.on('end', () => resolve());
    zip.on('error', reject);
    zip.readEntry();
  });
  return entries;
}
