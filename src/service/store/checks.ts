import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import type { CheckType } from '../../protocol/enums.js';
import type { CheckDefinition } from '../check-types/index.js';

export interface CheckRow {
  id: string;
  account_id: string;
  check_type: CheckType;
  name: string;
  activated: boolean;
  muted: boolean;
  frequency: number;
  tags: string[];
  private_locations: string[];
  group_id: number | null;
  definition: CheckDefinition;
  next_run_at: Date | null;
  created_at: Date;
  updated_at: Date | null;
}


export async function createCheck(
  db: Queryable,
  accountId: string,
  checkType: CheckType,
  definition: CheckDefinition,
): Promise<CheckRow> {
  const rows = await db.query<CheckRow>(
    `INSERT INTO checks (id, account_id, check_type, name, activated, muted, frequency, tags,
                         private_locations, definition, group_id, next_run_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, CASE WHEN $5 THEN now() END)
     RETURNING *`,
    [
      randomUUID(),
      accountId,
      checkType,
      ...definitionColumns(definition),
    ],
  );
  return rows[0]!;
}

export async function getCheck(db: Queryable, accountId: string, id: string): Promise<CheckRow | undefined> {
  const rows = await db.query<CheckRow>('SELECT * FROM checks WHERE account_id = $1 AND id = $2', [accountId, id]);
  return rows[0];
}

/**
 * The checks of these ids, of whichever account, that may alert: an activated
 * alert channel subscription, or an incident to trigger. Most checks alert
 * nowhere, and every finished run asks: those cost no row here.
 */
export async function checksThatMayAlert(db: Queryable, ids: readonly string[]): Promise<CheckRow[]> {
  return db.query<CheckRow>(`SELECT * FROM checks c WHERE c.id = ANY($1::uuid[]) AND ${CHECK_MAY_ALERT}`, [ids]);
}

/** SQL: the check `c` has an activated alert channel subscription or an incident to trigger. */
export const CHECK_MAY_ALERT = `(c.definition->'alertChannelSubscriptions' @> '[{"activated": true}]'
  OR COALESCE(c.definition->'triggerIncident'->>'serviceId', '') <> '')`;

/** What a check list may be narrowed by; every filter given must hold. */
export interface CheckListFilter {
  /** Checks carrying at least one of these tags. */
  tags?: readonly string[] | undefined;
  checkType?: string | undefined;
  /** Part of the name, any case. */
  search?: string | undefined;
  /** Only these checks (a filter the caller worked out, such as a status). */
  ids?: readonly string[] | undefined;
}

/** The filter as SQL conditions, its values appended to `params` (the account is $1). */
function listConditions(filter: CheckListFilter, params: unknown[]): string {
  const where = ['account_id = $1'];
  if (filter.tags && filter.tags.length > 0) where.push(`tags ?| $${params.push(filter.tags)}::text[]`);
  if (filter.checkType !== undefined) where.push(`check_type = $${params.push(filter.checkType)}`);
  if (filter.search !== undefined && filter.search !== '') {
    // The search is text to find, not a pattern: its own % and _ match themselves.
    where.push(`strpos(lower(name), lower($${params.push(filter.search)})) > 0`);
  }
  if (filter.ids !== undefined) where.push(`id::text = ANY($${params.push(filter.ids)}::text[])`);
  return where.join(' AND ');
}

export async function listChecks(
  db: Queryable,
  accountId: string,
  page: { limit: number; page: number },
  filter: CheckListFilter = {},
): Promise<CheckRow[]> {
  const params: unknown[] = [accountId];
  const where = listConditions(filter, params);
  const limit = params.push(page.limit);
  const offset = params.push((page.page - 1) * page.limit);
  return db.query<CheckRow>(
    `SELECT * FROM checks WHERE ${where} ORDER BY created_at, id LIMIT $${limit} OFFSET $${offset}`,
    params,
  );
}

/** How many checks the filter selects, over all pages. */
export async function countChecks(db: Queryable, accountId: string, filter: CheckListFilter = {}): Promise<number> {
  const params: unknown[] = [accountId];
  const [row] = await db.query<{ total: number }>(
    `SELECT count(*)::int AS total FROM checks WHERE ${listConditions(filter, params)}`,
    params,
  );
  return row?.total ?? 0;
}

