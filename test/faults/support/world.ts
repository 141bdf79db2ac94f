/**
 * One fault scenario's world, all of it real and on loopback: a fresh
 * database on the machine's PostgreSQL (directly or through a proxy that can
 * refuse connections), the service as a process on a fixed port (restartable
 * on the same port and database), agents as processes, redis-servers of the
 * scenario's own, and a slow counting target. Checks and sessions go through
 * the service's public API with the bootstrap key. `close` ends everything it
 * started, whatever state it is in.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../../support/databases.js';
import { closedPort } from '../../support/target.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';
import { FINAL_STATUSES, account, publish, type Figures } from './accounting.js';
import { killAll, sleep, spawnManaged, until, type ManagedProcess } from './processes.js';
import { createRedis, type RestartableRedis } from './redis.js';
import { SessionTracker } from './sessions.js';
import { startSlowTarget, type SlowTarget } from './target.js';

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
/**
 * The tree whose dist/cli.js runs: this one (built by npm run test:faults), or
 * FAULTS_TREE, another built checkout (to measure one version against another).
 */
export const TREE = process.env.FAULTS_TREE ?? REPO;
export const CLI = join(TREE, 'dist/cli.js');
/** The lease the service is started with (LEASE_SECONDS). */
export const LEASE_SECONDS = 30;
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const isFinal = (status: string | undefined) => status !== undefined && FINAL_STATUSES.has(status);

export interface ApiAnswer {
  status: number;
  body: any;
}

export interface Check {
  id: string;
  path: string;
}

export interface AgentOptions {
  name: string;
  /** REDIS_URL; an uptime agent uses it only with queue 'redis'. */
  redis: RestartableRedis;
  /** UPTIME_QUEUE; the agent's default (memory) when left out. */
  queue?: 'memory' | 'redis';
  concurrency: number;
  /** UPTIME_PREFETCH; the agent's default (= concurrency) when left out. */
  prefetch?: number;
  graceSeconds?: number;
}

export interface AgentHandle {
  readonly name: string;
  readonly process: ManagedProcess;
  healthPort(): number | undefined;
  /** Its agentId, once it said (log line "agent starting"). */
  agentId(): string | undefined;
  /** HTTP status of /-/readiness; undefined when it does not answer within 1 s. */
  readiness(): Promise<number | undefined>;
  /** Waits until /-/readiness answers 200. */
  ready(ms?: number): Promise<void>;
}

export interface ServiceHandle {
  readonly port: number;
  readonly url: string;
  readonly process: ManagedProcess;
  /** Every process of the service this world started, in order (restarts). */
  readonly generations: ManagedProcess[];
  /** Starts a new service process on the same port and database; the previous one must have exited. */
  restart(): Promise<void>;
}

export interface WorldOptions {
  scenario: string;
  /** Delay of the target's answers, per path prefix (ms). */
  delays: Record<string, number>;
  /** The service reaches PostgreSQL through a loopback proxy the scenario controls. */
  databaseProxy?: boolean;
}

export class World {
  readonly agents: AgentHandle[] = [];
  readonly redises: RestartableRedis[] = [];
  readonly sessions: SessionTracker;
  location!: { id: string; slugName: string; rawKey: string };
  service!: ServiceHandle;
  proxy: TcpProxy | undefined;
  #checkCount = 0;
  readonly #accountId = randomUUID();
  readonly #apiKey = `fault_${randomUUID()}`;

  private constructor(
    readonly scenario: string,
    readonly target: SlowTarget,
    readonly database: TestDatabase,
    readonly artifactsDir: string,
  ) {
    this.sessions = new SessionTracker((path) => this.api('GET', path, undefined, 3000));
  }

