import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import { INITIAL_STATUSES, transitionProblem, type MaintenanceStatus } from '../maintenance/status.js';

export interface WindowInput {
  name: string;
  tags: string[];
  startsAt: string;
  endsAt: string;
  repeatUnit: 'DAY' | 'WEEK' | 'MONTH' | null;
  repeatInterval: number | null;
  repeatEndsAt: string | null;
}

export interface WindowRecord extends WindowInput {
  id: number;
  created_at: string;
  updated_at: string | null;
}

interface WindowRow {
  id: number;
  name: string;
  tags: string[];
  starts_at: Date;
  ends_at: Date;
  repeat_unit: WindowInput['repeatUnit'];
  repeat_interval: number | null;
  repeat_ends_at: Date | null;
  created_at: Date;
  updated_at: Date | null;
}

const windowRecord = (row: WindowRow): WindowRecord => ({
  id: row.id,
  name: row.name,
  tags: row.tags,
  startsAt: row.starts_at.toISOString(),
  endsAt: row.ends_at.toISOString(),
  repeatUnit: row.repeat_unit,
  repeatInterval: row.repeat_interval,
  repeatEndsAt: row.repeat_ends_at?.toISOString() ?? null,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at?.toISOString() ?? null,
});

const windowParams = (input: WindowInput) => [
  input.name,
  JSON.stringify(input.tags),
  input.startsAt,
  input.endsAt,
  input.repeatUnit,
  input.repeatInterval,
  input.repeatEndsAt,
];