/**
 * Checks selected by id, by any of `tag`, or by `matchTags`, only from this
 * account. Each inner list of `matchTags` is a set of tags a check must all
 * carry, and a check matching any set is in; as the checkly CLI's
 * `checks run --tags` means it, that selection takes only activated checks.
 */
export async function findChecksForTrigger(
  db: Queryable,
  accountId: string,
  target: {
    checkId?: readonly string[] | undefined;
    tag?: readonly string[] | undefined;
    matchTags?: readonly (readonly string[])[] | undefined;
  },
): Promise<CheckRow[]> {
  return db.query<CheckRow>(
    `SELECT * FROM checks c WHERE c.account_id = $1
       AND (c.id::text = ANY($2::text[]) OR c.tags ?| $3::text[]
            OR (c.activated AND EXISTS (SELECT 1 FROM jsonb_array_elements($4::jsonb) wanted WHERE c.tags @> wanted)))
     ORDER BY c.created_at, c.id`,
    [accountId, target.checkId ?? [], target.tag ?? [], JSON.stringify(target.matchTags ?? [])],
  );
}

/** The next run a frequency after the one due; from now when the service fell so far behind that it would be past too. */
const NEXT_RUN = `CASE
         WHEN c.next_run_at + make_interval(mins => c.frequency) > now()
           THEN c.next_run_at + make_interval(mins => c.frequency)
         ELSE now() + make_interval(mins => c.frequency) END`;

/**
 * Claims the check whose run is most overdue and moves its next run a
 * frequency ahead. Meant for a transaction that also makes the run: the row
 * stays locked until it commits (other service instances skip it and take
 * the next), and a crash before the commit leaves the check due, not lost.
 */
export async function claimDueCheck(tx: Queryable): Promise<CheckRow | undefined> {
  const [check] = await tx.query<CheckRow>(
    `UPDATE checks c SET next_run_at = ${NEXT_RUN}
     WHERE c.id = (
       SELECT id FROM checks WHERE activated AND next_run_at <= now()
         -- A deactivated group's checks wait; switched on again, the group runs them at once.
         AND (group_id IS NULL OR EXISTS (SELECT 1 FROM check_groups g WHERE g.id = checks.group_id AND g.activated))
       ORDER BY next_run_at LIMIT 1 FOR UPDATE OF checks SKIP LOCKED)
     RETURNING c.*`,
  );
  return check;
}

/**
 * Moves a due check's next run a frequency ahead without running it: for a
 * run that could not be made, so one broken check does not hold up the rest.
 * Nothing when another instance has moved it meanwhile.
 */
export async function skipDueRun(db: Queryable, checkId: string): Promise<boolean> {
  const rows = await db.query(
    `UPDATE checks c SET next_run_at = ${NEXT_RUN} WHERE c.id = $1 AND c.activated AND c.next_run_at <= now() RETURNING c.id`,
    [checkId],
  );
  return rows.length > 0;
}

/**
 * Replaces a check's definition. A check switched on runs at once; one
 * switched off is taken out of the schedule; a shorter frequency takes effect
 * from now rather than after the old, longer wait.
 */
export async function updateCheck(
  db: Queryable,
  accountId: string,
  id: string,
  definition: CheckDefinition,
): Promise<CheckRow | undefined> {
  const rows = await db.query<CheckRow>(
    `UPDATE checks SET name = $3, activated = $4, muted = $5, frequency = $6, tags = $7, private_locations = $8,
       definition = $9, group_id = $10, updated_at = now(),
       next_run_at = CASE
         WHEN NOT $4 THEN NULL
         WHEN next_run_at IS NULL THEN now()
         ELSE LEAST(next_run_at, now() + make_interval(mins => $6)) END
     WHERE account_id = $1 AND id = $2
     RETURNING *`,
    [
      accountId,
      id,
      ...definitionColumns(definition),
    ],
  );
  return rows[0];
}

/** Deletes a check with its sessions, results and queued jobs. */
export async function deleteCheck(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM checks WHERE account_id = $1 AND id = $2 RETURNING id', [accountId, id]);
  return rows.length > 0;
}

/** The columns a definition is stored in, in the order both writers bind them. */
function definitionColumns(definition: CheckDefinition): unknown[] {
  return [
    definition.name,
    definition.activated,
    definition.muted,
    definition.frequency,
    JSON.stringify(definition.tags),
    JSON.stringify(definition.privateLocations),
    JSON.stringify(definition),
    typeof definition.groupId === 'number' ? definition.groupId : null,
  ];
}
