import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { chmodSync, chownSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/agent.js';
import { copyOf, finalStage, parseDockerfile } from '../support/dockerfile.js';
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

/**
 * Builds an image's /app the way its Dockerfile's last stage does, in a
 * temporary directory instead of a container: the same COPYs (the build
 * stage's output is this checkout's dist, which `npm test` has just built)
 * and the same npm and outpost commands. Debian packages and the user come
 * from the machine; `npm cache clean` is left out, as it would empty this
 * machine's cache rather than the image's.
 */
function buildProductionTree(dockerfile: string): { app: string; env: Record<string, string>; uid: number | undefined } {
  const app = mkdtempSync(join(tmpdir(), 'outpost-image-'));
  // As in the image: /app is root's, and readable by the user the agent runs as.
  chmodSync(app, 0o755);
  const env: Record<string, string> = {};
  let uid: number | undefined;
  for (const instruction of finalStage(parseDockerfile(readFileSync(resolve(ROOT, dockerfile), 'utf8')))) {
    if (instruction.keyword === 'COPY') {
      const { sources, destination } = copyOf(instruction);
      for (const source of sources) {
        const from = copyOf(instruction).from ? resolve(ROOT, 'dist') : resolve(ROOT, source);
        const name = source.split('/').at(-1)!;
        const target = destination.endsWith('/') || destination === './' ? join(app, name) : join(app, destination);
        cpSync(from, target, { recursive: true, filter: (path) => !path.includes('node_modules') });
      }
    } else if (instruction.keyword === 'RUN') {
      const user = /useradd --uid (\d+)/.exec(instruction.args);
      if (user) uid = Number(user[1]);
      for (const command of instruction.args.split('&&').map((part) => part.trim())) {
        if (command.startsWith('npm ci') || command.startsWith('node dist/cli.js')) {
          const expanded = command.replace('${RUNTIMES}', '2026.04');
          execFileSync('sh', ['-c', expanded], { cwd: app, stdio: 'pipe', timeout: 300_000 });
        }
      }
    } else if (instruction.keyword === 'ENV') {
      for (const [, key, value] of instruction.args.matchAll(/(\w+)=(\S+)/g)) env[key!] = value!;
    }
  }
  return { app, env, uid };
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
    if (app) rmSync(app, { recursive: true, force: true });
    if (sandboxDir) rmSync(sandboxDir, { recursive: true, force: true });
  });

  it(`installs production dependencies only, and its agent starts and says hello in ${mode} mode`, async () => {
    built = buildProductionTree(dockerfile);
    app = built.app;
    const installed = JSON.parse(execFileSync('npm', ['ls', '--omit=dev', '--depth=0', '--json'], { cwd: app, encoding: 'utf8' })) as {
      dependencies: Record<string, unknown>;
    };
    expect(Object.keys(installed.dependencies)).not.toContain('vitest');
    expect(Object.keys(installed.dependencies)).toContain('bullmq');

    service = await startTestService('pglite');
    location = await service.privateLocation();
    const port = await freePort();
    // As the image runs it: as its USER, which owns nothing of /app.
    const asUser = built.uid !== undefined && process.getuid?.() === 0 ? built.uid : undefined;
    sandboxDir = mkdtempSync(join(tmpdir(), 'outpost-image-sandboxes-'));
    if (asUser !== undefined) chownSync(sandboxDir, asUser, asUser);
    const [command, args] = asUser === undefined
      ? [process.execPath, [join(app, 'dist/cli.js'), 'agent']]
      : ['/usr/bin/setpriv', [`--reuid=${asUser}`, `--regid=${asUser}`, '--clear-groups', '--', process.execPath, join(app, 'dist/cli.js'), 'agent']];
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
    const child = spawn(process.execPath, [join(app!, 'dist/cli.js'), 'agent'], {
      cwd: app,
      env: {
        PATH: process.env.PATH,
        ...built!.env,
        API_URL: service.url,
        API_KEY: location.rawKey,
        AGENT_HEALTH_PORT: String(await freePort()),
        // Nothing listens there: the agent logs an error at once and keeps trying.
        REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
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
