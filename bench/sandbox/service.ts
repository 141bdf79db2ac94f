/** The service's API and the agent's metrics, as the sandbox benchmark uses them. */
import { readFile } from 'node:fs/promises';
import { ApiClient } from '../../src/dev/api-client.js';
import { freePort, until, type Child } from '../uptime/processes.js';

export { freePort, until };

const FINAL = new Set(['PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED']);

export interface ResultDetail {
  hasFailures: boolean;
  hasErrors: boolean;
  error: unknown;
  details?: { peakMemoryBytes?: number };
}

export class ServiceApi extends ApiClient {
  constructor(
    readonly base: string,
    accountId: string,
    apiKey: string,
  ) {
    super(base, accountId, apiKey);
  }

  /** Triggers one run of a check and waits for its session to end; answers the run's result. */
  async runToResult(checkId: string): Promise<ResultDetail> {
    const triggered = await this.call<{ sessions: { checkSessionId: string }[] }>('POST', '/v2/check-sessions/trigger', {
      target: { checkId: [checkId] },
    });
    const sessionId = triggered.sessions[0]!.checkSessionId;
    let session: { status: string; results: { checkResultLink: string }[] } | undefined;
    await until(async () => {
      session = await this.call('GET', `/v1/check-sessions/${sessionId}`);
      return FINAL.has(session!.status);
    }, 120_000, 'a finished session', 20);
    return this.call<ResultDetail>('GET', new URL(session!.results[0]!.checkResultLink).pathname);
  }
}

/** The sum of a histogram's observations for one check type, from the agent's /metrics. */
export async function histogramSum(health: string, name: string, checkType: string): Promise<number> {
  const text = await (await fetch(`${health}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}_sum{check_type="${checkType}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}



/** Proportional set size of processes (shared pages divided among their users), in bytes, from smaps_rollup. */
export async function proportionalBytes(pids: number[]): Promise<number> {
  let total = 0;
  for (const pid of pids) {
    try {
      const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8');
      const match = /^Pss:\s+(\d+) kB/m.exec(rollup);
      if (match) total += Number(match[1]) * 1024;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** The agent's warnings and errors so far (its log is JSON lines on stdout). */
export async function agentWarnings(agent: Child): Promise<string[]> {
  const found: string[] = [];
  // waitFor visits every line already read; a matcher that never matches just collects them.
  await agent
    .waitFor((line) => {
      if (/"level":(40|50|60)/.test(line)) found.push(line);
      return undefined;
    }, 1)
    .catch(() => undefined);
  return found.slice(0, 10);
}
