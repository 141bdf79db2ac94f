import { DatabaseConnectionLostError, DatabaseUnavailableError } from '../../errors/index.js';
import { describeError, type OutageLog } from '../../outage-log.js';

/**
 * Which errors mean PostgreSQL went away (rather than refusing a statement),
 * and whether the work that failed can safely run again.
 */

/** Socket errors: the connection could not be made, or broke. */
const SOCKET_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** admin_shutdown, crash_shutdown, cannot_connect_now; class 08 (connection exception) is matched by prefix. */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03']);

/** Refusals at connection time only: nothing was sent, and the server may take us a moment later. */
const CONNECT_ONLY_CODES = new Set([
  // too_many_connections
  '53300',
  // a unix socket that is not there (yet)
  'ENOENT',
]);

/** pg's own messages for a connection that is gone or could not be had. */
const LOST_MESSAGES = [/^Connection terminated/, /^timeout exceeded when trying to connect/];
/** pg refused to send the statement at all: the client's connection had already failed. */
const NOT_SENT_MESSAGES = [/^Client has encountered a connection error and is not queryable/];

/**
 * Where the work was when the error came:
 * - connect: getting a client from the pool (nothing sent yet);
 * - transaction: BEGIN or a statement inside a transaction (COMMIT not sent);
 * - commit: COMMIT was sent;
 * - statement: a single statement outside a transaction (it commits by itself).
 */
export type FailurePhase = 'connect' | 'transaction' | 'commit' | 'statement';

/**
 * - never-reached: the statement was not sent; running it again is safe;
 * - lost-before-commit: the connection broke inside a transaction before COMMIT was sent, so
 *   PostgreSQL rolled it back; running the transaction again is safe;
 * - ambiguous: the connection broke while a statement that commits (COMMIT, or a single statement)
 *   was on its way: it may have been saved. Not repeated.
 */
export type ConnectionFailure = 'never-reached' | 'lost-before-commit' | 'ambiguous';

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : '';
}

/** Every error to look at: the error, what it aggregates, and its causes. */
function family(error: unknown): unknown[] {
  const all: unknown[] = [];
  const visit = (item: unknown, depth: number) => {
    if (item === undefined || item === null || depth > 3 || all.includes(item)) return;
    all.push(item);
    if (item instanceof AggregateError) for (const inner of item.errors) visit(inner, depth + 1);
    if (item instanceof Error) visit(item.cause, depth + 1);
  };
  visit(error, 0);
  return all;
}

/** The connection failed or broke: a socket error, a server shutting the session down, or pg saying the connection is gone. */
export function isConnectionError(error: unknown, phase: FailurePhase = 'statement'): boolean {
  return family(error).some((item) => {
    const code = codeOf(item);
    if (code && (SOCKET_CODES.has(code) || SERVER_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
    if (phase === 'connect' && code && CONNECT_ONLY_CODES.has(code)) return true;
    const message = messageOf(item);
    return [...LOST_MESSAGES, ...NOT_SENT_MESSAGES].some((pattern) => pattern.test(message));
  });
}

/** pg did not send the statement: its client had already lost its connection. */
function notSent(error: unknown): boolean {
  return family(error).some((item) => NOT_SENT_MESSAGES.some((pattern) => pattern.test(messageOf(item))));
}

/**
 * Whether `error`, met in `phase`, means the database went away, and if so
 * what that says about the work. Undefined: not a connection failure (a
 * constraint, a syntax error, a deadlock…), to be handled as before.
 * `connectionLost` is true when the client had already reported its
 * connection broken, whatever the error the work then saw.
 */
export function classifyConnectionFailure(
  error: unknown,
  phase: FailurePhase,
  connectionLost = false,
): ConnectionFailure | undefined {
  if (!isConnectionError(error, phase)) {
    // A server's answer (a constraint, a deadlock) says what happened to the statement, whatever came after.
    const serverAnswer = family(error).some((item) => /^(?=.*\d)[0-9A-Z]{5}$/.test(codeOf(item) ?? ''));
    if (!connectionLost || serverAnswer) return undefined;
  }
  if (phase === 'connect') return 'never-reached';
  if (notSent(error)) return phase === 'statement' ? 'never-reached' : 'lost-before-commit';
  // 57P03 (cannot_connect_now) answers a connection attempt only: nothing ran.
  if (family(error).some((item) => codeOf(item) === '57P03')) return phase === 'statement' ? 'never-reached' : 'lost-before-commit';
  if (phase === 'transaction') return 'lost-before-commit';
  return 'ambiguous';
}

/** The code that best names why: ECONNREFUSED, 57P01, CONNECT_TIMEOUT… */
export function connectionErrorCode(error: unknown): string {
  for (const item of family(error)) {
    const code = codeOf(item);
    if (code) return code;
  }
  const message = family(error).map(messageOf).join(' ');
  if (/timeout/i.test(message)) return 'CONNECT_TIMEOUT';
  if (/terminated/i.test(message)) return 'CONNECTION_TERMINATED';
  return 'UNKNOWN';
}

/** The service's own error for a connection failure: unavailable (nothing saved) or lost (may be saved). */
export function databaseError(
  error: unknown,
  failure: ConnectionFailure,
  phase: FailurePhase = 'statement',
): DatabaseUnavailableError | DatabaseConnectionLostError {
  const code = connectionErrorCode(error);
  if (failure === 'ambiguous') {
    const during = phase === 'commit' ? 'COMMIT' : 'a statement';
    return new DatabaseConnectionLostError(
      `The database connection was lost (${code}) while ${during} was on its way; whether it took effect is unknown`,
      { cause: error },
    );
  }
  return new DatabaseUnavailableError(`The database is unreachable (${code})`, { cause: error });
}

/** The database was unreachable or went away: the error a request answers with 503. */
export function isDatabaseOutage(error: unknown): error is DatabaseUnavailableError | DatabaseConnectionLostError {
  return error instanceof DatabaseUnavailableError || error instanceof DatabaseConnectionLostError;
}

/** What a failure report writes through; a pino logger fits. */
interface WarnLogger {
  warn(fields: Record<string, unknown>, message: string): void;
}

/**
 * Tells a failure of work (a scheduler tick, a delivery round, a request)
 * that the database caused: unreachable goes to the outage log, which says
 * it once per outage; a connection lost while a statement was on its way is
 * one warning (the database may well be up: a backend was killed, a
 * connection cut). False for any other error, which the caller logs as it
 * always has.
 */
export function reportDatabaseFailure(outage: OutageLog, logger: WarnLogger, what: string, error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) {
    outage.failed(what, error);
    return true;
  }
  if (error instanceof DatabaseConnectionLostError) {
    logger.warn({ what, error: describeError(error) }, `${what} failed: ${error.message}`);
    return true;
  }
  return false;
}