  static async create(options: WorldOptions): Promise<World> {
    const target = await startSlowTarget(options.delays);
    const database = await createTestDatabase('postgres');
    const artifactsDir = await mkdtemp(join(tmpdir(), 'outpost-fault-artifacts-'));
    const world = new World(options.scenario, target, database, artifactsDir);
    try {
      if (options.databaseProxy) world.proxy = await startTcpProxy(5432);
      await world.#startService();
      const slugName = `fault-${randomUUID().slice(0, 8)}`;
      const location = await world.api('POST', '/v1/private-locations', { name: `fault ${options.scenario}`, slugName });
      if (location.status !== 201) throw new Error(`creating a private location: ${location.status} ${JSON.stringify(location.body)}`);
      const key = await world.api('POST', `/v1/private-locations/${location.body.id}/keys`);
      if (key.status !== 201) throw new Error(`creating a location key: ${key.status} ${JSON.stringify(key.body)}`);
      world.location = { id: location.body.id, slugName, rawKey: key.body.rawKey };
      world.sessions.start();
      return world;
    } catch (error) {
      await world.close();
      throw error;
    }
  }

  get serviceUrl(): string {
    return this.service.url;
  }

  /** The database URL the service is given: through the proxy when there is one. */
  #serviceDatabaseUrl(): string {
    const url = new URL(this.database.url!);
    if (this.proxy) url.port = String(this.proxy.port);
    return url.toString();
  }

  async #startService(): Promise<void> {
    const port = await closedPort();
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? tmpdir(),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: this.#serviceDatabaseUrl(),
      ARTIFACTS_DIR: this.artifactsDir,
      BOOTSTRAP_ACCOUNT_ID: this.#accountId,
      BOOTSTRAP_API_KEY: this.#apiKey,
      LOG_LEVEL: 'WARN',
      LEASE_SECONDS: String(LEASE_SECONDS),
      // The scenario polls hundreds of sessions: no rate limit.
      RATE_LIMIT_MAX: '0',
    };
    const generations: ManagedProcess[] = [];
    const url = `http://127.0.0.1:${port}`;
    const launch = async () => {
      const child = spawnManaged(`service #${generations.length + 1}`, process.execPath, [CLI, 'service'], env, TREE);
      generations.push(child);
      const up = await until(async () => {
        if (child.hasExited()) return true;
        const answer = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) }).catch(() => undefined);
        await answer?.arrayBuffer().catch(() => undefined);
        return answer?.status === 200;
      }, 30_000, 100);
      if (!up || child.hasExited()) throw new Error(`the service did not come up on ${url}:\n${child.tail()}`);
    };
    await launch();
    this.service = {
      port,
      url,
      get process() {
        return generations[generations.length - 1]!;
      },
      generations,
      async restart() {
        const previous = generations[generations.length - 1]!;
        if (!previous.hasExited()) throw new Error('restart: the previous service process still runs');
        await launch();
      },
    };
  }

  /** The user API as the bootstrap account; a status of 0 when the service did not answer within `timeoutMs`. */
  async api(method: string, path: string, body?: unknown, timeoutMs = 15_000): Promise<ApiAnswer> {
    try {
      const response = await fetch(`${this.service.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.#apiKey}`,
          'x-service-account': this.#accountId,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON
      }
      return { status: response.status, body: parsed };
    } catch (error) {
      return { status: 0, body: error instanceof Error ? error.message : String(error) };
    }
  }

  /**
   * `count` URL checks, each on a target path of its own (`<prefix><n>`),
   * not scheduled (activated false), run only when triggered. Their thresholds
   * sit far above the target's delays, so a healthy run is PASSED.
   */
  async createChecks(count: number, prefix = '/c/'): Promise<Check[]> {
    const checks: Check[] = [];
    for (let index = 0; index < count; index += 1) {
      const path = `${prefix}${this.#checkCount++}`;
      const created = await this.api('POST', '/v1/checks/url', {
        name: `fault ${path}`,
        activated: false,
        privateLocations: [this.location.slugName],
        frequency: 1,
        degradedResponseTime: 25_000,
        maxResponseTime: 30_000,
        request: { url: `${this.target.url}${path}`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
      });
      if (created.status !== 201) throw new Error(`creating a check: ${created.status} ${JSON.stringify(created.body)}`);
      checks.push({ id: created.body.id, path });
    }
    return checks;
  }

  /**
   * Triggers while the service may be failing: a refused call (no 201)
   * counts in `refused` instead of throwing. A refused call of several checks
   * may still have started some of them; those sessions are not tracked.
   */
  async tryTrigger(checks: readonly Check[], group = 'main'): Promise<{ ids: string[]; refused: number }> {
    try {
      return { ids: await this.trigger(checks, 1, group), refused: 0 };
    } catch {
      return { ids: [], refused: 1 };
    }
  }

  /** One session per check, `times` over (one trigger call per round); answers the new session ids. */
  async trigger(checks: readonly Check[], times = 1, group = 'main'): Promise<string[]> {
    const ids: string[] = [];
    const pathOf = new Map(checks.map((check) => [check.id, check.path]));
    for (let round = 0; round < times; round += 1) {
      for (let start = 0; start < checks.length; start += 100) {
        const slice = checks.slice(start, start + 100);
        const sentAt = Date.now();
        const answer = await this.api('POST', '/v2/check-sessions/trigger', { target: { checkId: slice.map((check) => check.id) } });
        if (answer.status !== 201) throw new Error(`triggering sessions: ${answer.status} ${JSON.stringify(answer.body)}`);
        for (const session of answer.body.sessions) {
          this.sessions.add({ id: session.checkSessionId, path: pathOf.get(session.checkId)!, triggeredAt: sentAt, group });
          ids.push(session.checkSessionId);
        }
      }
    }
    return ids;
  }

  async startRedis(options: { persistent: boolean }): Promise<RestartableRedis> {
    const redis = await createRedis(options);
    this.redises.push(redis);
    return redis;
  }

  /** An agent process (uptime mode, health on a free port); not waited for, see `ready`. */
  startAgent(options: AgentOptions): AgentHandle {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? tmpdir(),
      API_KEY: this.location.rawKey,
      API_URL: this.service.url,
      REDIS_URL: options.redis.url,
      AGENT_HEALTH_PORT: '0',
      AGENT_MODE: 'uptime',
      UPTIME_CONCURRENCY: String(options.concurrency),
      SHUTDOWN_GRACE_SECONDS: String(options.graceSeconds ?? 30),
      LOG_LEVEL: 'INFO',
      EXTERNAL_OBSERVABILITY: 'off',
    };
    if (options.prefetch !== undefined) env.UPTIME_PREFETCH = String(options.prefetch);
    if (options.queue !== undefined) env.UPTIME_QUEUE = options.queue;
    const child = spawnManaged(`agent ${options.name}`, process.execPath, [CLI, 'agent'], env, TREE);
    let port: number | undefined;
    const healthPort = () => {
      if (port === undefined) {
        for (const line of child.lines) {
          if (!line.includes('"healthPort"')) continue;
          try {
            const value = (JSON.parse(line) as { healthPort?: unknown }).healthPort;
            if (typeof value === 'number') port = value;
          } catch {
            // not JSON
          }
        }
      }
      return port;
    };
    const readiness = async () => {
      const at = healthPort();
      if (at === undefined) return undefined;
      const answer = await fetch(`http://127.0.0.1:${at}/-/readiness`, { signal: AbortSignal.timeout(1000) }).catch(() => undefined);
      await answer?.arrayBuffer().catch(() => undefined);
      return answer?.status;
    };
    const agentId = () => {
      for (const line of child.lines) {
        const match = /"agentId":"([0-9a-f-]{36})"/.exec(line);
        if (match) return match[1];
      }
      return undefined;
    };
    const agent: AgentHandle = {
      name: options.name,
      process: child,
      healthPort,
      agentId,
      readiness,
      async ready(ms = 30_000) {
        const ok = await until(async () => child.hasExited() || (await readiness()) === 200, ms, 100);
        if (!ok || child.hasExited()) throw new Error(`agent ${options.name} was not ready within ${ms} ms:\n${child.tail()}`);
      },
    };
    this.agents.push(agent);
    return agent;
  }

  /** Terminates every backend of the service's database (pg_terminate_backend); answers how many. */
  async terminateBackends(): Promise<number> {
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    try {
      const name = new URL(this.database.url!).pathname.slice(1);
      const rows = await admin.query<{ terminated: boolean }>(
        'SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [name],
      );
      return rows.rows.filter((row) => row.terminated).length;
    } finally {
      await admin.end();
    }
  }

  /**
   * Where the jobs of the sessions still unfinished are, read from the
   * service's database (a diagnosis for the figures, never asserted on):
   * e.g. `{"leased to A (exited)": 207}` is work waiting out a dead agent's lease.
   */
  async unfinishedJobs(group?: string): Promise<Record<string, number> | string> {
    const ids = this.sessions.all(group).filter((session) => !isFinal(session.status)).map((session) => session.id);
    if (ids.length === 0) return {};
    const names = new Map<string, AgentHandle>();
    for (const agent of this.agents) {
      const id = agent.agentId();
      if (id) names.set(id, agent);
    }
    const client = new pg.Client({ connectionString: this.database.url });
    try {
      await client.connect();
      const rows = await client.query<{ state: string; agent: string | null; jobs: string }>(
        'SELECT state, agent_id::text AS agent, count(*) AS jobs FROM jobs WHERE session_id = ANY($1::uuid[]) GROUP BY 1, 2',
        [ids],
      );
      const counts: Record<string, number> = {};
      for (const row of rows.rows) {
        const agent = row.agent ? names.get(row.agent) : undefined;
        const holder = row.agent ? ` to ${agent ? `${agent.name}${agent.process.hasExited() ? ' (exited)' : ''}` : row.agent}` : '';
        counts[`${row.state}${holder}`] = (counts[`${row.state}${holder}`] ?? 0) + Number(row.jobs);
      }
      return counts;
    } catch (error) {
      return `unavailable: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** The lease length the agents were told in their hello (from their log), to tell which service ran. */
  leaseSecondsSeen(): number[] {
    const seen = new Set<number>();
    for (const agent of this.agents) {
      for (const line of agent.process.lines) {
        const match = /"leaseSeconds":(\d+)/.exec(line);
        if (match) seen.add(Number(match[1]));
      }
    }
    return [...seen];
  }

  /** Counts the sessions, prints the line, writes the JSON; the scenario asserts on what it answers. */
  async publish(options: { faultEndAt?: number; extra?: Record<string, unknown>; group?: string; scenario?: string } = {}): Promise<Figures> {
    await this.sessions.refresh();
    const outcomes = this.sessions.outcomes(options.group);
    const diagnosis = outcomes.some((outcome) => !isFinal(outcome.status))
      ? { unfinishedJobs: await this.unfinishedJobs(options.group) }
      : {};
    // Hits of the paths of the sessions counted: a group's own checks.
    const paths = new Set(outcomes.map((outcome) => outcome.path));
    const hits = new Map([...this.target.hits].filter(([path]) => paths.has(path)));
    const figures = account({
      scenario: options.scenario ?? this.scenario,
      sessions: outcomes,
      hits,
      faultEndAt: options.faultEndAt,
      extra: { ...options.extra, leaseSecondsSeen: this.leaseSecondsSeen().join(','), ...diagnosis },
    });
    await publish(figures);
    return figures;
  }

  /** Logs of every process, for a failure's message. */
  tails(count = 30): string {
    const parts = [...this.service.generations.map((child) => child), ...this.agents.map((agent) => agent.process)].map(
      (child) => `--- ${child.name} (pid ${child.pid}${child.hasExited() ? `, exited ${JSON.stringify(child.exit())}` : ''})\n${child.tail(count)}`,
    );
    return parts.join('\n');
  }

  async close(): Promise<void> {
    await this.sessions.stop();
    // Paused processes get SIGCONT first; everything this world (and any other) started is ended.
    await killAll();
    await Promise.all(this.redises.map((redis) => redis.close().catch(() => undefined)));
    await this.proxy?.close().catch(() => undefined);
    await this.target.close().catch(() => undefined);
    await sleep(100);
    await this.database.drop().catch((error: unknown) => console.error(`dropping ${this.database.url}: ${String(error)}`));
    await rm(this.artifactsDir, { recursive: true, force: true });
  }
}
