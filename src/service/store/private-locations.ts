import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import type { HelloRequest } from '../../protocol/agent-api.js';
import { generateKey, hashKey, maskKey } from '../keys.js';

/** An agent counts as connected while it has called within this window (long polls last ≤ 30 s). */
export const AGENT_ACTIVE_SECONDS = 90;

export interface PrivateLocationRow {
  id: string;
  account_id: string;
  name: string;
  slug_name: string;
  icon: string | null;
  created_at: Date;
  updated_at: Date | null;
  last_seen: Date | null;
  /** Normalized address ranges (CIDR); both empty: the location's checks may connect anywhere. */
  allowed_destinations: string[];
  denied_destinations: string[];
}

/** Where a location's checks may connect: address ranges, the most specific holding an address deciding. */
export interface DestinationPolicyLists {
  allowed: string[];
  denied: string[];
}

export interface PrivateLocationRecord {
  id: string;
  name: string;
  slugName: string;
  icon: string | null;
  created_at: string;
  updated_at: string | null;
  lastSeen: string | null;
  destinationPolicy: DestinationPolicyLists;
  agentCount: number;
  /** Jobs due and waiting for an agent of this location (the queue's depth), and jobs its agents run now. */
  queuedJobs: number;
  runningJobs: number;
  runningAgents: { agentId: string; hostname: string; version: string; mode: string; lastSeen: string }[];
  keys: { id: string; maskedKey: string; created_at: string }[];
}

export async function createPrivateLocation(
  db: Queryable,
  accountId: string,
  input: { name: string; slugName: string; icon?: string | undefined; destinationPolicy?: DestinationPolicyLists | undefined },
): Promise<string | undefined> {
  const rows = await db.query<{ id: string }>(
    `INSERT INTO private_locations (id, account_id, name, slug_name, icon, allowed_destinations, denied_destinations)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (account_id, slug_name) DO NOTHING RETURNING id`,
    [
      randomUUID(),
      accountId,
      input.name,
      input.slugName,
      input.icon ?? null,
      input.destinationPolicy?.allowed ?? [],
      input.destinationPolicy?.denied ?? [],
    ],
  );
  // undefined: the slug is already used in this account.
  return rows[0]?.id;
}

export async function listPrivateLocations(db: Queryable, accountId: string): Promise<PrivateLocationRecord[]> {
  const rows = await db.query<PrivateLocationRow>(
    'SELECT * FROM private_locations WHERE account_id = $1 ORDER BY created_at, id',
    [accountId],
  );
  return Promise.all(rows.map((row) => toRecord(db, row)));
}

export async function getPrivateLocation(
  db: Queryable,
  accountId: string,
  id: string,
): Promise<PrivateLocationRecord | undefined> {
  const rows = await db.query<PrivateLocationRow>(
    'SELECT * FROM private_locations WHERE account_id = $1 AND id = $2',
    [accountId, id],
  );
  return rows[0] && toRecord(db, rows[0]);
}

