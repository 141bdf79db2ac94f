import { createHmac, randomUUID } from 'node:crypto';
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

async function post(url: string, init: RequestInit): Promise<number> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'manual' });
  await response.body?.cancel();
  if (response.status < 200 || response.status > 299) {
    throw Object.assign(new Error(`the receiver answered ${response.status}`), { status: response.status });
  }
  return response.status;
}

async function send(
  channel: ChannelRecord & { signingSecret: string },
  event: AlertEvent,
  deliveryId: string,
  mailer: Mailer,
  smsWebhookUrl: string | undefined,
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
      return post(url.toString(), { method, headers, ...(body ? { body } : {}) });
    }
    case 'SLACK':
      return post(String(config.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: textOf(event) }),
      });
    case 'SMS':
      if (!smsWebhookUrl) throw new PermanentFailure('no SMS provider is configured (SMS_WEBHOOK_URL)');
      return post(smsWebhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ to: config.number, name: config.name, message: textOf(event) }),
      });
    case 'EMAIL':
      await mailer.send({
        to: String(config.address),
        subject: `[Outpost] ${textOf(event)}`.slice(0, 250),
        text: [textOf(event), '', JSON.stringify(event, null, 2)].join('\n'),
      });
      return null;
  }
}

/**
 * Sends what is due, a batch at a time, claimed the way the e-mail outbox
 * claims (no transaction held while sending). A 2xx answer (or an accepted
 * e-mail) is delivered; anything else is retried after `retryBaseMs` ×
 * 2^(attempt − 1), up to MAX_DELIVERY_ATTEMPTS, and recorded either way.
 */
export async function deliverDueAlerts(
  db: Queryable,
  mailer: Mailer,
  logger: Logger,
  options: { retryBaseMs: number; smsWebhookUrl: string | undefined },
  batch = 20,
): Promise<number> {
  const due = await claimDueDeliveries(db, batch, CLAIM_SECONDS);
  for (const delivery of due) {
    try {
      const channel = delivery.channel_id === null ? undefined : await channelForDelivery(db, delivery.channel_id);
      if (!channel) throw new PermanentFailure('the alert channel was deleted');
      const status = await send(channel, delivery.payload, delivery.id, mailer, options.smsWebhookUrl);
      await markDeliveryDelivered(db, delivery.id, status);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const status = (error as { status?: number }).status ?? null;
      const last = error instanceof PermanentFailure || delivery.attempts >= MAX_DELIVERY_ATTEMPTS;
      await markDeliveryFailed(db, delivery.id, {
        error: message,
        status,
        giveUp: last,
        retryInSeconds: (options.retryBaseMs * 2 ** (delivery.attempts - 1)) / 1000,
      });
      logger.warn({ deliveryId: delivery.id, attempt: delivery.attempts, err: message }, last ? 'alert delivery given up' : 'alert delivery failed; will retry');
    }
  }
  return due.length;
}
