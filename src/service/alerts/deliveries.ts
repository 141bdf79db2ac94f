import { createHmac, randomUUID } from 'node:crypto';
import { fetch, type Dispatcher, type RequestInit as UndiciRequestInit } from 'undici';
import { DestinationDeniedError } from '../../errors/index.js';
import type { Queryable } from '../db/database.js';
import type { Logger } from '../../logging.js';
import type { Mailer } from '../mail/mailer.js';
import { channelForDelivery, type ChannelRecord } from '../store/alert-channels.js';
import { claimDueDeliveries, insertAlertDelivery, markDeliveryDelivered, markDeliveryFailed } from '../store/alert-deliveries.js';
import type { AlertEvent } from './events.js';

/** Tries per delivery; the delays double from the base between them. */
export const MAX_DELIVERY_ATTEMPTS = 5;
const CLAIM_SECONDS = 300;
const TIMEOUT_MS = 10_000;

export interface DeliveryTarget {
  channel: ChannelRecord;
  event: AlertEvent;
}

/** One delivery per channel, written in the caller's transaction. */
export async function enqueueDeliveries(tx: Queryable, accountId: string, targets: readonly DeliveryTarget[]): Promise<void> {
  for (const { channel, event } of targets) {
    await insertAlertDelivery(tx, { id: randomUUID(), accountId, channelId: channel.id, channelType: channel.type, event });
  }
}

/** Refused for good: retrying cannot help (no provider, the channel is gone). */
class PermanentFailure extends Error {}

/**
 * `x-outpost-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`
 * with the channel's signing secret: the receiver recomputes it, and refuses
 * a timestamp too old to stop replays.
 */
export function signature(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

function textOf(event: AlertEvent): string {
  const what = {
    ALERT_FAILURE: 'is failing',
    ALERT_RECOVERY: 'has recovered',
    ALERT_DEGRADED: 'is degraded',
    ALERT_REMINDER: 'is still failing',
  }[event.event];
  const where = event.results.map((result) => result.runLocation).join(', ');
  const error = event.results.find((result) => result.error)?.error;
  return `${event.check.name} ${what}${where ? ` (${where})` : ''}${error ? `: ${error.message}` : ''}`;
}

/** The receiver's answer was not a 2xx: kept for the operator's log, never for the delivery record. */
class RefusedByReceiver extends Error {
  constructor(readonly status: number) {
    super(`the receiver answered ${status}`);
  }
}

/** Redirects are not followed: a public URL must not bounce a delivery to an address the policy would refuse. */
async function post(url: string, init: UndiciRequestInit, dispatcher: Dispatcher | undefined): Promise<number> {
  const response = await fetch(url, {
    ...init,
    signal: AbortSignal.timeout(TIMEOUT_MS),
    redirect: 'manual',
    ...(dispatcher ? { dispatcher } : {}),
  });
  await response.body?.cancel();
  if (response.status < 200 || response.status > 299) throw new RefusedByReceiver(response.status);
  return response.status;
}

async function send(
  channel: ChannelRecord & { signingSecret: string },
  event: AlertEvent,
  deliveryId: string,
  mailer: Mailer,
  options: DeliveryOptions,
): Promise<number | null> {
  const config = channel.config;
  switch (channel.type) {
    case 'WEBHOOK': {
      const url = new URL(String(config.url));
      for (const { key, value } of (config.queryParameters ?? []) as { key: string; value: string }[]) url.searchParams.append(key, value);
      const method = typeof config.method === 'string' ? config.method : 'POST';
      const body = method === 'GET' ? '' : JSON.stringify(event);
      const headers: Record<string, string> = {
        'user-agent': 'Outpost-Alerts',
        'x-outpost-event': event.event,
        'x-outpost-delivery': deliveryId,
        'x-outpost-signature': signature(channel.signingSecret, Math.floor(Date.now() / 1000), body),
      };
      if (body) headers['content-type'] = 'application/json';
      for (const { key, value } of (config.headers ?? []) as { key: string; value: string }[]) headers[key.toLowerCase()] = value;
      return post(url.toString(), { method, headers, ...(body ? { body } : {}) }, options.dispatcher);
    }
    case 'SLACK':
      return post(
        String(config.url),
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: textOf(event) }) },
        options.dispatcher,
      );
    case 'SMS':
      if (!options.smsWebhookUrl) throw new PermanentFailure('no SMS provider is configured (SMS_WEBHOOK_URL)');
      // The operator's own provider, not a user's URL: it may live next to the service, so no destination policy.
      return post(
        options.smsWebhookUrl,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ to: config.number, name: config.name, message: textOf(event) }),
        },
        undefined,
      );
    case 'EMAIL':
      await mailer.send({
        to: String(config.address),
        subject: `[Outpost] ${textOf(event)}`.slice(0, 250),
        text: [textOf(event), '', JSON.stringify(event, null, 2)].join('\n'),
      });
      return null;
  }
}

