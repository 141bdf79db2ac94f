import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureApiKey } from '../../src/service/store/accounts.js';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { startBalancer, type Balancer } from '../support/balancer.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { startRedisServer, type TestRedis } from '../support/redis-server.js';
import { startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { closedPort, respond, startTarget, type Target } from '../support/target.js';

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist/cli.js');
const INSTANCES = 3;
/** Check frequencies in minutes, each used by PER_FREQUENCY checks. */
const FREQUENCIES = [1, 2, 5, 10, 15, 30, 60] as const;
const PER_FREQUENCY = 6;
/** Minutes of schedule the test lets pass. */
const MINUTES = 60;
/** The step after whose shift one instance is killed, and the step before which it comes back. */
const KILL_AT = 20;
const RESTART_AT = 40;
const RATE_LIMIT = 150;
const FINAL = "('PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED')";

/**
 * Horizontal scale: three service processes of the production tree on one
 * PostgreSQL database, behind a round-robin balancer that agents and the API
 * client go through, so every instance claims, records and schedules.
 *
 * An hour of schedule passes in a minute or two: check frequencies are whole
 * minutes, so at each step the test moves every check's next run one minute
 * closer, less the real time that passed since the last step (every minute
 * of the hour is then exactly one step). Each step waits until no check is
 * due any more, so the instances see every minute. A check of frequency f
 * runs once when created and then every f steps: 1 + 60 / f runs, no fewer
 * (missed) and no more (run twice), each session with one result and each
 * run one request at the target. One instance is SIGKILLed mid-schedule,
 * caught between claiming a check's turn and committing its run, and started
 * again later.
 */
describe('several service instances on one PostgreSQL', () => {
  let database: TestDatabase;
  let sql: pg.Client;
  /** Holds a lock across the kill. */
  let blocker: pg.Client;
  let artifactsDir: string;
  const instances: ServiceProcess[] = [];
  let ports: number[];
  let env: Record<string, string>;
  let balancer: Balancer;
  let target: Target;
  let redis: TestRedis;
  const agents: TestAgent[] = [];
  const accountId = randomUUID();
  const apiKey = `test_${randomUUID()}`;

  const api = async (method: string, path: string, body?: unknown, key = apiKey) => {
    const response = await fetch(`${balancer.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        'x-service-account': accountId,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  const start = (index: number) => {
    // Named in pg_stat_activity, so the test can see what each instance waits for.
    const url = new URL(database.url!);
    url.searchParams.set('application_name', `replica-${index}`);
    instances[index] = startServiceProcess({ cli: CLI, port: ports[index]!, env: { ...env, DATABASE_URL: url.toString() } });
    return instances[index];
  };

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
    blocker = new pg.Client({ connectionString: database.url });
    await blocker.connect();
    artifactsDir = await mkdtemp(join(tmpdir(), 'outpost-replicas-'));
    ports = await Promise.all(Array.from({ length: INSTANCES }, () => closedPort()));
    env = {
      ARTIFACTS_DIR: artifactsDir,
      BOOTSTRAP_ACCOUNT_ID: accountId,
      BOOTSTRAP_API_KEY: apiKey,
      LOG_LEVEL: 'WARN',
      // A lease lost with a killed instance (a claim whose answer never arrived) comes back soon.
      LEASE_SECONDS: '10',
      RATE_LIMIT_MAX: String(RATE_LIMIT),
      RATE_LIMIT_WINDOW_SECONDS: '60',
    };
    // All at once: the migrations' advisory lock lets one migrate while the others wait.
    await Promise.all(Array.from({ length: INSTANCES }, (_, index) => start(index).ready(60_000)));
    balancer = await startBalancer(ports);
    target = await startTarget(
      Object.fromEntries(Array.from({ length: FREQUENCIES.length * PER_FREQUENCY }, (_, index) => [`/c/${index}`, respond(200)])),
    );
    redis = await startRedisServer();
  });

  afterAll(async () => {
    for (const agent of agents) await agent.stop();
    await Promise.all(instances.map((instance) => instance.stop()));
    await balancer?.close();
    await target?.close();
    await redis?.stop();
    await sql?.end();
    await blocker?.end();
    await database?.drop();
    if (artifactsDir) await rm(artifactsDir, { recursive: true, force: true });
  });

  const dueChecks = async () =>
    (await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM checks WHERE activated AND next_run_at <= now()')).rows[0]!.n;
  const waitUntilNothingDue = (what: string) =>
    eventually(async () => ((await dueChecks()) === 0 ? true : undefined), 30_000, `no check due ${what}`);

  it('runs every check of an hour of schedule exactly once per turn, with an instance killed midway', { timeout: 300_000 }, async () => {
    const location = await api('POST', '/v1/private-locations', { name: 'replicas', slugName: 'replicas' });
    expect(location.status).toBe(201);
    const key = await api('POST', `/v1/private-locations/${location.body.id}/keys`);
    expect(key.status).toBe(201);
    for (let index = 0; index < INSTANCES; index += 1) {
      // Each its own Redis database: agents share nothing but the service.
      const agent = await startTestAgent({
        apiKey: key.body.rawKey,
        apiUrl: balancer.url,
        mode: 'uptime',
        redisUrl: `${redis.url}/${index + 1}`,
        logLevel: 'WARN',
      });
      agents.push(agent);
      await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 20_000, `agent ${index} ready`);
    }

    const expected = new Map<string, { path: string; runs: number }>();
    for (const [slot, frequency] of FREQUENCIES.entries()) {
      for (let n = 0; n < PER_FREQUENCY; n += 1) {
        const path = `/c/${slot * PER_FREQUENCY + n}`;
        const created = await api('POST', '/v1/checks/url', {
          name: `every ${frequency} min #${n}`,
          activated: true,
          frequency,
          privateLocations: ['replicas'],
          request: { url: `${target.url}${path}` },
        });
        expect(created.status, JSON.stringify(created.body)).toBe(201);
        expected.set(created.body.id, { path, runs: 1 + Math.floor(MINUTES / frequency) });
      }
    }
    // Every check's first run (made when it was created) is started before the clock moves.
    await waitUntilNothingDue('after the checks were created');

    let lastStep = Date.now();
    for (let step = 1; step <= MINUTES; step += 1) {
      if (step === RESTART_AT) await start(1).ready(60_000);
      // Before the kill, the location's row is locked: making a run's jobs (their foreign key) waits for it,
      // so every instance is caught inside a run it has claimed the check for and not yet committed.
      if (step === KILL_AT) {
        await blocker.query('BEGIN');
        await blocker.query('SELECT id FROM private_locations WHERE id = $1 FOR UPDATE', [location.body.id]);
      }
      const now = Date.now();
      await sql.query('UPDATE checks SET next_run_at = next_run_at - make_interval(secs => $1::float8 / 1000)', [60_000 - (now - lastStep)]);
      lastStep = now;
      if (step === KILL_AT) {
        await eventually(
          async () => {
            const { rows } = await sql.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'replica-1' AND wait_event_type = 'Lock'",
            );
            return rows[0]!.n > 0 ? true : undefined;
          },
          20_000,
          'instance 1 waiting inside a run',
        );
        // SIGKILL: no shutdown at all, as when its machine dies; PostgreSQL rolls its transaction back.
        await instances[1]!.kill();
        await blocker.query('COMMIT');
      }
      await waitUntilNothingDue(`at step ${step}`);
    }

    // Every session finished: jobs a killed instance leased without the agent hearing come back after their lease.
    await eventually(
      async () => {
        const { rows } = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM check_sessions WHERE status NOT IN ${FINAL}`);
        return rows[0]!.n === 0 ? true : undefined;
      },
      60_000,
      'every session finished',
    );

    const { rows: perCheck } = await sql.query<{ check_id: string; runs: number; passed: number }>(
      `SELECT check_id, count(*)::int AS runs, count(*) FILTER (WHERE status = 'PASSED')::int AS passed
       FROM check_sessions WHERE run_source = 'SCHEDULER' GROUP BY check_id`,
    );
    const runs = Object.fromEntries(perCheck.map((row) => [row.check_id, row.runs]));
    const wanted = Object.fromEntries([...expected].map(([id, { runs: count }]) => [id, count]));
    expect(runs).toEqual(wanted);
    expect(perCheck.every((row) => row.passed === row.runs)).toBe(true);

    // One result per session and per job: no job recorded twice, none left without a result.
    const { rows: results } = await sql.query<{ sessions: number; results: number; jobs: number; odd: number }>(
      `SELECT (SELECT count(*)::int FROM check_sessions) AS sessions,
              (SELECT count(*)::int FROM check_results) AS results,
              (SELECT count(*)::int FROM jobs) AS jobs,
              (SELECT count(*)::int FROM (SELECT session_id FROM check_results GROUP BY session_id HAVING count(*) <> 1) s) AS odd`,
    );
    const total = [...expected.values()].reduce((sum, check) => sum + check.runs, 0);
    expect(results[0]).toEqual({ sessions: total, results: total, jobs: total, odd: 0 });

    // Each run reached the target once: no job was run by two agents.
    const hits = Object.fromEntries([...expected.values()].map(({ path }) => [path, target.hits.get(path) ?? 0]));
    expect(hits).toEqual(Object.fromEntries([...expected.values()].map(({ path, runs: count }) => [path, count])));

    // The balancer spread the work: every instance answered requests, the restarted one included.
    expect(balancer.answeredBy().every((count) => count > 0)).toBe(true);
  });

  it('shares one rate-limit budget per key among the instances', async () => {
    // A key of its own, so the budget is untouched by the schedule test.
    const limitedKey = `test_${randomUUID()}`;
    await ensureApiKey({ query: async (text, params) => (await sql.query(text, params as unknown[])).rows }, accountId, limitedKey);
    const before = balancer.answeredBy();
    const extra = 30;
    const statuses: number[] = [];
    const queue = Array.from({ length: RATE_LIMIT + extra }, (_, index) => index);
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        while (queue.shift() !== undefined) statuses.push((await api('GET', '/v1/checks?limit=1', undefined, limitedKey)).status);
      }),
    );
    const after = balancer.answeredBy();
    // Requests went to every instance, each of which alone would allow the whole budget.
    expect(after.map((count, index) => count - before[index]!).every((count) => count > extra)).toBe(true);
    expect(statuses.filter((status) => status === 200)).toHaveLength(RATE_LIMIT);
    expect(statuses.filter((status) => status === 429)).toHaveLength(extra);
  });
});
