import { randomBytes } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import type { ChannelType } from '../alerts/channel-config.js';

export interface ChannelInput {
  type: ChannelType;
  config: Record<string, unknown>;
  sendFailure: boolean;
  sendRecovery: boolean;
  sendDegraded: boolean;
  autoSubscribe: boolean;
}

export interface ChannelRecord extends ChannelInput {
  id: number;
  created_at: string;
  updated_at: string | null;
}

interface ChannelRow {
  id: number;
  type: ChannelType;
  config: Record<string, unknown>;
  send_failure: boolean;
  send_recovery: boolean;
  send_degraded: boolean;
  auto_subscribe: boolean;
  signing_secret: string;
  created_at: Date;
  updated_at: Date | null;
}

const record = (row: ChannelRow): ChannelRecord => ({
  id: row.id,
  type: row.type,
  config: row.config,
  sendFailure: row.send_failure,
  sendRecovery: row.send_recovery,
  sendDegraded: row.send_degraded,
  autoSubscribe: row.auto_subscribe,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at?.toISOString() ?? null,
});

/** A new channel and, for the record once, the secret its webhook bodies are signed with. */
export async function createChannel(
  db: Queryable,
  accountId: string,
  input: ChannelInput,
): Promise<ChannelRecord & { signingSecret: string }> {
  const secret = `whsec_${randomBytes(24).toString('base64url')}`;
  const [row] = await db.query<ChannelRow>(
    `INSERT INTO alert_channels (account_id, type, config, send_failure, send_recovery, send_degraded, auto_subscribe, signing_secret)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [accountId, input.type, JSON.stringify(input.config), input.sendFailure, input.sendRecovery, input.sendDegraded, input.autoSubscribe, secret],
  );
  return { ...record(row!), signingSecret: secret };
}

export async function getChannel(db: Queryable, accountId: string, id: number): Promise<ChannelRecord | undefined> {
  const [row] = await db.query<ChannelRow>('SELECT * FROM alert_channels WHERE account_id = $1 AND id = $2', [accountId, id]);
  return row && record(row);
}

/** A channel with its signing secret: what a delivery needs. */
export async function channelForDelivery(
  db: Queryable,
  id: number,
): Promise<(ChannelRecord & { signingSecret: string }) | undefined> {
  const [row] = await db.query<ChannelRow>('SELECT * FROM alert_channels WHERE id = $1', [id]);
  return row && { ...record(row), signingSecret: row.signing_secret };
}

/** Oldest first: all of them, or one page. */
export async function listChannels(
  db: Queryable,
  accountId: string,
  page?: { limit: number; offset: number },
): Promise<ChannelRecord[]> {
  const rows = await db.query<ChannelRow>('SELECT * FROM alert_channels WHERE account_id = $1 ORDER BY id LIMIT $2 OFFSET $3', [
    accountId,
    page?.limit ?? null,
    page?.offset ?? 0,
  ]);
  return rows.map(record);
}

export async function countChannels(db: Queryable, accountId: string): Promise<number> {
  const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM alert_channels WHERE account_id = $1', [accountId]);
  return row!.n;
}

/** A check or a group that names a channel in its alertChannelSubscriptions. */
export interface ChannelSubscriber {
  channelId: number;
  kind: 'check' | 'group';
  id: string;
  name: string;
  activated: boolean;
}

const subscriptionsOf = (definition: string) =>
  `jsonb_array_elements(CASE WHEN jsonb_typeof(${definition}->'alertChannelSubscriptions') = 'array'
     THEN ${definition}->'alertChannelSubscriptions' ELSE '[]'::jsonb END)`;

/** The checks and groups subscribed to any of the channels, checks first, each by name. */
export async function channelSubscribers(db: Queryable, accountId: string, channelIds: readonly number[]): Promise<ChannelSubscriber[]> {
  if (channelIds.length === 0) return [];
  const rows = await db.query<{ channel_id: string; kind: 'check' | 'group'; id: string; name: string; activated: boolean }>(
    `SELECT s->>'alertChannelId' AS channel_id, 'check' AS kind, c.id::text AS id, c.name,
            COALESCE((s->>'activated')::boolean, true) AS activated
     FROM checks c, ${subscriptionsOf('c.definition')} s
     WHERE c.account_id = $1 AND s->>'alertChannelId' = ANY($2::text[])
     UNION ALL
     SELECT s->>'alertChannelId', 'group', g.id::text, g.name, COALESCE((s->>'activated')::boolean, true)
     FROM check_groups g, ${subscriptionsOf('g.definition')} s
     WHERE g.account_id = $1 AND s->>'alertChannelId' = ANY($2::text[])
     ORDER BY kind, name, id`,
    [accountId, channelIds.map(String)],
  );
  return rows.map((row) => ({ channelId: Number(row.channel_id), kind: row.kind, id: row.id, name: row.name, activated: row.activated }));
}

export async function channelsById(db: Queryable, accountId: string): Promise<Map<number, ChannelRecord>> {
  return new Map((await listChannels(db, accountId)).map((channel) => [channel.id, channel]));
}

export async function updateChannel(
  db: Queryable,
  accountId: string,
  id: number,
  input: ChannelInput,
): Promise<ChannelRecord | undefined> {
  const [row] = await db.query<ChannelRow>(
    `UPDATE alert_channels SET type = $3, config = $4, send_failure = $5, send_recovery = $6, send_degraded = $7,
       auto_subscribe = $8, updated_at = now()
     WHERE account_id = $1 AND id = $2 RETURNING *`,
    [accountId, id, input.type, JSON.stringify(input.config), input.sendFailure, input.sendRecovery, input.sendDegraded, input.autoSubscribe],
  );
  return row && record(row);
}

export async function deleteChannel(db: Queryable, accountId: string, id: number): Promise<boolean> {
  const rows = await db.query('DELETE FROM alert_channels WHERE account_id = $1 AND id = $2 RETURNING id', [accountId, id]);
  return rows.length > 0;
}

export interface AlertSettings {
  escalationType: string;
  runBasedEscalation: { failedRunThreshold: number };
  reminders: { amount: number; interval: number };
  parallelRunFailureThreshold: { enabled: boolean; percentage: number };
}

/** What an account starts with: alert on the first failed run, no reminders. */
export const DEFAULT_ALERT_SETTINGS: AlertSettings = {
  escalationType: 'RUN_BASED',
  runBasedEscalation: { failedRunThreshold: 1 },
  reminders: { amount: 0, interval: 5 },
  parallelRunFailureThreshold: { enabled: false, percentage: 10 },
};

export async function accountAlertSettings(db: Queryable, accountId: string): Promise<AlertSettings> {
  const [row] = await db.query<{ settings: AlertSettings }>('SELECT settings FROM account_alert_settings WHERE account_id = $1', [
    accountId,
  ]);
  return row?.settings ?? DEFAULT_ALERT_SETTINGS;
}

export async function saveAccountAlertSettings(db: Queryable, accountId: string, settings: AlertSettings): Promise<void> {
  await db.query(
    `INSERT INTO account_alert_settings (account_id, settings) VALUES ($1, $2)
     ON CONFLICT (account_id) DO UPDATE SET settings = EXCLUDED.settings, updated_at = now()`,
    [accountId, JSON.stringify(settings)],
  );
}

export interface DeliveryRecord {
  id: string;
  channelId: number | null;
  channelType: string;
  checkId: string | null;
  checkSessionId: string | null;
  event: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastError: string | null;
  created_at: string;
  delivered_at: string | null;
}

interface DeliveryRow {
  id: string;
  channel_id: number | null;
  channel_type: string;
  check_id: string | null;
  check_session_id: string | null;
  event: string;
  state: DeliveryRecord['state'];
  attempts: number;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

const deliveryRecord = (row: DeliveryRow): DeliveryRecord => ({
  id: row.id,
  channelId: row.channel_id,
  channelType: row.channel_type,
  checkId: row.check_id,
  checkSessionId: row.check_session_id,
  event: row.event,
  state: row.state,
  attempts: row.attempts,
  lastError: row.last_error,
  created_at: row.created_at.toISOString(),
  delivered_at: row.delivered_at?.toISOString() ?? null,
});

export async function listDeliveries(db: Queryable, accountId: string, channelId: number, limit = 50): Promise<DeliveryRecord[]> {
  const rows = await db.query<DeliveryRow>(
    `SELECT id, channel_id, channel_type, check_id, check_session_id, event, state, attempts, last_error, created_at, delivered_at
     FROM alert_deliveries WHERE account_id = $1 AND channel_id = $2 ORDER BY created_at DESC, id LIMIT $3`,
    [accountId, channelId, limit],
  );
  return rows.map(deliveryRecord);
}

/** A delivery with the check its alert was about, as the alert told it. */
export interface DeliveryLogEntry extends DeliveryRecord {
  checkName: string | null;
  checkType: string | null;
}

export interface DeliveryLogQuery {
  channelId: number | undefined;
  /** Queued at or after. */
  from: Date | undefined;
  /** Queued at or before. */
  to: Date | undefined;
  /** Only those whose last attempt failed: given up on, or waiting for another try. */
  failedOnly: boolean;
  limit: number;
  offset: number;
}

/** The account's deliveries, newest first, one page of them and how many match in all. */
export async function deliveryLog(
  db: Queryable,
  accountId: string,
  query: DeliveryLogQuery,
): Promise<{ entries: DeliveryLogEntry[]; total: number }> {
  const where = `account_id = $1 AND ($2::int IS NULL OR channel_id = $2::int)
    AND ($3::timestamptz IS NULL OR created_at >= $3::timestamptz) AND ($4::timestamptz IS NULL OR created_at <= $4::timestamptz)
    AND (NOT $5::boolean OR last_error IS NOT NULL)`;
  const params = [accountId, query.channelId ?? null, query.from ?? null, query.to ?? null, query.failedOnly];
  const rows = await db.query<DeliveryRow & { check_name: string | null; check_type: string | null }>(
    `SELECT id, channel_id, channel_type, check_id, check_session_id, event, state, attempts, last_error,
            created_at, delivered_at, payload->'check'->>'name' AS check_name, payload->'check'->>'checkType' AS check_type
     FROM alert_deliveries WHERE ${where} ORDER BY created_at DESC, id LIMIT $6 OFFSET $7`,
    [...params, query.limit, query.offset],
  );
  const [count] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM alert_deliveries WHERE ${where}`, params);
  return {
    entries: rows.map((row) => ({ ...deliveryRecord(row), checkName: row.check_name, checkType: row.check_type })),
    total: count!.n,
  };
}