export async function createWindow(db: Queryable, accountId: string, input: WindowInput): Promise<WindowRecord> {
  const [row] = await db.query<WindowRow>(
    `INSERT INTO maintenance_windows (account_id, name, tags, starts_at, ends_at, repeat_unit, repeat_interval, repeat_ends_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [accountId, ...windowParams(input)],
  );
  return windowRecord(row!);
}

export async function getWindow(db: Queryable, accountId: string, id: number): Promise<WindowRecord | undefined> {
  const [row] = await db.query<WindowRow>('SELECT * FROM maintenance_windows WHERE account_id = $1 AND id = $2', [
    accountId,
    id,
  ]);
  return row && windowRecord(row);
}

export async function listWindows(
  db: Queryable,
  accountId: string,
  page: { limit: number; page: number },
): Promise<WindowRecord[]> {
  const rows = await db.query<WindowRow>(
    'SELECT * FROM maintenance_windows WHERE account_id = $1 ORDER BY id LIMIT $2 OFFSET $3',
    [accountId, page.limit, (page.page - 1) * page.limit],
  );
  return rows.map(windowRecord);
}

export async function updateWindow(
  db: Queryable,
  accountId: string,
  id: number,
  input: WindowInput,
): Promise<WindowRecord | undefined> {
  const [row] = await db.query<WindowRow>(
    `UPDATE maintenance_windows SET name = $3, tags = $4, starts_at = $5, ends_at = $6, repeat_unit = $7,
       repeat_interval = $8, repeat_ends_at = $9, updated_at = now()
     WHERE account_id = $1 AND id = $2 RETURNING *`,
    [accountId, id, ...windowParams(input)],
  );
  return row && windowRecord(row);
}

export async function deleteWindow(db: Queryable, accountId: string, id: number): Promise<boolean> {
  const rows = await db.query('DELETE FROM maintenance_windows WHERE account_id = $1 AND id = $2 RETURNING id', [
    accountId,
    id,
  ]);
  return rows.length > 0;
}

export interface UpdateRecord {
  id: string;
  maintenanceWindowId: number;
  maintenanceId: string;
  status: MaintenanceStatus;
  description: string;
  notifySubscribers: boolean;
  created_at: string;
  previousStatus: MaintenanceStatus | null;
  previousStartsAt: string | null;
  previousEndsAt: string | null;
  dateAdjustments: { startsAt: string; endsAt: string } | null;
}

export interface MaintenanceRecord {
  id: string;
  maintenanceWindowId: number;
  status: MaintenanceStatus;
  startsAt: string;
  endsAt: string;
  created_at: string;
  updates: UpdateRecord[];
}

interface MaintenanceRow {
  id: string;
  window_id: number;
  status: MaintenanceStatus;
  starts_at: Date;
  ends_at: Date;
  created_at: Date;
}

interface UpdateRow {
  id: string;
  maintenance_id: string;
  status: MaintenanceStatus;
  description: string;
  notify_subscribers: boolean;
  previous_status: MaintenanceStatus | null;
  previous_starts_at: Date | null;
  previous_ends_at: Date | null;
  date_adjustments: { startsAt: string; endsAt: string } | null;
  seq: number;
  created_at: Date;
}

const updateRecord = (windowId: number, row: UpdateRow): UpdateRecord => ({
  id: row.id,
  maintenanceWindowId: windowId,
  maintenanceId: row.maintenance_id,
  status: row.status,
  description: row.description,
  notifySubscribers: row.notify_subscribers,
  created_at: row.created_at.toISOString(),
  previousStatus: row.previous_status,
  previousStartsAt: row.previous_starts_at?.toISOString() ?? null,
  previousEndsAt: row.previous_ends_at?.toISOString() ?? null,
  dateAdjustments: row.date_adjustments,
});

async function maintenanceRecord(db: Queryable, row: MaintenanceRow): Promise<MaintenanceRecord> {
  const updates = await db.query<UpdateRow>('SELECT * FROM maintenance_updates WHERE maintenance_id = $1 ORDER BY seq', [
    row.id,
  ]);
  return {
    id: row.id,
    maintenanceWindowId: row.window_id,
    status: row.status,
    startsAt: row.starts_at.toISOString(),
    endsAt: row.ends_at.toISOString(),
    created_at: row.created_at.toISOString(),
    updates: updates.map((update) => updateRecord(row.window_id, update)),
  };
}

/** A maintenance of the account's window, locked for the caller's transaction when `lock`. */
async function maintenanceRow(
  db: Queryable,
  accountId: string,
  windowId: number,
  maintenanceId: string,
  lock = false,
): Promise<MaintenanceRow | undefined> {
  const [row] = await db.query<MaintenanceRow>(
    `SELECT m.* FROM maintenances m JOIN maintenance_windows w ON w.id = m.window_id
     WHERE w.account_id = $1 AND w.id = $2 AND m.id = $3 ${lock ? 'FOR UPDATE OF m' : ''}`,
    [accountId, windowId, maintenanceId],
  );
  return row;
}

export async function listMaintenances(db: Queryable, windowId: number): Promise<MaintenanceRecord[]> {
  const rows = await db.query<MaintenanceRow>('SELECT * FROM maintenances WHERE window_id = $1 ORDER BY created_at, id', [
    windowId,
  ]);
  const records: MaintenanceRecord[] = [];
  for (const row of rows) records.push(await maintenanceRecord(db, row));
  return records;
}

export async function getMaintenance(
  db: Queryable,
  accountId: string,
  windowId: number,
  maintenanceId: string,
): Promise<MaintenanceRecord | undefined> {
  const row = await maintenanceRow(db, accountId, windowId, maintenanceId);
  return row && maintenanceRecord(db, row);
}

/** A maintenance and its first update, in one transaction. */
export async function createMaintenance(
  db: Database,
  windowId: number,
  input: { status: MaintenanceStatus; startsAt: string; endsAt: string; description: string; notifySubscribers: boolean },
): Promise<MaintenanceRecord> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<MaintenanceRow>(
      'INSERT INTO maintenances (id, window_id, status, starts_at, ends_at) VALUES ($1, $2, $3, $4, $5) RETURNING *',
      [randomUUID(), windowId, input.status, input.startsAt, input.endsAt],
    );
    await tx.query(
      `INSERT INTO maintenance_updates (id, maintenance_id, status, description, notify_subscribers)
       VALUES ($1, $2, $3, $4, $5)`,
      [randomUUID(), row!.id, input.status, input.description, input.notifySubscribers],
    );
    return maintenanceRecord(tx, row!);
  });
}

export type AddUpdateOutcome =
  | { added: UpdateRecord }
  | { notFound: true }
  | { refused: string; field: string };

/**
 * Adds a status update; with no status it keeps the maintenance's. New dates
 * move the maintenance, and the update records what they were and became.
 */
export async function addUpdate(
  db: Database,
  accountId: string,
  windowId: number,
  maintenanceId: string,
  input: {
    status: MaintenanceStatus | undefined;
    description: string;
    notifySubscribers: boolean;
    startsAt: string | undefined;
    endsAt: string | undefined;
  },
): Promise<AddUpdateOutcome> {
  return db.transaction(async (tx) => {
    const maintenance = await maintenanceRow(tx, accountId, windowId, maintenanceId, true);
    if (!maintenance) return { notFound: true };
    const status = input.status ?? maintenance.status;
    const problem = transitionProblem(maintenance.status, status);
    if (problem) return { refused: problem, field: 'status' };
    const startsAt = input.startsAt ?? maintenance.starts_at.toISOString();
    const endsAt = input.endsAt ?? maintenance.ends_at.toISOString();
    if (Date.parse(endsAt) <= Date.parse(startsAt)) return { refused: 'must be after startsAt', field: 'endsAt' };
    const moved = Date.parse(startsAt) !== maintenance.starts_at.getTime() || Date.parse(endsAt) !== maintenance.ends_at.getTime();
    const normalized = { startsAt: new Date(startsAt).toISOString(), endsAt: new Date(endsAt).toISOString() };
    const [row] = await tx.query<UpdateRow>(
      `INSERT INTO maintenance_updates (id, maintenance_id, status, description, notify_subscribers, previous_status,
         previous_starts_at, previous_ends_at, date_adjustments)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING *`,
      [
        randomUUID(),
        maintenance.id,
        status,
        input.description,
        input.notifySubscribers,
        maintenance.status,
        moved ? maintenance.starts_at : null,
        moved ? maintenance.ends_at : null,
        moved ? JSON.stringify(normalized) : null,
      ],
    );
    await tx.query('UPDATE maintenances SET status = $2, starts_at = $3, ends_at = $4 WHERE id = $1', [
      maintenance.id,
      status,
      normalized.startsAt,
      normalized.endsAt,
    ]);
    return { added: updateRecord(windowId, row!) };
  });
}

export type EditUpdateOutcome = { edited: UpdateRecord } | { notFound: true } | { refused: string; field: string };

/**
 * Edits an update's text and, for the latest update only, its status (which
 * the maintenance then takes); with no status sent the stored one is kept.
 */
export async function editUpdate(
  db: Database,
  accountId: string,
  windowId: number,
  maintenanceId: string,
  updateId: string,
  input: { description: string; status: MaintenanceStatus | undefined },
): Promise<EditUpdateOutcome> {
  return db.transaction(async (tx) => {
    const maintenance = await maintenanceRow(tx, accountId, windowId, maintenanceId, true);
    if (!maintenance) return { notFound: true };
    const updates = await tx.query<UpdateRow>('SELECT * FROM maintenance_updates WHERE maintenance_id = $1 ORDER BY seq', [
      maintenance.id,
    ]);
    const index = updates.findIndex((update) => update.id === updateId);
    if (index < 0) return { notFound: true };
    const stored = updates[index]!;
    const status = input.status ?? stored.status;
    if (status !== stored.status) {
      if (index !== updates.length - 1) return { refused: 'only the latest update of a maintenance can change status', field: 'status' };
      const problem = stored.previous_status
        ? transitionProblem(stored.previous_status, status)
        : INITIAL_STATUSES.includes(status)
          ? undefined
          : `a maintenance starts ${INITIAL_STATUSES.join(' or ')}`;
      if (problem) return { refused: problem, field: 'status' };
    }
    const [row] = await tx.query<UpdateRow>(
      'UPDATE maintenance_updates SET description = $2, status = $3 WHERE id = $1 RETURNING *',
      [stored.id, input.description, status],
    );
    if (index === updates.length - 1) await tx.query('UPDATE maintenances SET status = $2 WHERE id = $1', [maintenance.id, status]);
    return { edited: updateRecord(windowId, row!) };
  });
}

/** Every window of the account, for deciding which cover a check now. */
export async function allWindows(db: Queryable, accountId: string): Promise<WindowRecord[]> {
  const rows = await db.query<WindowRow>('SELECT * FROM maintenance_windows WHERE account_id = $1 ORDER BY id', [accountId]);
  return rows.map(windowRecord);
}

export interface OpenMaintenance extends MaintenanceRecord {
  windowName: string;
}

/** The account's maintenances not COMPLETED or CANCELLED, soonest first: what its status pages show. */
export async function openMaintenances(db: Queryable, accountId: string): Promise<OpenMaintenance[]> {
  const rows = await db.query<MaintenanceRow & { window_name: string }>(
    `SELECT m.*, w.name AS window_name FROM maintenances m JOIN maintenance_windows w ON w.id = m.window_id
     WHERE w.account_id = $1 AND m.status NOT IN ('COMPLETED', 'CANCELLED')
     ORDER BY m.starts_at, m.id LIMIT 20`,
    [accountId],
  );
  const open: OpenMaintenance[] = [];
  for (const row of rows) open.push({ ...(await maintenanceRecord(db, row)), windowName: row.window_name });
  return open;
}
