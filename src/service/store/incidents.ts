import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import { incidentTransitionProblem, type IncidentSeverity, type IncidentStatus } from '../status-pages/incident-status.js';
import { serviceNames } from './status-pages.js';

export interface IncidentUpdateInput {
  description: string;
  status: IncidentStatus | undefined;
  publicIncidentUpdateDate: string | undefined;
  notifySubscribers: boolean;
}

export interface IncidentUpdateRecord {
  id: string;
  description: string;
  status: IncidentStatus;
  publicIncidentUpdateDate: string;
  created_at: string;
  notifySubscribers: boolean;
}

export interface IncidentRecord {
  id: string;
  name: string;
  severity: IncidentSeverity;
  services: { id: string; name: string }[];
  lastUpdateStatus: IncidentStatus;
  incidentUpdates: IncidentUpdateRecord[];
  created_at: string;
  updated_at: string | null;
  resolvedAt: string | null;
}

interface IncidentRow {
  id: string;
  account_id: string;
  name: string;
  severity: IncidentSeverity;
  services: string[];
  status: IncidentStatus;
  created_at: Date;
  updated_at: Date | null;
  resolved_at: Date | null;
}

interface UpdateRow {
  id: string;
  incident_id: string;
  description: string;
  status: IncidentStatus;
  public_incident_update_date: Date;
  notify_subscribers: boolean;
  created_at: Date;
}

const updateRecord = (row: UpdateRow): IncidentUpdateRecord => ({
  id: row.id,
  description: row.description,
  status: row.status,
  publicIncidentUpdateDate: row.public_incident_update_date.toISOString(),
  created_at: row.created_at.toISOString(),
  notifySubscribers: row.notify_subscribers,
});

async function incidentRecord(db: Queryable, row: IncidentRow): Promise<IncidentRecord> {
  const updates = await db.query<UpdateRow>('SELECT * FROM incident_updates WHERE incident_id = $1 ORDER BY seq', [row.id]);
  const names = await serviceNames(db, row.account_id, row.services);
  return {
    id: row.id,
    name: row.name,
    severity: row.severity,
    // A service deleted since keeps its place under the name it no longer has.
    services: row.services.map((id) => ({ id, name: names.get(id) ?? '(deleted service)' })),
    lastUpdateStatus: row.status,
    incidentUpdates: updates.map(updateRecord),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at?.toISOString() ?? null,
    resolvedAt: row.resolved_at?.toISOString() ?? null,
  };
}

async function insertUpdate(tx: Queryable, incidentId: string, status: IncidentStatus, input: IncidentUpdateInput): Promise<UpdateRow> {
  const [row] = await tx.query<UpdateRow>(
    `INSERT INTO incident_updates (id, incident_id, description, status, public_incident_update_date, notify_subscribers)
     VALUES ($1, $2, $3, $4, COALESCE($5::timestamptz, now()), $6) RETURNING *`,
    [randomUUID(), incidentId, input.description, status, input.publicIncidentUpdateDate ?? null, input.notifySubscribers],
  );
  return row!;
}

/** An incident with its first update, in one transaction. */
export async function createIncident(
  db: Database,
  accountId: string,
  input: { name: string; severity: IncidentSeverity; services: string[]; update: IncidentUpdateInput },
): Promise<{ incident: IncidentRecord; update: IncidentUpdateRecord }> {
  return db.transaction(async (tx) => {
    const status = input.update.status ?? 'INVESTIGATING';
    const [row] = await tx.query<IncidentRow>(
      `INSERT INTO incidents (id, account_id, name, severity, services, status, resolved_at)
       VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $6 = 'RESOLVED' THEN now() END) RETURNING *`,
      [randomUUID(), accountId, input.name, input.severity, JSON.stringify(input.services), status],
    );
    const update = await insertUpdate(tx, row!.id, status, input.update);
    return { incident: await incidentRecord(tx, row!), update: updateRecord(update) };
  });
}

export type AddIncidentUpdateOutcome =
  | { added: IncidentUpdateRecord; incident: IncidentRecord }
  | { notFound: true }
  | { refused: string };

