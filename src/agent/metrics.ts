import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { collectProcessMetrics } from '../metrics/process-metrics.js';
import type { Job, Result } from '../protocol/agent-api.js';
import type { Lane } from '../protocol/lanes.js';
import { VERSION } from '../version.js';
import type { Readiness, ReadinessState } from './readiness.js';

export interface LaneState {
  capacity: number;
  inFlight: number;
  queued: number;
}

/** What the agent holds right now, read when /metrics is scraped rather than kept up to date on every change. */
export interface AgentState {
  lanes(): Record<Lane, LaneState>;
  /** Warm sandboxes started and waiting for their job; 0 where no pool runs (uptime mode, SANDBOX_WARM=false). */
  idleSandboxes(): number;
}

export interface AgentMetricsOptions {
  /** AGENT_METRICS_PER_CHECK: series per check and location, named as blackbox_exporter names them. */
  perCheck?: boolean;
  /** Where outpost_ready reads from; without it that gauge is not there. */
  readiness?: Readiness;
  /** How long a check's series stay after its last result here; longer than the longest check frequency (24 h). */
  perCheckTtlMs?: number;
  /** Most check/location pairs with series; the least recently run are dropped first. */
  perCheckMaxPairs?: number;
  /** The clock the TTL is measured by; tests move it. */
  now?: () => number;
}

const READINESS_STATES = [
  'starting',
  'ready',
  'key-refused',
  'service-unreachable',
  'redis-unavailable',
  'stopping',
] as const satisfies readonly ReadinessState[];

/** One registry per agent, so two agents in one test process never mix their numbers. */
export class AgentMetrics {
  readonly registry = new Registry();
  /** Undefined unless AGENT_METRICS_PER_CHECK is on. */
  readonly probes: ProbeMetrics | undefined;

  readonly jobsClaimed = new Counter({
    name: 'outpost_jobs_claimed_total',
    help: 'Jobs claimed from the service, by lane and check type',
    labelNames: ['lane', 'check_type'] as const,
    registers: [this.registry],
  });

  readonly jobsStarted = new Counter({
    name: 'outpost_jobs_started_total',
    help: 'Jobs started, by check type',
    labelNames: ['check_type'] as const,
    registers: [this.registry],
  });

  readonly jobsFinished = new Counter({
    name: 'outpost_jobs_finished_total',
    help: 'Jobs finished, by check type and outcome',
    labelNames: ['check_type', 'status'] as const,
    registers: [this.registry],
  });

  readonly jobDuration = new Histogram({
    name: 'outpost_job_duration_seconds',
    help: 'Time from start of a job to its result being handed to the reporter',
    labelNames: ['check_type'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 240, 1800],
    registers: [this.registry],
  });

  readonly freeCapacity = new Gauge({
    name: 'outpost_free_capacity',
    help: 'Jobs this agent would claim now, by lane (the uptime lane counts its backlog)',
    labelNames: ['lane'] as const,
    registers: [this.registry],
  });

  readonly pollErrors = new Counter({
    name: 'outpost_poll_errors_total',
    help: 'Failed hello or claim calls, by error code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  readonly resultsPosted = new Counter({
    name: 'outpost_results_posted_total',
    help: 'Results the service accepted',
    registers: [this.registry],
  });

