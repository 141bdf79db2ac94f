/**
 * The conversation part of a TCP check, on a socket that is already open:
 * send the check's data, then read what comes back, and decide when the
 * answer is over. TCP has no message boundaries, so "over" is a rule:
 *
 *   the read ends at the first of
 *   - the peer closing the connection (FIN; a reset after some bytes counts too),
 *   - the cap: more than `maxBytes` received (the rest is dropped, truncated),
 *   - `quietMs` of silence after the latest bytes (servers that answer and
 *     keep the connection open, e.g. SMTP or SSH banners),
 *   - `answerBy`: the moment waiting stops paying off, as any answer after it
 *     is too late to pass (the probe passes start + maxResponseTime).
 *
 * Before the first byte there is no quiet period: a slow server gets until
 * `answerBy`. When there is nothing to read for (no data sent, nothing
 * asserted on the answer), nothing is read and the connect is the check.
 */
import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import { ConnectError } from '../../errors/index.js';
import { endpoint } from './http-connector.js';

export interface ExchangePlan {
  /** Written once, as UTF-8; empty: nothing is sent. */
  data: string;
  /** false: the exchange ends as soon as it starts, without reading. */
  read: boolean;
  maxBytes: number;
  quietMs: number;
  /** performance.now() timestamp past which no more bytes are waited for. */
  answerBy: number;
}

export type ReadEnd = 'not-read' | 'peer-closed' | 'reset' | 'quiet' | 'cap' | 'answer-window';

/** Filled in as the exchange happens, so a failed run still shows what it got. */
export interface ExchangeRecord {
  /** When the data was written, or the wait began when nothing was sent. */
  sentAt: number | null;
  firstByteAt: number | null;
  lastByteAt: number | null;
  endedAt: number | null;
  endedBy: ReadEnd | null;
  /** Bytes kept, at most maxBytes. */
  bytesRead: number;
  /** More than maxBytes arrived; the rest was not read. */
  truncated: boolean;
  chunks: Buffer[];
}

export function newExchangeRecord(): ExchangeRecord {
  return {
    sentAt: null,
    firstByteAt: null,
    lastByteAt: null,
    endedAt: null,
    endedBy: null,
    bytesRead: 0,
    truncated: false,
    chunks: [],
  };
}

/**
 * Resolves when the read ends by the rule above; rejects with the signal's
 * reason on abort, or a ConnectError when the connection breaks before any
 * answer. Never closes the socket: that is the caller's, in its finally.
 */
export function exchange(
  socket: net.Socket,
  plan: ExchangePlan,
  record: ExchangeRecord,
  signal: AbortSignal,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let quietTimer: NodeJS.Timeout | undefined;
    let windowTimer: NodeJS.Timeout | undefined;
    const where = endpoint(socket.remoteAddress ?? '?', socket.remotePort ?? 0);

    const cleanup = (): void => {
      clearTimeout(quietTimer);
      clearTimeout(windowTimer);
      signal.removeEventListener('abort', onAbort);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      socket.off('error', onError);
      // Stop pulling bytes nobody will look at.
      socket.pause();
    };
    const finish = (how: ReadEnd): void => {
      cleanup();
      record.endedBy = how;
      record.endedAt = performance.now();
      resolve();
    };
    const fail = (error: Error): void => {
      cleanup();
      reject(error);
    };

    const onData = (chunk: Buffer): void => {
      const now = performance.now();
      record.firstByteAt ??= now;
      record.lastByteAt = now;
      const room = plan.maxBytes - record.bytesRead;
      if (chunk.length > room) {
        if (room > 0) record.chunks.push(chunk.subarray(0, room));
        record.bytesRead = plan.maxBytes;
        record.truncated = true;
        finish('cap');
        return;
      }
      record.chunks.push(chunk);
      record.bytesRead += chunk.length;
      clearTimeout(quietTimer);
      quietTimer = setTimeout(() => finish('quiet'), plan.quietMs);
    };
    const onEnd = (): void => finish('peer-closed');
    const onError = (error: NodeJS.ErrnoException): void => {
      // A reset after an answer still leaves the answer; before one, the service is broken.
      if ((error.code === 'ECONNRESET' || error.code === 'EPIPE') && record.bytesRead > 0) {
        finish('reset');
        return;
      }
      fail(new ConnectError(describeBreak(where, error, record.bytesRead), { cause: error }));
    };
    const onAbort = (): void => fail(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
    const watchWindow = (): void => {
      // Timers may fire a little early by performance.now(); never end the wait before answerBy.
      const left = plan.answerBy - performance.now();
      if (left <= 0) finish('answer-window');
      else windowTimer = setTimeout(watchWindow, Math.ceil(left));
    };

    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('error', onError);
    record.sentAt = performance.now();
    if (plan.data !== '') socket.write(plan.data, 'utf8');
    if (!plan.read) {
      finish('not-read');
      return;
    }
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('close', onEnd);
    watchWindow();
  });
}

function describeBreak(where: string, error: NodeJS.ErrnoException, bytesRead: number): string {
  const when = bytesRead > 0 ? `after ${bytesRead} bytes` : 'before it answered';
  switch (error.code) {
    case 'ECONNRESET':
      return `Connection reset by ${where} ${when}`;
    case 'EPIPE':
      return `${where} closed the connection while the data was being sent`;
    default:
      return `Connection to ${where} failed ${when}: ${error.message}`;
  }
}

/** The answer as text; bytes that are not valid UTF-8 read as U+FFFD. */
export function responseText(record: ExchangeRecord): string {
  return Buffer.concat(record.chunks).toString('utf8');
}
