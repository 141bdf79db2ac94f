/**
 * The agent's periodic state summary: one log line an operator can read
 * without a metrics stack, with what happened since the last one.
 */
import type { AgentMetrics, AgentState } from '../metrics.js';

export interface StateSummary {
  inFlight: Record<string, number>;
  queued: Record<string, number>;
  /** Jobs finished since the last summary, by outcome. */
  finished: Record<string, number>;
  pollErrors: number;
  resultPostFailures: number;
  serviceReachable: boolean;
  idleSandboxes: number;
  rssMb: number;
  heapUsedMb: number;
}

/** Reads the counters each time and reports how far they moved since the previous call. */
export class StateSummaries {
  #last = { finished: new Map<string, number>(), pollErrors: 0, resultPostFailures: 0 };

  constructor(
    private readonly metrics: AgentMetrics,
    private readonly state: AgentState,
  ) {}

  async next(): Promise<StateSummary> {
    const finishedNow = await totalsBy(this.metrics.jobsFinished, 'status');
    const pollErrors = sum(await totalsBy(this.metrics.pollErrors, 'code'));
    const resultPostFailures = sum(await totalsBy(this.metrics.resultsFailed, 'code'));
    const finished: Record<string, number> = {};
    for (const [status, total] of finishedNow) {
      const delta = total - (this.#last.finished.get(status) ?? 0);
      if (delta > 0) finished[status] = delta;
    }
    const summary: StateSummary = {
      inFlight: {},
      queued: {},
      finished,
      pollErrors: pollErrors - this.#last.pollErrors,
      resultPostFailures: resultPostFailures - this.#last.resultPostFailures,
      serviceReachable: (await this.metrics.serviceReachable.get()).values[0]?.value === 1,
      idleSandboxes: this.state.idleSandboxes(),
      rssMb: Math.round(process.memoryUsage.rss() / 1048576),
      heapUsedMb: Math.round(process.memoryUsage().heapUsed / 1048576),
    };
    for (const [lane, value] of Object.entries(this.state.lanes())) {
      summary.inFlight[lane] = value.inFlight;
      summary.queued[lane] = value.queued;
    }
    this.#last = { finished: finishedNow, pollErrors, resultPostFailures };
    return summary;
  }
}

interface CounterLike {
  get(): Promise<{ values: { value: number; labels: Record<string, string | number | undefined> }[] }>;
}

async function totalsBy(counter: CounterLike, label: string): Promise<Map<string, number>> {
  const totals = new Map<string, number>();
  for (const { value, labels } of (await counter.get()).values) {
    const key = String(labels[label] ?? '');
    totals.set(key, (totals.get(key) ?? 0) + value);
  }
  return totals;
}

function sum(totals: Map<string, number>): number {
  let total = 0;
  for (const value of totals.values()) total += value;
  return total;
}
