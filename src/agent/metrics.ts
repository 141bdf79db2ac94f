import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { collectProcessMetrics } from '../metrics/process-metrics.js';
import type { Lane } from '../protocol/lanes.js';
import { VERSION } from '../version.js';

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

/** One registry per agent, so two agents in one test process never mix their numbers. */
export class AgentMetrics {
  readonly registry = new Registry();

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

  constructor() {
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
    collectProcessMetrics(this.registry, 'outpost_');
  }

  /** Where the gauges of the agent's current state read from, once the agent has its lanes. */
  observe(state: AgentState): void {
    this.#state = state;
  }
}