/** With no status the incident keeps its own; RESOLVED closes it. */
export async function addIncidentUpdate(
  db: Database,
  accountId: string,
  incidentId: string,
  input: IncidentUpdateInput,
): Promise<AddIncidentUpdateOutcome> {
  return db.transaction(async (tx) => {
    const [incident] = await tx.query<IncidentRow>(
      'SELECT * FROM incidents WHERE account_id = $1 AND id = $2 FOR UPDATE',
      [accountId, incidentId],
    );
    if (!incident) return { notFound: true };
    const problem = incidentTransitionProblem(incident.status);
    if (problem) return { refused: problem };
    const status = input.status ?? incident.status;
    const update = await insertUpdate(tx, incident.id, status, input);
    const [row] = await tx.query<IncidentRow>(
      `UPDATE incidents SET status = $2, updated_at = now(), resolved_at = CASE WHEN $2 = 'RESOLVED' THEN now() END
       WHERE id = $1 RETURNING *`,
      [incident.id, status],
    );
    return { added: updateRecord(update), incident: await incidentRecord(tx, row!) };
  });
}

export async function getIncident(db: Queryable, accountId: string, id: string): Promise<IncidentRecord | undefined> {
  const [row] = await db.query<IncidentRow>('SELECT * FROM incidents WHERE account_id = $1 AND id = $2', [accountId, id]);
  return row && incidentRecord(db, row);
}

/**
 * Newest first. `open`: only those not resolved (true) or only resolved ones
 * (false); `services`: naming any of them; `resolvedWithinDays`: resolved
 * ones no older than that.
 */
export async function listIncidents(
  db: Queryable,
  accountId: string,
  query: { limit: number; page: number; open?: boolean; services?: readonly string[]; resolvedWithinDays?: number },
): Promise<IncidentRecord[]> {
  const rows = await db.query<IncidentRow>(
    `SELECT * FROM incidents WHERE account_id = $1
       AND ($2::boolean IS NULL OR (status <> 'RESOLVED') = $2)
       AND ($3::text[] IS NULL OR services ?| $3::text[])
       AND ($6::int IS NULL OR resolved_at IS NULL OR resolved_at > now() - make_interval(days => $6::int))
     ORDER BY created_at DESC, id LIMIT $4 OFFSET $5`,
    [
      accountId,
      query.open ?? null,
      query.services ?? null,
      query.limit,
      (query.page - 1) * query.limit,
      query.resolvedWithinDays ?? null,
    ],
  );
  const records: IncidentRecord[] = [];
  for (const row of rows) records.push(await incidentRecord(db, row));
  return records;
}

/**
 * Newest first from the incident `fromId` on (from the newest without it): up
 * to `limit`, and the id the next page starts at. An id that is no incident of
 * the account's (deleted since) ends the list rather than starting it over.
 */
export async function listIncidentsFrom(
  db: Queryable,
  accountId: string,
  query: { limit: number; fromId: string | undefined },
): Promise<{ incidents: IncidentRecord[]; nextId: string | null }> {
  const rows = await db.query<IncidentRow>(
    `WITH start AS (SELECT created_at, id FROM incidents WHERE account_id = $1 AND id = $2::uuid)
     SELECT i.* FROM incidents i WHERE i.account_id = $1
       AND ($2::uuid IS NULL OR EXISTS (SELECT 1 FROM start s WHERE i.created_at < s.created_at OR (i.created_at = s.created_at AND i.id >= s.id)))
     ORDER BY i.created_at DESC, i.id LIMIT $3`,
    [accountId, query.fromId ?? null, query.limit + 1],
  );
  const incidents: IncidentRecord[] = [];
  for (const row of rows.slice(0, query.limit)) incidents.push(await incidentRecord(db, row));
  return { incidents, nextId: rows[query.limit]?.id ?? null };
}

/** Changes the name or severity of an incident, open or resolved; its updates stay as they are. */
export async function updateIncident(
  db: Queryable,
  accountId: string,
  id: string,
  change: { name: string | undefined; severity: IncidentSeverity | undefined },
): Promise<IncidentRecord | undefined> {
  const [row] = await db.query<IncidentRow>(
    `UPDATE incidents SET name = COALESCE($3, name), severity = COALESCE($4, severity), updated_at = now()
     WHERE account_id = $1 AND id = $2 RETURNING *`,
    [accountId, id, change.name ?? null, change.severity ?? null],
  );
  return row && incidentRecord(db, row);
}

export async function deleteIncident(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM incidents WHERE account_id = $1 AND id = $2 RETURNING id', [accountId, id]);
  return rows.length > 0;
}
