/**
 * One line when a dependency goes away, one when it is back: work that runs
 * every second (a scheduler tick, a poller, delivery rounds) must not write a
 * line per attempt while a database or a service is down. The first failure
 * of an outage is logged with what failed and why; the rest are counted and
 * summed up in the recovery line.
 */

/** What an outage log writes through; a pino logger fits. */
export interface OutageLogger {
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

export interface OutageLogOptions {
  logger: OutageLogger;
  /** What went away, as the lines name it: "the database", "the service". */
  subject: string;
  /** Level of the line that starts an outage; warn unless said. */
  level?: 'warn' | 'error';
  /** Clock, for tests. */
  now?: () => number;
}

export interface Outage {
  /** When the first failure happened (ms since the epoch). */
  since: number;
  /** Failures so far, the first included. */
  failures: number;
  /** Failures so far by what failed ("scheduler tick": 4, …). */
  byWhat: Record<string, number>;
  /** What failed first, and why. */
  first: { what: string; error: string };
}

export interface OutageLog {
  /**
   * `what` failed because the subject is unreachable. The first failure of an
   * outage is logged; later ones are only counted. True when this one started
   * the outage.
   */
  failed(what: string, error: unknown): boolean;
  /**
   * Something worked. Ends the outage under way, if any, with one line saying
   * how long it lasted and how many failures it saw. True when it ended one.
   */
  recovered(): boolean;
  /** True between a failure and the next success. */
  readonly down: boolean;
  /** The outage under way, or undefined. */
  readonly current: Readonly<Outage> | undefined;
}

export function createOutageLog(options: OutageLogOptions): OutageLog {
  const now = options.now ?? Date.now;
  const level = options.level ?? 'warn';
  let outage: Outage | undefined;
  return {
    failed(what, error) {
      const reason = describeError(error);
      if (outage) {
        outage.failures += 1;
        outage.byWhat[what] = (outage.byWhat[what] ?? 0) + 1;
        return false;
      }
      outage = { since: now(), failures: 1, byWhat: { [what]: 1 }, first: { what, error: reason } };
      options.logger[level](
        { what, error: reason },
        `${options.subject} is unreachable: ${what} failed (${reason}); further failures are counted until it is back`,
      );
      return true;
    },
    recovered() {
      if (!outage) return false;
      const ended = outage;
      outage = undefined;
      const seconds = Math.max(0, Math.round((now() - ended.since) / 1000));
      const rounds = `${ended.failures} ${ended.failures === 1 ? 'round' : 'rounds'}`;
      options.logger.info(
        { downSeconds: seconds, failures: ended.failures, byWhat: ended.byWhat, firstFailure: ended.first },
        `${options.subject} is reachable again after ${seconds} s; ${rounds} failed`,
      );
      return true;
    },
    get down() {
      return outage !== undefined;
    },
    get current() {
      return outage;
    },
  };
}

/** "DATABASE_UNAVAILABLE: … ← ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432": codes and messages, no stack. */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 4; depth += 1) {
    if (current instanceof Error) {
      const code = (current as { code?: unknown }).code;
      const text = current.message || current.name;
      parts.push(typeof code === 'string' && !text.includes(code) ? `${code}: ${text}` : text);
      current = current.cause;
    } else {
      parts.push(typeof current === 'string' ? current : `a thrown ${typeof current}`);
      break;
    }
  }
  return parts.join(' ← ') || 'unknown error';
}