  readonly resultsFailed = new Counter({
    name: 'outpost_result_post_failures_total',
    help: 'Result posts that failed and were retried or dropped',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  readonly artifactBytes = new Counter({
    name: 'outpost_artifact_bytes_total',
    help: 'Bytes of artifacts (traces, screenshots, videos, reports) uploaded to the service',
    registers: [this.registry],
  });

  readonly artifactFailures = new Counter({
    name: 'outpost_artifact_failures_total',
    help: 'Artifacts not uploaded, by reason: too_large, unreadable, unscrubbable, upload_failed',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly queueEntriesRejected = new Counter({
    name: 'outpost_queue_entries_rejected_total',
    help:
      "Entries found in the agent's job queues that it did not put there, by lane and reason: " +
      'not_held and unreadable (dropped), unexpected_data (the data was ignored; the claimed job of that id ran)',
    labelNames: ['lane', 'reason'] as const,
    registers: [this.registry],
  });

  readonly isolation = new Gauge({
    name: 'outpost_sandbox_isolation',
    help: 'The isolation backend script jobs run under: 1 for the backend in force (namespaces, users or none)',
    labelNames: ['backend'] as const,
    registers: [this.registry],
  });

  readonly serviceReachable = new Gauge({
    name: 'outpost_service_reachable',
    help: '1 when the last call to the service succeeded',
    registers: [this.registry],
  });

  #state: AgentState | undefined;

  constructor(options: AgentMetricsOptions = {}) {
    const current = (): AgentState | undefined => this.#state;
    const perLane = (name: string, help: string, read: (lane: LaneState) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['lane'] as const,
        registers: [this.registry],
        collect() {
          for (const [lane, state] of Object.entries(current()?.lanes() ?? {})) this.set({ lane }, read(state));
        },
      });
    perLane('outpost_capacity', 'Jobs this agent runs at once, by lane', (lane) => lane.capacity);
    perLane('outpost_jobs_in_flight', 'Jobs running now, by lane', (lane) => lane.inFlight);
    perLane('outpost_queue_depth', "Jobs claimed and waiting in the agent's queue for a slot, by lane", (lane) => lane.queued);
    new Gauge({
      name: 'outpost_sandbox_pool_size',
      help: 'Warm sandboxes started ahead and waiting for a script job',
      registers: [this.registry],
      collect() {
        this.set(current()?.idleSandboxes() ?? 0);
      },
    });
    new Gauge({
      name: 'outpost_build_info',
      help: 'Agent version and Node.js runtime',
      labelNames: ['version', 'node'] as const,
      registers: [this.registry],
    }).set({ version: VERSION, node: process.version }, 1);
    const readiness = options.readiness;
    if (readiness) {
      new Gauge({
        name: 'outpost_ready',
        help: '1 when /-/readiness answers 200: the service took the agent and its Redis is usable',
        registers: [this.registry],
        collect() {
          this.set(readiness.ready ? 1 : 0);
        },
      });
      new Gauge({
        name: 'outpost_readiness_state',
        help: 'The readiness state /-/readiness and /health name: 1 for the current one',
        labelNames: ['state'] as const,
        registers: [this.registry],
        collect() {
          for (const state of READINESS_STATES) this.set({ state }, readiness.state === state ? 1 : 0);
        },
      });
    }
    if (options.perCheck) this.probes = new ProbeMetrics(this.registry, options);
    // Unprefixed, as prom-client, other exporters and stock Node.js dashboards name them.
    collectProcessMetrics(this.registry, '');
  }

  /** A job's result, as it goes to the reporter: per-check series when they are on. */
  recordResult(job: Pick<Job, 'checkId' | 'name' | 'checkType' | 'runLocation'>, result: Result): void {
    this.probes?.record(job, result);
  }

  /** Where the gauges of the agent's current state read from, once the agent has its lanes. */
  observe(state: AgentState): void {
    this.#state = state;
  }
}

const CHECK = ['check_id', 'check_name', 'check_type', 'location'] as const;
type CheckLabels = Record<(typeof CHECK)[number], string>;

/** Our timings, by the phase blackbox_exporter's probe_http_duration_seconds names them. */
const HTTP_PHASES = [
  ['resolve', 'dns'],
  ['connect', 'tcp'],
  ['tls', 'tls'],
  ['processing', 'firstByte'],
  ['transfer', 'download'],
] as const;
const HTTP_CHECK_TYPES: ReadonlySet<string> = new Set(['URL', 'API']);

/** A day and an hour: a check run daily keeps its series between runs. */
export const PER_CHECK_TTL_MS = 25 * 3_600_000;
export const PER_CHECK_MAX_PAIRS = 5000;
/** Expired series are looked for at most this often when results come in (and at every scrape). */
const PRUNE_EVERY_MS = 60_000;

/**
 * Per check and location, the series blackbox_exporter exports per probe, from
 * each result this agent produces. Cardinality stays bounded: a pair not run
 * here for `perCheckTtlMs` loses its series, and beyond `perCheckMaxPairs`
 * the least recently run go first.
 */
export class ProbeMetrics {
  readonly #success: Gauge<(typeof CHECK)[number]>;
  readonly #duration: Gauge<(typeof CHECK)[number]>;
  readonly #statusCode: Gauge<(typeof CHECK)[number]>;
  readonly #phases: Gauge<(typeof CHECK)[number] | 'phase'>;
  readonly #dnsLookup: Gauge<(typeof CHECK)[number]>;
  readonly #certExpiry: Gauge<(typeof CHECK)[number]>;
  /** Least recently run first (a pair run again moves to the end). */
  readonly #seen = new Map<string, { labels: CheckLabels; at: number }>();
  readonly #ttlMs: number;
  readonly #maxPairs: number;
  readonly #now: () => number;
  #prunedAt = 0;

  constructor(registry: Registry, options: AgentMetricsOptions = {}) {
    this.#ttlMs = options.perCheckTtlMs ?? PER_CHECK_TTL_MS;
    this.#maxPairs = options.perCheckMaxPairs ?? PER_CHECK_MAX_PAIRS;
    this.#now = options.now ?? Date.now;
    const registers = [registry];
    const prune = () => this.prune();
    this.#success = new Gauge({
      name: 'probe_success',
      help: 'Whether the latest run of a check at this location succeeded (degraded counts as success)',
      labelNames: CHECK,
      registers,
      collect: prune,
    });
    this.#duration = new Gauge({
      name: 'probe_duration_seconds',
      help: "The latest run's response time, as the check reports it",
      labelNames: CHECK,
      registers,
    });
    this.#statusCode = new Gauge({
      name: 'probe_http_status_code',
      help: 'HTTP status code of the latest run of a URL or API check (0: no response)',
      labelNames: CHECK,
      registers,
    });
    this.#phases = new Gauge({
      name: 'probe_http_duration_seconds',
      help: 'Time of each phase of the latest run of a URL or API check: resolve, connect, tls, processing (to first byte), transfer',
      labelNames: [...CHECK, 'phase'] as const,
      registers,
    });
    this.#dnsLookup = new Gauge({
      name: 'probe_dns_lookup_time_seconds',
      help: "Time the latest run's name lookup took (0: none was made)",
      labelNames: CHECK,
      registers,
    });
    this.#certExpiry = new Gauge({
      name: 'probe_ssl_earliest_cert_expiry',
      help: "When the certificate the latest run was shown expires (Unix time); only for results that carry it",
      labelNames: CHECK,
      registers,
    });
  }

  record(job: Pick<Job, 'checkId' | 'name' | 'checkType' | 'runLocation'>, result: Result): void {
    const labels: CheckLabels = { check_id: job.checkId, check_name: job.name, check_type: job.checkType, location: job.runLocation };
    const key = `${job.checkId}\u0000${job.runLocation}`;
    const before = this.#seen.get(key);
    // A renamed check: its series under the old name go.
    if (before && before.labels.check_name !== labels.check_name) this.#remove(before.labels);
    this.#seen.delete(key);
    this.#seen.set(key, { labels, at: this.#now() });

    this.#success.set(labels, result.hasErrors || result.hasFailures ? 0 : 1);
    this.#duration.set(labels, result.responseTime / 1000);
    const timings = result.timings ?? undefined;
    if (HTTP_CHECK_TYPES.has(job.checkType)) {
      this.#statusCode.set(labels, result.statusCode ?? 0);
      for (const [phase, timing] of HTTP_PHASES) this.#phases.set({ ...labels, phase }, (timings?.[timing] ?? 0) / 1000);
    }
    if (timings) this.#dnsLookup.set(labels, (timings.dns ?? 0) / 1000);
    else this.#dnsLookup.remove(labels);
    const expiry = certificateExpiry(result.details);
    if (expiry === undefined) this.#certExpiry.remove(labels);
    else this.#certExpiry.set(labels, expiry);

    if (this.#seen.size > this.#maxPairs || this.#now() - this.#prunedAt >= PRUNE_EVERY_MS) this.prune();
  }

  /** Drops the series of pairs not run for the TTL, and of the least recently run beyond the cap. */
  prune(): void {
    const now = this.#now();
    this.#prunedAt = now;
    for (const [key, { labels, at }] of this.#seen) {
      if (now - at < this.#ttlMs && this.#seen.size <= this.#maxPairs) break;
      this.#remove(labels);
      this.#seen.delete(key);
    }
  }

  #remove(labels: CheckLabels): void {
    for (const gauge of [this.#success, this.#duration, this.#statusCode, this.#dnsLookup, this.#certExpiry]) gauge.remove(labels);
    for (const [phase] of HTTP_PHASES) this.#phases.remove({ ...labels, phase });
  }
}

/**
 * `details.tls.validTo` of a result, as Unix seconds: a date string, or a
 * number of seconds or milliseconds. Undefined when the result carries none
 * or it is not a date.
 */
export function certificateExpiry(details: Record<string, unknown> | undefined): number | undefined {
  const tls = details?.tls;
  if (typeof tls !== 'object' || tls === null) return undefined;
  const validTo = (tls as { validTo?: unknown }).validTo;
  let ms: number;
  if (typeof validTo === 'string') ms = Date.parse(validTo);
  else if (typeof validTo === 'number') ms = validTo > 1e11 ? validTo : validTo * 1000;
  else return undefined;
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
}
