/**
 * The service's Prometheus metrics.
 *
 * State is read from the database when scraped, so every service instance
 * answers the same numbers: the work waiting for and running at each private
 * location, its agents, and each check's current status. The point of the
 * first is demand an autoscaler can see without any agent running: jobs
 * queued at a location are invisible to its agents until claimed.
 *
 * Events are counted in this process: results as their sessions complete here,
 * HTTP requests this instance answered, its scheduler's ticks. Each instance
 * counts its own, as Prometheus counters are; sum them over instances.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Database, DatabaseCheck, Queryable } from './db/database.js';
import type { ServiceEvents } from './events.js';
import { perTurn } from '../per-turn.js';
import { collectProcessMetrics } from '../metrics/process-metrics.js';
import { VERSION } from '../version.js';
import { AGENT_ACTIVE_SECONDS } from './store/private-locations.js';
import {
  countConnectedAgents,
  countOpenJobs,
  latestCheckResults,
  sessionResults,
  type AgentCountRow,
  type JobCountRow,
  type LatestResultRow,
  type SessionResultRow,
} from './store/metrics.js';

/** Check/location pairs given per-check series unless METRICS_PER_CHECK_LIMIT says otherwise. */
export const DEFAULT_PER_CHECK_LIMIT = 1000;

/** How long a scrape waits for the database's SELECT 1 before it answers without the database's numbers. */
const DATABASE_CHECK_MS = 2000;

const LOCATION = ['private_location_id', 'private_location'] as const;
const CHECK = ['check_id', 'check_name', 'check_type', 'location'] as const;
type CheckLabels = Record<(typeof CHECK)[number], string>;

export type ResultStatus = 'passed' | 'degraded' | 'failed' | 'timed_out' | 'cancelled';

export interface ServiceMetricsOptions {
  /** A Database is asked `check()` at each scrape; a bare Queryable a `SELECT 1`. */
  db: Queryable | Database;
  /** Where completed sessions are announced; without it no result is counted. */
  events?: ServiceEvents;
  /** Check/location pairs given per-check series (METRICS_PER_CHECK_LIMIT); 0: no per-check series at all. */
  perCheckLimit?: number;
}

/** What one scrape reads from the database, once for every metric of it. */
interface Snapshot {
  reachable: boolean;
  agents: AgentCountRow[];
  jobs: JobCountRow[];
  /** Undefined without per-check series, or when the read failed. */
  latest: { rows: LatestResultRow[]; pairs: number } | undefined;
}

export class ServiceMetrics {
  readonly registry = new Registry();

  readonly http = {
    requests: new Counter({
      name: 'outpost_service_http_requests_total',
      help: 'HTTP requests this instance answered, by method, route template and status code',
      labelNames: ['method', 'route', 'status_code'] as const,
      registers: [this.registry],
    }),
    duration: new Histogram({
      name: 'outpost_service_http_request_duration_seconds',
      help: 'Time to answer an HTTP request (agent claims long-poll up to 30 s), by method, route template and status code',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: [0.005, 0.025, 0.1, 0.25, 1, 2.5, 10, 30],
      registers: [this.registry],
    }),
  };

  readonly scheduler = {
    tickDuration: new Histogram({
      name: 'outpost_service_scheduler_tick_duration_seconds',
      help: "How long one tick of this instance's scheduler took (due checks started, lease sweep, group runs, reminders)",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    }),
    ticks: new Counter({
      name: 'outpost_service_scheduler_ticks_total',
      help: "Ticks of this instance's scheduler, by outcome: ok, or failed (retried next tick)",
      labelNames: ['outcome'] as const,
      registers: [this.registry],
    }),
    runsStarted: new Counter({
      name: 'outpost_service_scheduled_runs_total',
      help: 'Check runs this instance started because they were due',
      registers: [this.registry],
    }),
    sweeps: new Counter({
      name: 'outpost_service_lease_sweeps_total',
      help: 'Lease sweeps this instance finished: expired leases offered again, jobs nobody ran given up',
      registers: [this.registry],
    }),
    lastSweep: new Gauge({
      name: 'outpost_service_last_lease_sweep_timestamp_seconds',
      help: 'When the last lease sweep of this instance finished (Unix time)',
      registers: [this.registry],
    }),
  };

  readonly #db: Queryable | Database;
  readonly #perCheckLimit: number;
  #snapshot: Promise<Snapshot> | undefined;
  /** Per-check series counted in this process, by check/location: pruned to the pairs the database still has. */
  readonly #counted = new Map<string, { labels: CheckLabels; statuses: Set<ResultStatus> }>();
  readonly #results: Counter<'check_id' | 'check_name' | 'check_type' | 'location' | 'status'> | undefined;
  readonly #responseTime: Histogram<'check_id' | 'check_name' | 'check_type' | 'location'> | undefined;