export interface DeliveryOptions {
  retryBaseMs: number;
  smsWebhookUrl: string | undefined;
  /** Connects webhook and Slack deliveries, only where the webhook destination policy allows. */
  dispatcher: Dispatcher;
}

/**
 * What a delivery record says of a failure. The account reads it, and its
 * webhook URLs are its own to choose: whatever a receiver answered (status,
 * body, refused or timed out) would make deliveries a probe of internal
 * services, so only the service's own reasons are told; the rest is in the log.
 */
function recordedReason(error: unknown, type: ChannelRecord['type'] | undefined): string {
  if (error instanceof PermanentFailure) return error.message;
  if (error instanceof DestinationDeniedError) return "the destination is denied by the service's webhook destination policy";
  return type === 'EMAIL' ? 'the mail server did not accept it' : 'the receiver did not accept it';
}

/**
 * Sends what is due, a batch at a time, claimed the way the e-mail outbox
 * claims (no transaction held while sending). A 2xx answer (or an accepted
 * e-mail) is delivered; anything else is retried after `retryBaseMs` ×
 * 2^(attempt − 1), up to MAX_DELIVERY_ATTEMPTS, and recorded either way. A
 * denied destination is not retried: the policy will not change its mind.
 */
export async function deliverDueAlerts(
  db: Queryable,
  mailer: Mailer,
  logger: Logger,
  options: DeliveryOptions,
  batch = 20,
): Promise<number> {
  const due = await claimDueDeliveries(db, batch, CLAIM_SECONDS);
  for (const delivery of due) {
    let channel: (ChannelRecord & { signingSecret: string }) | undefined;
    try {
      channel = delivery.channel_id === null ? undefined : await channelForDelivery(db, delivery.channel_id);
      if (!channel) throw new PermanentFailure('the alert channel was deleted');
      const status = await send(channel, delivery.payload, delivery.id, mailer, options);
      await markDeliveryDelivered(db, delivery.id);
      logger.debug({ deliveryId: delivery.id, channelId: channel.id, status }, 'alert delivered');
    } catch (error) {
      const cause = deniedIn(error) ?? error;
      const last = error instanceof PermanentFailure || cause instanceof DestinationDeniedError || delivery.attempts >= MAX_DELIVERY_ATTEMPTS;
      await markDeliveryFailed(db, delivery.id, {
        error: recordedReason(cause, channel?.type),
        giveUp: last,
        retryInSeconds: (options.retryBaseMs * 2 ** (delivery.attempts - 1)) / 1000,
      });
      logger.warn(
        {
          deliveryId: delivery.id,
          channelId: delivery.channel_id,
          attempt: delivery.attempts,
          status: cause instanceof RefusedByReceiver ? cause.status : undefined,
          err: describe(cause),
        },
        last ? 'alert delivery given up' : 'alert delivery failed; will retry',
      );
    }
  }
  return due.length;
}

/** fetch wraps what the connector threw ("fetch failed", its cause the reason). */
function deniedIn(error: unknown): DestinationDeniedError | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth += 1) {
    if (current instanceof DestinationDeniedError) return current;
  }
  return undefined;
}

/** fetch says "fetch failed" and keeps the reason in `cause`: the log wants the reason. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
