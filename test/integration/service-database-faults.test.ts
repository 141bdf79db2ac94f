/**
 * The service keeps serving through PostgreSQL going away: backends killed
 * under load, the port refusing connections for a while, a database that is
 * not there yet at start. Real PostgreSQL, through a loopback proxy the test
 * cuts; the service in-process (an unhandled 'error' event would fail the
 * run) and as `node dist/cli.js service`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadServiceConfig } from '../../src/service/config.js';
import { startService, type RunningService } from '../../src/service/service.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { captureLogger } from '../support/logs.js';
import { closedPort } from '../support/target.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist/cli.js');
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PG_PORT = Number(new URL(ADMIN_URL).port || 5432);

const cleanup: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first (npm test does)`);
});

async function eventually<T>(probe: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

async function database(): Promise<TestDatabase & { url: string; name: string }> {
  const created = await createTestDatabase('postgres');
  cleanup.push(() => created.drop());
  const url = created.url!;
  return { ...created, url, name: new URL(url).pathname.slice(1) };
}

async function proxy(): Promise<TcpProxy> {
  const started = await startTcpProxy(PG_PORT, new URL(ADMIN_URL).hostname);
  cleanup.push(() => started.close());
  return started;
}

function throughProxy(url: string, port: number): string {
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);
  return proxied.toString();
}

/** Kills every backend serving `name` but the admin's own; how many it killed. */
async function terminateBackends(name: string): Promise<number> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    const [row] = (
      await admin.query<{ killed: number }>(
        'SELECT count(pg_terminate_backend(pid))::int AS killed FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [name],
      )
    ).rows;
    return row?.killed ?? 0;
  } finally {
    await admin.end();
  }
}

interface Answer {
  status: number;
  body: any;
}