  constructor(options: ServiceMetricsOptions) {
    this.#db = options.db;
    this.#perCheckLimit = options.perCheckLimit ?? DEFAULT_PER_CHECK_LIMIT;
    const snapshot = () => this.#read();
    const registers = [this.registry];

    new Gauge({
      name: 'outpost_service_database_up',
      help: `1 when the database answered a SELECT 1 within ${DATABASE_CHECK_MS / 1000} s at this scrape`,
      registers,
      async collect() {
        this.set((await snapshot()).reachable ? 1 : 0);
      },
    });
    new Gauge({
      name: 'outpost_service_agents_connected',
      help: `Agents of a private location that called within the last ${AGENT_ACTIVE_SECONDS} s`,
      labelNames: LOCATION,
      registers,
      async collect() {
        const { agents } = await snapshot();
        this.reset();
        for (const row of agents) this.set({ private_location_id: row.id, private_location: row.slug_name }, row.agents);
      },
    });
    const jobs = new Gauge({
      name: 'outpost_service_jobs',
      help: 'Jobs of private locations, by lane and state: queued (waiting for an agent) or leased (an agent runs them)',
      labelNames: [...LOCATION, 'lane', 'state'] as const,
      registers,
      collect: () => collectJobs(),
    });
    const oldest = new Gauge({
      name: 'outpost_service_oldest_queued_job_age_seconds',
      help: 'How long the oldest queued job of a private location and lane has waited since it was due',
      labelNames: [...LOCATION, 'lane'] as const,
      registers,
      collect: () => collectJobs(),
    });
    const expired = new Gauge({
      name: 'outpost_service_expired_leases',
      help: 'Leased jobs whose lease ran out and that no lease sweep has offered again yet (0 while the scheduler runs)',
      labelNames: [...LOCATION, 'lane'] as const,
      registers,
      collect: () => collectJobs(),
    });
    // The three job gauges share one pass over the snapshot's rows per scrape.
    let filling: Promise<void> | undefined;
    const collectJobs = () =>
      (filling ??= (async () => {
        const rows = (await snapshot()).jobs;
        jobs.reset();
        oldest.reset();
        expired.reset();
        // Check types of one lane are summed; a lane's oldest job is the oldest of its types'.
        const oldestByLane = new Map<string, { labels: Record<string, string>; seconds: number }>();
        for (const row of rows) {
          const labels = { private_location_id: row.id, private_location: row.slug_name, lane: row.lane };
          jobs.inc({ ...labels, state: row.state }, row.jobs);
          if (row.state === 'leased') expired.inc(labels, row.expired);
          if (row.state !== 'queued' || row.oldest_seconds === null) continue;
          const key = `${row.id}/${labels.lane}`;
          const seconds = Math.max(0, row.oldest_seconds);
          if (seconds >= (oldestByLane.get(key)?.seconds ?? -1)) oldestByLane.set(key, { labels, seconds });
        }
        for (const { labels, seconds } of oldestByLane.values()) oldest.set(labels, seconds);
      })().finally(() => setImmediate(() => (filling = undefined))));

    if (this.#perCheckLimit > 0) {
      const latestGauge = (name: string, help: string, value: (row: LatestResultRow) => number) =>
        new Gauge({
          name,
          help,
          labelNames: CHECK,
          registers,
          async collect() {
            const latest = (await snapshot()).latest;
            this.reset();
            for (const row of latest?.rows ?? []) this.set(labelsOf(row), value(row));
          },
        });
      latestGauge(
        'outpost_check_status',
        "1 when the latest result of an activated check at a location passed, 0 when it failed or timed out",
        (row) => (row.has_errors || row.has_failures || row.timed_out ? 0 : 1),
      );
      latestGauge('outpost_check_degraded', '1 when the latest result of an activated check at a location was degraded', (row) =>
        row.is_degraded ? 1 : 0,
      );
      latestGauge(
        'outpost_check_last_result_timestamp_seconds',
        'When the latest result of an activated check at a location finished (Unix time)',
        (row) => row.at,
      );
      const limit = this.#perCheckLimit;
      new Gauge({
        name: 'outpost_service_check_metrics_omitted',
        help: `Check/location pairs left out of the per-check series by METRICS_PER_CHECK_LIMIT (${limit})`,
        registers,
        async collect() {
          const latest = (await snapshot()).latest;
          this.set(latest ? Math.max(0, latest.pairs - limit) : 0);
        },
      });
      // Counted here, but shown only once the snapshot has pruned them to the pairs the gauges show.
      const pruned = async () => void (await snapshot());
      this.#results = new Counter({
        name: 'outpost_check_results_total',
        help: 'Results of checks recorded as their sessions completed on this instance, by location and status',
        labelNames: [...CHECK, 'status'] as const,
        registers,
        collect: pruned,
      });
      this.#responseTime = new Histogram({
        name: 'outpost_check_response_time_seconds',
        help: 'Response time of check results (timed out and cancelled ones aside), by location',
        labelNames: CHECK,
        buckets: [0.1, 0.3, 1, 3, 10, 30],
        registers,
        collect: pruned,
      });
      // Sessions complete by the dozen (one result batch): counted with one query a turn.
      const completed = perTurn<string>((ids) => void this.#count(ids));
      options.events?.on('sessionCompleted', (session) => completed.add(session.id));
    }

    new Gauge({
      name: 'outpost_service_build_info',
      help: 'Service version and Node.js runtime',
      labelNames: ['version', 'node'] as const,
      registers,
    }).set({ version: VERSION, node: process.version }, 1);
    collectProcessMetrics(this.registry, '');
  }

  /** Counts completed sessions' results; never rejects (a result missed is only a count missed). */
  async #count(sessionIds: string[]): Promise<void> {
    let rows: SessionResultRow[];
    try {
      rows = await sessionResults(this.#db, sessionIds);
    } catch {
      return;
    }
    for (const row of rows) {
      const labels = labelsOf(row);
      const status = statusOf(row);
      this.#results!.inc({ ...labels, status });
      if (row.response_time !== null && status !== 'timed_out' && status !== 'cancelled') {
        this.#responseTime!.observe(labels, row.response_time / 1000);
      }
      const key = JSON.stringify(labels);
      const counted = this.#counted.get(key) ?? { labels, statuses: new Set() };
      counted.statuses.add(status);
      this.#counted.set(key, counted);
    }
  }

  /** The database's part of one scrape: read once, shared by every metric collected in it. */
  #read(): Promise<Snapshot> {
    return (this.#snapshot ??= this.#readNow().finally(() => setImmediate(() => (this.#snapshot = undefined))));
  }

  async #readNow(): Promise<Snapshot> {
    const check = await checkDatabase(this.#db);
    if (!check.reachable) return { reachable: false, agents: [], jobs: [], latest: undefined };
    const [agents, jobs, latest] = await Promise.all([
      countConnectedAgents(this.#db).catch(() => []),
      countOpenJobs(this.#db).catch(() => []),
      this.#perCheckLimit > 0 ? latestCheckResults(this.#db, this.#perCheckLimit).catch(() => undefined) : undefined,
    ]);
    if (latest) this.#prune(latest.rows);
    return { reachable: true, agents, jobs, latest };
  }

  /**
   * Drops the counted series of checks deleted, deactivated, renamed or moved
   * off a location, and of pairs beyond the limit: the series exported are
   * those of the pairs the status gauges show.
   */
  #prune(current: readonly LatestResultRow[]): void {
    const keep = new Set(current.map((row) => JSON.stringify(labelsOf(row))));
    for (const [key, { labels, statuses }] of this.#counted) {
      if (keep.has(key)) continue;
      for (const status of statuses) this.#results!.remove({ ...labels, status });
      this.#responseTime!.remove(labels);
      this.#counted.delete(key);
    }
  }
}

/** The registry alone, for callers that only read the metrics' definitions. */
export function createServiceMetrics(db: Queryable, options: Omit<ServiceMetricsOptions, 'db'> = {}): Registry {
  return new ServiceMetrics({ db, ...options }).registry;
}

function labelsOf(row: { check_id: string; check_name: string; check_type: string; location: string }): CheckLabels {
  return { check_id: row.check_id, check_name: row.check_name, check_type: row.check_type, location: row.location };
}

export function statusOf(row: Pick<SessionResultRow, 'has_errors' | 'has_failures' | 'is_degraded' | 'is_cancelled' | 'timed_out'>): ResultStatus {
  if (row.is_cancelled) return 'cancelled';
  if (row.timed_out) return 'timed_out';
  if (row.has_errors || row.has_failures) return 'failed';
  return row.is_degraded ? 'degraded' : 'passed';
}

async function checkDatabase(db: Queryable | Database): Promise<DatabaseCheck> {
  if ('check' in db) return db.check(DATABASE_CHECK_MS);
  const started = Date.now();
  return db.query('SELECT 1').then(
    () => ({ reachable: true, ms: Date.now() - started }),
    (error: unknown) => ({ reachable: false, error: String(error), ms: Date.now() - started }),
  );
}
