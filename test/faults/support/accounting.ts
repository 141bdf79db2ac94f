/**
 * The fault suite's bookkeeping: what became of every session a scenario
 * triggered, counted the same way in every scenario, printed as one line and
 * written to test/faults/.results/<scenario>.json for the docs.
 *
 * "Lost" is every triggered session that did not end PASSED against the
 * healthy target: a session TIMED_OUT because its job was given up never ran,
 * and one still unfinished at the scenario's deadline did not run in time.
 * "Run twice" is read off the target: every check has a path of its own, so
 * hits on a path beyond the sessions of that check are extra runs.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export const FINAL_STATUSES: ReadonlySet<string> = new Set(['PASSED', 'FAILED', 'DEGRADED', 'TIMED_OUT', 'CANCELLED']);

/** One triggered session as the scenario last saw it. */
export interface SessionOutcome {
  /** The target path its check requests. */
  path: string;
  /** Last status read; undefined when never read. */
  status: string | undefined;
  /** When the trigger call that started it was sent (ms since the epoch). */
  triggeredAt: number;
  /** When it ended (the service's stoppedAt, or when it was first seen final). */
  finalAt: number | undefined;
}

export interface Figures {
  scenario: string;
  triggered: number;
  /** Sessions in a final status. */
  finished: number;
  passed: number;
  timedOut: number;
  failed: number;
  /** DEGRADED and CANCELLED. */
  other: number;
  /** Not final when the scenario stopped waiting. */
  unfinished: number;
  /** triggered − passed. */
  lost: number;
  /** Σ over paths of max(0, hits − sessions). */
  runTwice: number;
  /** Paths with fewer hits than finished sessions of theirs: a result without a request (should never happen). */
  hitsMissing: number;
  /** From the first trigger to the last session's end; null while any is unfinished. */
  allFinishedMs: number | null;
  /** From `faultEndAt` (the fault over: process back, connections open) to the last session's end; null when unknown. */
  afterFaultMs: number | null;
  /** The longest any session took from its trigger to its end; null while any is unfinished. */
  slowestSessionMs: number | null;
  /** Anything else the scenario measured (exit times, readiness, …). */
  extra: Record<string, unknown>;
}

export interface AccountingInput {
  scenario: string;
  sessions: readonly SessionOutcome[];
  /** Target hits per path. */
  hits: ReadonlyMap<string, number>;
  faultEndAt?: number;
  extra?: Record<string, unknown>;
}

export function account(input: AccountingInput): Figures {
  const { sessions, hits } = input;
  const count = (status: string) => sessions.filter((session) => session.status === status).length;
  const final = sessions.filter((session) => session.status !== undefined && FINAL_STATUSES.has(session.status));
  const passed = count('PASSED');
  const perPath = new Map<string, { sessions: number; finished: number }>();
  for (const session of sessions) {
    const entry = perPath.get(session.path) ?? { sessions: 0, finished: 0 };
    entry.sessions += 1;
    if (final.includes(session)) entry.finished += 1;
    perPath.set(session.path, entry);
  }
  let runTwice = 0;
  let hitsMissing = 0;
  for (const [path, entry] of perPath) {
    const got = hits.get(path) ?? 0;
    runTwice += Math.max(0, got - entry.sessions);
    // Only sessions that ran count here: a TIMED_OUT session never reached the target.
    const ran = sessions.filter((session) => session.path === path && session.status !== undefined && ['PASSED', 'FAILED', 'DEGRADED'].includes(session.status)).length;
    if (got < ran) hitsMissing += ran - got;
  }
  const allFinal = final.length === sessions.length && sessions.length > 0;
  const ends = final.map((session) => session.finalAt ?? Number.NaN);
  const lastEnd = allFinal && ends.every(Number.isFinite) ? Math.max(...ends) : undefined;
  const firstTrigger = sessions.length > 0 ? Math.min(...sessions.map((session) => session.triggeredAt)) : undefined;
  return {
    scenario: input.scenario,
    triggered: sessions.length,
    finished: final.length,
    passed,
    timedOut: count('TIMED_OUT'),
    failed: count('FAILED'),
    other: count('DEGRADED') + count('CANCELLED'),
    unfinished: sessions.length - final.length,
    lost: sessions.length - passed,
    runTwice,
    hitsMissing,
    allFinishedMs: lastEnd !== undefined && firstTrigger !== undefined ? lastEnd - firstTrigger : null,
    afterFaultMs: lastEnd !== undefined && input.faultEndAt !== undefined ? lastEnd - input.faultEndAt : null,
    slowestSessionMs:
      lastEnd !== undefined ? Math.max(...sessions.map((session) => (session.finalAt ?? 0) - session.triggeredAt)) : null,
    extra: input.extra ?? {},
  };
}

const seconds = (ms: number | null) => (ms === null ? 'never (unfinished)' : `${(ms / 1000).toFixed(1)} s`);

/** The one line a scenario prints. */
export function formatFigures(figures: Figures): string {
  const extra = Object.entries(figures.extra)
    .map(([key, value]) => `${key} ${typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value as string | number | boolean | null | undefined)}`)
    .join(' · ');
  return (
    `[fault ${figures.scenario}] triggered ${figures.triggered} · finished ${figures.finished} ` +
    `(passed ${figures.passed}, timed out ${figures.timedOut}, failed ${figures.failed}, other ${figures.other}) · ` +
    `unfinished ${figures.unfinished} · lost ${figures.lost} · run twice ${figures.runTwice} · ` +
    `all finished in ${seconds(figures.allFinishedMs)}` +
    (figures.afterFaultMs !== null ? ` (${seconds(figures.afterFaultMs)} after the fault)` : '') +
    (figures.hitsMissing > 0 ? ` · results without a request ${figures.hitsMissing}` : '') +
    (extra ? ` · ${extra}` : '')
  );
}

export const RESULTS_DIR = fileURLToPath(new URL('../.results/', import.meta.url));

/** Prints the line and writes the figures to .results/<scenario>.json. */
export async function publish(figures: Figures, dir = RESULTS_DIR): Promise<void> {
  console.log(formatFigures(figures));
  await mkdir(dir, { recursive: true });
  const file = `${dir}/${figures.scenario.replace(/[^A-Za-z0-9._-]+/g, '-')}.json`;
  await writeFile(file, `${JSON.stringify({ ...figures, recordedAt: new Date().toISOString() }, null, 2)}\n`);
}