function client(url: string, accountId: string, apiKey: string) {
  return async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${apiKey}`,
        'x-service-account': accountId,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: response.status, body: parsed };
  };
}

/** The service in this process, on `databaseUrl`, with its log lines collected. */
async function inProcessService(databaseUrl: string) {
  const accountId = randomUUID();
  const apiKey = `test_${randomUUID()}`;
  const artifactsDir = await mkdtemp(join(tmpdir(), 'outpost-test-artifacts-'));
  const config = loadServiceConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    ARTIFACTS_DIR: artifactsDir,
    BOOTSTRAP_ACCOUNT_ID: accountId,
    BOOTSTRAP_API_KEY: apiKey,
    RATE_LIMIT_MAX: '1000000',
  });
  config.tickMs = 200;
  const { logger, logs } = captureLogger('faults');
  const service: RunningService = await startService(config, { logger });
  cleanup.push(async () => {
    await service.close();
    await rm(artifactsDir, { recursive: true, force: true });
  });
  return { service, logs, api: client(service.url, accountId, apiKey), raw: client(service.url, '', '') };
}

/** `node dist/cli.js service`, its output collected. */
function cliService(env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, [CLI, 'service'], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'INFO', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  cleanup.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  return {
    child,
    exited,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
  };
}

const expectShapeA503 = (answer: Answer) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(503);
  expect(Object.keys(answer.body).sort()).toEqual(['error', 'message', 'statusCode']);
  expect(answer.body.statusCode).toBe(503);
  expect(answer.body.error).toBe('Service Unavailable');
};

describe('the service when PostgreSQL kills its backends', () => {
  it('stays up under load, answers 503 at worst while it happens, and works again at once', async () => {
    const db = await database();
    const { api, raw, logs } = await inProcessService(db.url);
    const location = await api('POST', '/v1/private-locations', { name: 'faults', slugName: 'faults' });
    expect(location.status).toBe(201);
    const check = await api('POST', '/v1/checks/url', {
      name: 'triggered',
      activated: false,
      privateLocations: ['faults'],
      request: { url: 'http://127.0.0.1:9/' },
    });
    expect(check.status).toBe(201);

    const answers: Answer[] = [];
    let loading = true;
    const load = async () => {
      while (loading) {
        const batch = await Promise.all([
          api('GET', '/v1/checks'),
          // Each trigger starts a run in a transaction: session, results, jobs.
          api('POST', '/v2/check-sessions/trigger', { target: { checkId: [check.body.id] } }),
          api('POST', '/v2/check-sessions/trigger', { target: { checkId: [check.body.id] } }),
          raw('GET', '/health'),
        ]);
        answers.push(...batch);
      }
    };
    const workers = [load(), load(), load()];
    let killed = 0;
    for (let round = 0; round < 4; round += 1) {
      await new Promise((done) => setTimeout(done, 250));
      killed += await terminateBackends(db.name);
    }
    loading = false;
    await Promise.all(workers);

    expect(killed).toBeGreaterThan(0);
    expect(answers.length).toBeGreaterThan(10);
    for (const answer of answers) {
      expect([200, 201, 503], JSON.stringify(answer.body)).toContain(answer.status);
      if (answer.status === 503) expectShapeA503(answer);
    }
    expect((await api('GET', '/v1/checks')).status).toBe(200);
    expect((await api('POST', '/v2/check-sessions/trigger', { target: { checkId: [check.body.id] } })).status).toBe(201);
    expect((await raw('GET', '/-/readiness')).status).toBe(200);
    expect(logs.join('')).not.toContain('"level":50');
  });

  it('as `outpost service`, is still alive and answering after it', async () => {
    const db = await database();
    const port = await closedPort();
    const accountId = randomUUID();
    const apiKey = `test_${randomUUID()}`;
    const cli = cliService({
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: db.url,
      BOOTSTRAP_ACCOUNT_ID: accountId,
      BOOTSTRAP_API_KEY: apiKey,
    });
    const url = `http://127.0.0.1:${port}`;
    const api = client(url, accountId, apiKey);
    await eventually(async () => ((await api('GET', '/-/readiness')).status === 200 ? true : undefined), 20_000, 'the service ready');

    let loading = true;
    const statuses: number[] = [];
    const load = async () => {
      while (loading) {
        const batch = await Promise.all([
          api('GET', '/v1/checks'),
          api('POST', '/v1/private-locations', { name: `l-${randomUUID().slice(0, 8)}`, slugName: `l-${randomUUID().slice(0, 8)}` }),
          api('GET', '/health'),
        ]);
        statuses.push(...batch.map((answer) => answer.status));
      }
    };
    const workers = [load(), load()];
    for (let round = 0; round < 3; round += 1) {
      await new Promise((done) => setTimeout(done, 300));
      await terminateBackends(db.name);
    }
    // Idle pooled clients die too.
    await new Promise((done) => setTimeout(done, 300));
    loading = false;
    await Promise.all(workers);
    await terminateBackends(db.name);
    await new Promise((done) => setTimeout(done, 200));

    expect(cli.child.exitCode, cli.stderr).toBeNull();
    // Nothing failed for want of handling: no 500, and 503 only for what the database did.
    expect(statuses.every((status) => status < 500 || status === 503), statuses.join(',')).toBe(true);
    expect((await api('GET', '/v1/checks')).status).toBe(200);
    expect((await api('GET', '/-/readiness')).status).toBe(200);
    expect(cli.stderr).not.toContain("Emitted 'error' event");
    expect(cli.child.exitCode).toBeNull();
  });
});