/** False when the account has no such location. */
export async function setDestinationPolicy(
  db: Queryable,
  accountId: string,
  id: string,
  policy: DestinationPolicyLists,
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE private_locations SET allowed_destinations = $3, denied_destinations = $4, updated_at = now()
     WHERE account_id = $1 AND id = $2 RETURNING id`,
    [accountId, id, policy.allowed, policy.denied],
  );
  return rows.length > 0;
}

/** Slug → id for the account's private locations among `slugs`. */
export async function privateLocationIdsBySlug(
  db: Queryable,
  accountId: string,
  slugs: readonly string[],
): Promise<Map<string, string>> {
  if (slugs.length === 0) return new Map();
  const rows = await db.query<{ id: string; slug_name: string }>(
    'SELECT id, slug_name FROM private_locations WHERE account_id = $1 AND slug_name = ANY($2::text[])',
    [accountId, slugs],
  );
  return new Map(rows.map((row) => [row.slug_name, row.id]));
}

export async function createLocationKey(
  db: Queryable,
  privateLocationId: string,
): Promise<{ id: string; rawKey: string; maskedKey: string }> {
  const rawKey = generateKey('pl_');
  const id = randomUUID();
  const maskedKey = maskKey(rawKey);
  await db.query(
    'INSERT INTO private_location_keys (id, private_location_id, key_hash, masked_key) VALUES ($1, $2, $3, $4)',
    [id, privateLocationId, hashKey(rawKey), maskedKey],
  );
  return { id, rawKey, maskedKey };
}

/**
 * The account's location `slugName`, made if missing, with `rawKey` among its
 * keys: how a deployment hands its agents a key without a setup step. A key
 * already stored (at this location or another) is left as it is.
 */
export async function ensureLocationKey(db: Queryable, accountId: string, slugName: string, rawKey: string): Promise<void> {
  await db.query(
    `INSERT INTO private_locations (id, account_id, name, slug_name) VALUES ($1, $2, $3, $3)
     ON CONFLICT (account_id, slug_name) DO NOTHING`,
    [randomUUID(), accountId, slugName],
  );
  await db.query(
    `INSERT INTO private_location_keys (id, private_location_id, key_hash, masked_key)
     SELECT $1, id, $2, $3 FROM private_locations WHERE account_id = $4 AND slug_name = $5
     ON CONFLICT (key_hash) DO NOTHING`,
    [randomUUID(), hashKey(rawKey), maskKey(rawKey), accountId, slugName],
  );
}

export async function deleteLocationKey(db: Queryable, privateLocationId: string, keyId: string): Promise<boolean> {
  const rows = await db.query(
    'DELETE FROM private_location_keys WHERE private_location_id = $1 AND id = $2 RETURNING id',
    [privateLocationId, keyId],
  );
  return rows.length > 0;
}

/** The private location a key digest opens, and which key it is; undefined when unknown or removed. */
export async function locationForKeyHash(
  db: Queryable,
  keyHash: string,
): Promise<{ keyId: string; location: PrivateLocationRow } | undefined> {
  const rows = await db.query<PrivateLocationRow & { key_id: string }>(
    `SELECT p.*, k.id AS key_id FROM private_location_keys k
     JOIN private_locations p ON p.id = k.private_location_id WHERE k.key_hash = $1`,
    [keyHash],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { key_id: keyId, ...location } = row;
  return { keyId, location };
}

/** Records that a key was used and its location heard from. */
export async function recordKeyUse(db: Queryable, keyId: string, privateLocationId: string): Promise<void> {
  await db.query('UPDATE private_location_keys SET last_used_at = now() WHERE id = $1', [keyId]);
  await db.query('UPDATE private_locations SET last_seen = now() WHERE id = $1', [privateLocationId]);
}

/** False when the agent id is already registered at another private location. */
export async function recordAgent(db: Queryable, privateLocationId: string, hello: HelloRequest): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO agents (id, private_location_id, hostname, version, mode, check_types, runtimes, capacity)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (id) DO UPDATE SET
       hostname = EXCLUDED.hostname, version = EXCLUDED.version, mode = EXCLUDED.mode,
       check_types = EXCLUDED.check_types, runtimes = EXCLUDED.runtimes, capacity = EXCLUDED.capacity,
       last_seen = now(), stopped_at = NULL
     WHERE agents.private_location_id = EXCLUDED.private_location_id
     RETURNING id`,
    [
      hello.agentId,
      privateLocationId,
      hello.hostname,
      hello.version,
      hello.mode,
      JSON.stringify(hello.checkTypes),
      JSON.stringify(hello.runtimes),
      JSON.stringify(hello.capacity),
    ],
  );
  return rows.length > 0;
}

export interface AgentRow {
  id: string;
  check_types: string[];
  runtimes: string[];
}

/** The agent as declared in its last hello, if it said hello to this location. */
export async function touchAgent(
  db: Queryable,
  privateLocationId: string,
  agentId: string,
): Promise<AgentRow | undefined> {
  const rows = await db.query<AgentRow>(
    `UPDATE agents SET last_seen = now() WHERE id = $1 AND private_location_id = $2
     RETURNING id, check_types, runtimes`,
    [agentId, privateLocationId],
  );
  return rows[0];
}

async function toRecord(db: Queryable, row: PrivateLocationRow): Promise<PrivateLocationRecord> {
  const [agents, keys, jobs] = await Promise.all([
    db.query<{ id: string; hostname: string; version: string; mode: string; last_seen: Date }>(
      `SELECT id, hostname, version, mode, last_seen FROM agents
       WHERE private_location_id = $1 AND last_seen > now() - make_interval(secs => $2)
       ORDER BY last_seen DESC`,
      [row.id, AGENT_ACTIVE_SECONDS],
    ),
    db.query<{ id: string; masked_key: string; created_at: Date }>(
      'SELECT id, masked_key, created_at FROM private_location_keys WHERE private_location_id = $1 ORDER BY created_at',
      [row.id],
    ),
    db.query<{ queued: number; running: number }>(
      `SELECT count(*) FILTER (WHERE state = 'queued' AND scheduled_at <= now())::int AS queued,
              count(*) FILTER (WHERE state = 'leased')::int AS running
         FROM jobs WHERE private_location_id = $1 AND state IN ('queued', 'leased')`,
      [row.id],
    ),
  ]);
  return {
    id: row.id,
    name: row.name,
    slugName: row.slug_name,
    icon: row.icon,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at?.toISOString() ?? null,
    lastSeen: row.last_seen?.toISOString() ?? null,
    destinationPolicy: { allowed: row.allowed_destinations, denied: row.denied_destinations },
    agentCount: agents.length,
    queuedJobs: jobs[0]?.queued ?? 0,
    runningJobs: jobs[0]?.running ?? 0,
    runningAgents: agents.map((agent) => ({
      agentId: agent.id,
      hostname: agent.hostname,
      version: agent.version,
      mode: agent.mode,
      lastSeen: agent.last_seen.toISOString(),
    })),
    keys: keys.map((key) => ({ id: key.id, maskedKey: key.masked_key, created_at: key.created_at.toISOString() })),
  };
}
