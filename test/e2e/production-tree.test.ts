import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { chmodSync, chownSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/agent.js';
import { loadCompose } from '../support/compose-file.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { copyOf, entryCommand, envOf, finalStage, parseDockerfile, type Instruction } from '../support/dockerfile.js';
import { startTestService, type TestService } from '../support/service.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** A port free on loopback right now, for the agent's health server. */
function freePort(): Promise<number> {
  return new Promise((done) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => done(port));
    });
  });
}

/** Commands of a RUN this test carries out; apt-get, useradd and the like come from the machine. */
const CARRIED_OUT = /^(npm ci|npm uninstall|node dist\/)/;

/**
 * Builds an image's /app the way its Dockerfile's last stage does, in a
 * temporary directory instead of a container: the same COPYs (the build
 * stage's output is this checkout's dist, which `npm test` has just built;
 * another stage's, such as the runtimes', is built the same way first) and
 * the same npm and outpost commands. Debian packages and the user come from
 * the machine; `npm cache clean` is left out, as it would empty this
 * machine's cache rather than the image's.
 */
function buildProductionTree(dockerfile: string): {
  app: string;
  /** node's arguments for a command of the CLI, as the image's ENTRYPOINT gives them. */
  cliArgs: (command: string) => string[];
  env: Record<string, string>;
  uid: number | undefined;
  scratch: string[];
} {
  const instructions = parseDockerfile(readFileSync(resolve(ROOT, dockerfile), 'utf8'));
  const scratch: string[] = [];
  const built = new Map<string, { dir: string; workdir: string }>();
  const buildStage = (stage: Instruction[]): { dir: string; env: Record<string, string>; uid: number | undefined; workdir: string } => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-image-'));
    scratch.push(dir);
    // As in the image: /app is root's, and readable by the user the program runs as.
    chmodSync(dir, 0o755);
    const env: Record<string, string> = {};
    let uid: number | undefined;
    let workdir = '/';
    for (const instruction of stage) {
      if (instruction.keyword === 'WORKDIR') {
        workdir = instruction.args;
      } else if (instruction.keyword === 'COPY') {
        const { from, sources, destination } = copyOf(instruction);
        for (const source of sources) {
          const origin = from === undefined ? resolve(ROOT, source) : stageOutput(from, source);
          const name = source.split('/').at(-1)!;
          const target = destination.endsWith('/') || destination === './' ? join(dir, name) : join(dir, destination);
          cpSync(origin, target, { recursive: true, filter: (path) => !path.includes('node_modules') || from !== undefined });
        }
      } else if (instruction.keyword === 'RUN') {
        const user = /useradd --uid (\d+)/.exec(instruction.args);
        if (user) uid = Number(user[1]);
        for (const command of instruction.args.split('&&').map((part) => part.trim())) {
          if (CARRIED_OUT.test(command)) {
            const expanded = command.replace('${RUNTIMES}', '2026.04');
            execFileSync('sh', ['-c', expanded], { cwd: dir, stdio: 'pipe', timeout: 300_000 });
          }
        }
      } else if (instruction.keyword === 'ENV') {
        Object.assign(env, envOf(instruction));
      }
    }
    return { dir, env, uid, workdir };
  };
  /** Where a path of another stage is here: the build stage's is this checkout's, any other's is built on first use. */
  const stageOutput = (from: string, source: string): string => {
    if (from === 'build') return resolve(ROOT, source.replace(/^\/src\//, ''));
    if (!built.has(from)) {
      const stage = buildStage(instructions.filter((instruction) => instruction.stageName === from));
      built.set(from, { dir: stage.dir, workdir: stage.workdir });
    }
    const { dir, workdir } = built.get(from)!;
    return join(dir, source.slice(workdir.length + 1));
  };
  const { dir, env, uid, workdir } = buildStage(finalStage(instructions));
  // What the image's ENTRYPOINT starts, with node's options, found in the tree built here instead of the image's WORKDIR.
  const { nodeArgs, script } = entryCommand(instructions);
  const entry = join(dir, script.replace(new RegExp(`^${workdir}/`), ''));
  return { app: dir, cliArgs: (command) => [...nodeArgs, entry, command], env, uid, scratch: scratch.filter((path) => path !== dir) };
}

describe.each([
  ['Dockerfile.uptime', 'uptime', ['API', 'DNS', 'ICMP', 'TCP', 'URL']],
  ['Dockerfile', 'full', ['API', 'BROWSER', 'DNS', 'ICMP', 'MULTI_STEP', 'PLAYWRIGHT', 'TCP', 'URL']],
])('the production tree of %s', (dockerfile, mode, checkTypes) => {
  let service: TestService;
  let agent: ChildProcess | undefined;
  let app: string | undefined;
  let sandboxDir: string | undefined;
  let built: ReturnType<typeof buildProductionTree> | undefined;
  let location: Awaited<ReturnType<TestService['privateLocation']>>;
  const stopped: ChildProcess[] = [];
  afterAll(async () => {
    for (const child of [agent, ...stopped]) {
      if (child?.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await new Promise((done) => child.once('exit', done));
      }
    }
    await service?.close();
    for (const dir of [app, sandboxDir, ...(built?.scratch ?? [])]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`installs the agent's production dependencies only, and its agent starts and says hello in ${mode} mode`, async () => {
    built = buildProductionTree(dockerfile);
    app = built.app;
    const has = (name: string) => existsSync(join(app!, 'node_modules', name, 'package.json'));
    expect(has('vitest')).toBe(false);
    expect(has('bullmq')).toBe(true);
    // Without the service's dependencies, nor the error-reporting SDK's build tooling: the agent below starts without them.
    // A listed package stays only as a dependency of one the agent keeps (secure-json-parse: pino-pretty's).
    const serviceOnly = readFileSync(resolve(ROOT, 'deploy/service-only-packages.txt'), 'utf8').trim().split('\n');
    const kept = readdirSync(join(app, 'node_modules')).flatMap((entry) =>
      entry.startsWith('@') ? readdirSync(join(app!, 'node_modules', entry)).map((name) => `${entry}/${name}`) : [entry],
    );
    const needed = new Set(
      kept
        .filter((name) => !serviceOnly.includes(name) && has(name))
        .flatMap((name) => Object.keys((JSON.parse(readFileSync(join(app!, 'node_modules', name, 'package.json'), 'utf8')) as { dependencies?: object }).dependencies ?? {})),
    );
    expect(serviceOnly.filter((name) => has(name) && !needed.has(name))).toEqual([]);
    for (const name of ['fastify', '@electric-sql/pglite', 'nodemailer', 'aedes', 'pg', '@fastify/swagger']) expect(has(name), name).toBe(false);
    for (const tool of ['sentry', 'oxc-parser', 'magic-string']) expect(has(tool), tool).toBe(false);
    expect(has('@sentry/core')).toBe(true);
    expect(has('@sentry/node')).toBe(false);

    service = await startTestService('pglite');
    location = await service.privateLocation();
    const port = await freePort();
    // As the image runs it: as its USER, which owns nothing of /app.
    const asUser = built.uid !== undefined && process.getuid?.() === 0 ? built.uid : undefined;
    sandboxDir = mkdtempSync(join(tmpdir(), 'outpost-image-sandboxes-'));
    if (asUser !== undefined) chownSync(sandboxDir, asUser, asUser);
    const [command, args] = asUser === undefined
      ? [process.execPath, built.cliArgs('agent')]
      : ['/usr/bin/setpriv', [`--reuid=${asUser}`, `--regid=${asUser}`, '--clear-groups', '--', process.execPath, ...built.cliArgs('agent')]];
    agent = spawn(command, args, {
      cwd: app,
      env: {
        PATH: process.env.PATH,
        HOME: sandboxDir,
        ...built.env,
        // The image's own Node is 24; options it sets must also start this machine's.
        API_URL: service.url,
        API_KEY: location.rawKey,
        AGENT_HEALTH_PORT: String(port),
        LOG_LEVEL: 'INFO',
        SANDBOX_WARM: 'false',
        SANDBOX_DIR: sandboxDir,
        ENGINES_DIR: join(sandboxDir, 'engines'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    agent.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    agent.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await eventually(
      async () => ((await fetch(`http://127.0.0.1:${port}/-/readiness`).catch(() => undefined))?.status === 200 ? true : undefined),
      60_000,
      'the agent ready',
    ).catch((error: Error) => {
      throw new Error(`${error.message}; the agent said:\n${output}`);
    });
    const [running] = (await service.api('GET', `/v1/private-locations/${location.id}`)).body.runningAgents;
    expect(running.mode).toBe(mode);
    const [hello] = await service.service.db.query<{ check_types: string[] }>(
      'SELECT check_types FROM agents WHERE private_location_id = $1',
      [location.id],
    );
    expect([...hello!.check_types].sort()).toEqual(checkTypes);
    // It says how its script jobs are isolated, at start and on /health: the full image's non-root user
    // gets namespaces of its own; the uptime image runs no scripts and sets up no isolation at all.
    const health = (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as { isolation?: { backend: string } };
    if (mode === 'full') {
      expect(output).toMatch(/"isolation":"namespaces".*script isolation: /);
      expect(health.isolation?.backend).toBe('namespaces');
    } else {
      expect(output).not.toContain('script isolation');
      expect(health.isolation).toBeUndefined();
    }
  }, 600_000);

  // The SDK is loaded at the first error event only: this is where a tree without it would show.
  it('reports an error event to the service with the SDK of its own production dependencies', async () => {
    expect(built, 'the tree of the test before').toBeDefined();
    const child = spawn(process.execPath, built!.cliArgs('agent'), {
      cwd: app,
      env: {
        PATH: process.env.PATH,
        ...built!.env,
        API_URL: service.url,
        API_KEY: location.rawKey,
        AGENT_HEALTH_PORT: String(await freePort()),
        // Nothing listens there: the agent logs an error at once and keeps trying.
        // The uptime image's agent queues in Redis only when told to.
        REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
        UPTIME_QUEUE: 'redis',
        LOG_LEVEL: 'WARN',
      },
      stdio: 'ignore',
    });
    stopped.push(child);
    const [event] = await eventually(async () => {
      const answer = await service.api('GET', `/v1/private-locations/${location.id}/error-events`);
      return answer.body.length > 0 ? answer.body : undefined;
    }, 30_000, 'an error event at the service');
    expect(event.message).toMatch(/^Redis at <address> is not reachable/);
  }, 60_000);
});

describe('the production tree of Dockerfile.service', () => {
  let built: ReturnType<typeof buildProductionTree> | undefined;
  let database: TestDatabase | undefined;
  let child: ChildProcess | undefined;
  let artifacts: string | undefined;
  afterAll(async () => {
    if (child?.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((done) => child!.once('exit', done));
    }
    await database?.drop();
    for (const dir of [built?.app, artifacts, ...(built?.scratch ?? [])]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('starts on PostgreSQL with compose.yaml\'s settings, answers /openapi.json, and lets compose.yaml\'s agent in', async () => {
    built = buildProductionTree('Dockerfile.service');
    const has = (name: string) => existsSync(join(built!.app, 'node_modules', name, 'package.json'));
    expect(has('vitest')).toBe(false);
    for (const name of ['fastify', 'pg', '@fastify/swagger']) expect(has(name), name).toBe(true);

    database = await createTestDatabase('postgres');
    const compose = loadCompose();
    const settings = compose.services.service.environment as Record<string, string>;
    const port = await freePort();
    const asUser = built.uid !== undefined && process.getuid?.() === 0 ? built.uid : undefined;
    artifacts = mkdtempSync(join(tmpdir(), 'outpost-image-artifacts-'));
    if (asUser !== undefined) chownSync(artifacts, asUser, asUser);
    const cli = [process.execPath, ...built.cliArgs('service')];
    const [command, ...args] = asUser === undefined ? cli : ['/usr/bin/setpriv', `--reuid=${asUser}`, `--regid=${asUser}`, '--clear-groups', '--', ...cli];
    child = spawn(command!, args, {
      cwd: built.app,
      env: {
        PATH: process.env.PATH,
        ...built.env,
        ...settings,
        // This machine's PostgreSQL and a free loopback port instead of compose's network.
        DATABASE_URL: database.url,
        HOST: '127.0.0.1',
        PORT: String(port),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        ARTIFACTS_DIR: artifacts,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const base = `http://127.0.0.1:${port}`;
    await eventually(
      async () => ((await fetch(`${base}/-/readiness`).catch(() => undefined))?.status === 200 ? true : undefined),
      60_000,
      'the service ready',
    ).catch((error: Error) => {
      throw new Error(`${error.message}; the service said:\n${output}`);
    });

    const openapi = await fetch(`${base}/openapi.json`);
    expect(openapi.status).toBe(200);
    const document = (await openapi.json()) as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toMatch(/^3\.1\./);
    for (const path of ['/v1/checks', '/v1/private-locations', '/v1/agent/hello']) expect(Object.keys(document.paths), path).toContain(path);

    // The account, its key, the location and the location's key compose.yaml asks for exist: its agent gets in.
    const agentKey = (compose.services.agent.environment as Record<string, string>).API_KEY!;
    const hello = await fetch(`${base}/v1/agent/hello`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agentKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agentId: randomUUID(), version: '0.1.0', hostname: 'compose-agent', mode: 'uptime', checkTypes: ['URL'], runtimes: [], capacity: { uptime: 10, script: 0 } }),
    });
    expect(hello.status, await hello.clone().text()).toBe(200);
    const locations = await fetch(`${base}/v1/private-locations`, {
      headers: { authorization: `Bearer ${settings.BOOTSTRAP_API_KEY}`, 'x-service-account': settings.BOOTSTRAP_ACCOUNT_ID! },
    });
    expect(locations.status).toBe(200);
    const [location] = (await locations.json()) as { slugName: string; agentCount: number }[];
    expect(location).toMatchObject({ slugName: settings.BOOTSTRAP_PRIVATE_LOCATION, agentCount: 1 });
  }, 600_000);
});
