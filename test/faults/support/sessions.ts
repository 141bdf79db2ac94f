/**
 * Every session a scenario triggered, read back through the public API
 * (GET /v1/check-sessions/{id}) in the background while the scenario runs, so
 * that a fault's moment can be compared with what had finished by then.
 * Reads tolerate a service that is down or paused: a round gives up at the
 * first batch that gets no answer, and the last status seen stays.
 */
import { FINAL_STATUSES, type SessionOutcome } from './accounting.js';
import { sleep } from './processes.js';

interface Tracked extends SessionOutcome {
  id: string;
  group: string;
}

type Reader = (path: string) => Promise<{ status: number; body: any }>;

const BATCH = 25;

export class SessionTracker {
  readonly #sessions = new Map<string, Tracked>();
  #loop: Promise<void> | undefined;
  #stopped = false;
  #round: Promise<void> | undefined;

  constructor(private readonly read: Reader) {}

  add(session: { id: string; path: string; triggeredAt: number; group: string }): void {
    this.#sessions.set(session.id, { ...session, status: undefined, finalAt: undefined });
  }

  /** Reads every session not yet final, once (a round already under way is joined). */
  refresh(): Promise<void> {
    return (this.#round ??= this.#refresh().finally(() => (this.#round = undefined)));
  }

  async #refresh(): Promise<void> {
    const open = [...this.#sessions.values()].filter((session) => !this.#final(session));
    for (let start = 0; start < open.length; start += BATCH) {
      const answers = await Promise.all(
        open.slice(start, start + BATCH).map(async (session) => {
          const answer = await this.read(`/v1/check-sessions/${session.id}`);
          if (answer.status !== 200) return false;
          session.status = answer.body.status;
          if (this.#final(session) && session.finalAt === undefined) {
            const stopped = typeof answer.body.stoppedAt === 'string' ? Date.parse(answer.body.stoppedAt) : Number.NaN;
            session.finalAt = Number.isFinite(stopped) ? stopped : Date.now();
          }
          return true;
        }),
      );
      // No answer at all: the service is down or paused; the next round tries again.
      if (!answers.some(Boolean)) return;
    }
  }

  /** Reads in the background, every ~500 ms, until `stop`. */
  start(): void {
    this.#loop ??= (async () => {
      while (!this.#stopped) {
        await this.refresh();
        await sleep(500);
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#loop;
    await this.#round;
  }

  #final(session: Tracked): boolean {
    return session.status !== undefined && FINAL_STATUSES.has(session.status);
  }

  #of(group?: string): Tracked[] {
    return [...this.#sessions.values()].filter((session) => group === undefined || session.group === group);
  }

  /** Sessions not known to be final (of one group, or all). */
  unfinished(group?: string): number {
    return this.#of(group).filter((session) => !this.#final(session)).length;
  }

  /** Waits until every session (of a group) is final or `deadline` (ms since the epoch) passes; true when all are. */
  async waitAllFinal(deadline: number, group?: string): Promise<boolean> {
    for (;;) {
      await this.refresh();
      if (this.unfinished(group) === 0) return true;
      if (Date.now() >= deadline) return false;
      await sleep(Math.min(500, Math.max(0, deadline - Date.now())));
    }
  }

  outcomes(group?: string): SessionOutcome[] {
    return this.#of(group).map(({ path, status, triggeredAt, finalAt }) => ({ path, status, triggeredAt, finalAt }));
  }

  /** Each session of a group with its id, for scenarios that look at sessions one by one. */
  all(group?: string): (SessionOutcome & { id: string })[] {
    return this.#of(group).map(({ id, path, status, triggeredAt, finalAt }) => ({ id, path, status, triggeredAt, finalAt }));
  }
}