describe('the service when PostgreSQL refuses connections for a while', () => {
  it('is not ready and answers 503 in shape A, tells the outage once, and recovers alone', async () => {
    const db = await database();
    const tcp = await proxy();
    const { api, raw, logs } = await inProcessService(throughProxy(db.url, tcp.port));
    expect((await raw('GET', '/-/readiness')).status).toBe(200);
    expect((await api('POST', '/v1/private-locations', { name: 'before', slugName: 'before' })).status).toBe(201);

    await tcp.refuse();
    const refusedAt = Date.now();
    const readiness = await raw('GET', '/-/readiness');
    expect(readiness.status).toBe(503);
    expect(readiness.body.status).toBe('database-unreachable');
    expect(readiness.body.reason).toMatch(/^The database is unreachable: .*ECONNREFUSED/);
    expect((await raw('GET', '/-/liveness')).status).toBe(200);
    const health = await raw('GET', '/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'degraded', database: { kind: 'postgres', reachable: false } });
    expect(health.body.database.error).toContain('ECONNREFUSED');

    const read = await api('GET', '/v1/checks');
    expectShapeA503(read);
    expect(read.body.message).toBe('The database is unreachable; try again shortly');
    // A write, whose other errors take shape B, answers in shape A too.
    const write = await api('POST', '/v1/private-locations', { name: 'during', slugName: 'during' });
    expectShapeA503(write);
    expect(write.body.message).toBe('The database is unreachable; try again shortly');

    // The scheduler ticks (every 200 ms) through the outage.
    const left = 5000 - (Date.now() - refusedAt);
    if (left > 0) await new Promise((done) => setTimeout(done, left));
    await tcp.open();
    const openedAt = Date.now();
    await eventually(async () => ((await raw('GET', '/-/readiness')).status === 200 ? true : undefined), 5000, 'ready again');
    expect(Date.now() - openedAt).toBeLessThan(5000);
    expect((await api('POST', '/v1/private-locations', { name: 'after', slugName: 'after' })).status).toBe(201);
    expect((await api('GET', '/v1/private-locations')).body.map((location: { slugName: string }) => location.slugName).sort()).toEqual([
      'after',
      'before',
    ]);

    const lines = logs.map((line) => JSON.parse(line) as { level: number; msg: string });
    const down = lines.filter((line) => line.msg.startsWith('the database is unreachable'));
    const back = lines.filter((line) => line.msg.startsWith('the database is reachable again'));
    expect(down, logs.join('')).toHaveLength(1);
    expect(down[0]!.msg).toContain('ECONNREFUSED');
    expect(back, logs.join('')).toHaveLength(1);
    expect(back[0]!.msg).toMatch(/^the database is reachable again after \d+ s; \d+ rounds? failed$/);
    // Nothing else at error level: no line per tick, per round or per request.
    expect(lines.filter((line) => line.level >= 50), logs.join('')).toEqual([]);
  });
});

describe('the service starting without its database', () => {
  it('waits for it, saying so once, and comes up when it answers', async () => {
    const db = await database();
    const tcp = await proxy();
    await tcp.refuse();
    const port = await closedPort();
    const cli = cliService({ PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: throughProxy(db.url, tcp.port) });
    await eventually(async () => (cli.stdout.includes('waiting for the database') ? true : undefined), 10_000, 'the waiting line');
    expect(cli.stdout).toContain(`waiting for the database at 127.0.0.1:${tcp.port} (ECONNREFUSED)`);
    await tcp.open();
    const ready = await eventually(
      async () => {
        const answer = await fetch(`http://127.0.0.1:${port}/-/readiness`);
        return answer.status === 200 ? answer : undefined;
      },
      15_000,
      'the service ready',
    );
    expect(ready.status).toBe(200);
    expect(cli.stdout.match(/waiting for the database/g)).toHaveLength(1);
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  });

  it('gives up after DATABASE_CONNECT_TIMEOUT_SECONDS with one clear line, exit 1', async () => {
    const tcp = await proxy();
    await tcp.refuse();
    const port = await closedPort();
    const url = `postgres://postgres@127.0.0.1:${tcp.port}/outpost`;
    const started = Date.now();
    const cli = cliService({ PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: url, DATABASE_CONNECT_TIMEOUT_SECONDS: '1' });
    expect(await cli.exited).toBe(1);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(cli.stderr.trim()).toMatch(
      new RegExp(`^The database at 127\\.0\\.0\\.1:${tcp.port} is unreachable \\(ECONNREFUSED\\) after waiting \\d+ s; check DATABASE_URL`),
    );
    expect(cli.stderr.trim().split('\n')).toHaveLength(1);
    expect(cli.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('the service that PostgreSQL will not have', () => {
  it('says in one line that the database does not exist, without waiting, exit 1', async () => {
    const port = await closedPort();
    const url = `postgres://postgres@127.0.0.1:5432/outpost_missing_${Date.now()}`;
    const started = Date.now();
    const cli = cliService({ PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: url, DATABASE_CONNECT_TIMEOUT_SECONDS: '60' });
    expect(await cli.exited).toBe(1);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(cli.stderr.trim()).toMatch(/^PostgreSQL at 127\.0\.0\.1:5432 refused the service: database "outpost_missing_\d+" does not exist; create the database/);
    expect(cli.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('the service on a port already taken', () => {
  it('says so in one line and exits 1', async () => {
    const db = await database();
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
    cleanup.push(() => new Promise<void>((done) => taken.close(() => done())));
    const port = (taken.address() as { port: number }).port;
    const cli = cliService({ PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: db.url });
    expect(await cli.exited).toBe(1);
    expect(cli.stderr).toBe(`PORT ${port} is already in use on 127.0.0.1; choose another PORT\n`);
  });
});
