import { Redis } from 'ioredis';
import type { Logger } from '../logging.js';
import { startEmbeddedRedis, type EmbeddedRedis } from './embedded-redis.js';
import type { Readiness } from './readiness.js';

/** The Redis the agent's BullMQ lanes use: its own redis-server child, or REDIS_URL's. */
export interface QueueRedis {
  connection: Redis;
  /** How log lines and readiness name it. */
  where: string;
  /** Disconnects, and stops the embedded redis-server if there is one. */
  close(): Promise<void>;
}

/**
 * Connects the lanes' Redis, starting an embedded redis-server when no URL is
 * given, and waits for it (see waitForRedis). Loaded only by agents that
 * queue in Redis.
 */
export async function connectQueueRedis(redisUrl: string | undefined, readiness: Readiness, logger: Logger): Promise<QueueRedis> {
  let embedded: EmbeddedRedis | undefined;
  let connection: Redis | undefined;
  const close = async () => {
    connection?.disconnect();
    await embedded?.stop();
  };
  try {
    if (!redisUrl) {
      embedded = await startEmbeddedRedis();
      logger.info('started an embedded redis-server (REDIS_URL is not set)');
    }
    connection = embedded
      ? new Redis({ path: embedded.socketPath, password: embedded.password, maxRetriesPerRequest: null })
      : new Redis(redisUrl!, { maxRetriesPerRequest: null });
    await waitForRedis(connection, redisUrl, readiness, logger);
    return { connection, where: redisName(redisUrl), close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Waits for Redis without giving up: an agent whose Redis is down at start
 * stays up, not ready, and says why, until Redis comes.
 */
async function waitForRedis(redis: Redis, url: string | undefined, readiness: Readiness, logger: Logger): Promise<void> {
  if (redis.status === 'ready') return;
  const where = redisName(url);
  let said = '';
  const onError = (error: Error) => {
    const message = `${where} is not reachable (${(error as NodeJS.ErrnoException).code ?? error.message}); retrying`;
    readiness.setRedisProblem(message);
    if (message !== said) logger.error(message);
    said = message;
  };
  redis.on('error', onError);
  try {
    // Not events.once: it rejects on the first 'error', and errors here are expected.
    await new Promise((resolve) => redis.once('ready', resolve));
  } finally {
    redis.off('error', onError);
    // Until the agent's RedisWatch follows the connection: an 'error' without a listener is printed raw by ioredis.
    redis.on('error', () => undefined);
  }
  if (said) logger.info(`${where} is reachable again`);
  readiness.setRedisProblem(undefined);
  readiness.set('starting', 'connecting to the service');
}

export function redisName(url: string | undefined): string {
  return url ? `Redis at ${new URL(url).host}` : 'the embedded redis-server';
}
