import pg from 'pg';
import type { OutageLogger } from '../../outage-log.js';

const FIRST_PAUSE_MS = 500;
const MAX_PAUSE_MS = 10_000;

export interface ListenerOptions {
  connectTimeoutMs: number;
  logger: OutageLogger;
}

/**
 * LISTEN on a connection of its own: a pooled connection goes back to the
 * pool between statements and would stop hearing. A lost connection is made
 * again after a pause that doubles up to 10 s; what was sent meanwhile is not
 * heard. Resolves after the first attempt, heard or not; the answer stops listening.
 */
export async function listenOnOwnConnection(
  connectionString: string,
  channel: string,
  onNotify: (payload: string) => void,
  options: ListenerOptions,
): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let pause = FIRST_PAUSE_MS;
  // Told once when hearing stops and once when it is back, not once per attempt.
  let deaf = false;

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => void open(), pause);
    timer.unref();
    pause = Math.min(pause * 2, MAX_PAUSE_MS);
  };

  const open = async (): Promise<void> => {
    const candidate = new pg.Client({
      connectionString,
      connectionTimeoutMillis: options.connectTimeoutMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    let gone = false;
    const lose = (error?: unknown) => {
      if (gone) return;
      gone = true;
      if (client === candidate) client = undefined;
      void candidate.end().catch(() => undefined);
      if (stopped) return;
      if (!deaf) {
        deaf = true;
        options.logger.warn(
          { channel, err: error },
          `not hearing NOTIFY ${channel} from the database; other instances' news arrives by polling until it is back`,
        );
      }
      schedule();
    };
    // Without an 'error' listener a broken connection would crash the process.
    candidate.on('error', lose);
    candidate.on('end', () => lose());
    candidate.on('notification', (message) => {
      if (message.channel === channel && message.payload !== undefined) onNotify(message.payload);
    });
    try {
      await candidate.connect();
      await candidate.query(`LISTEN ${candidate.escapeIdentifier(channel)}`);
    } catch (error) {
      lose(error);
      return;
    }
    if (stopped) {
      gone = true;
      await candidate.end().catch(() => undefined);
      return;
    }
    client = candidate;
    pause = FIRST_PAUSE_MS;
    if (deaf) {
      deaf = false;
      options.logger.info({ channel }, `hearing NOTIFY ${channel} again`);
    }
  };

  await open();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    const listening = client;
    client = undefined;
    await listening?.end().catch(() => undefined);
  };
}
