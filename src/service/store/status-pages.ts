import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../db/database.js';
import { normalizeColors, type Branding, type Theme, type ThemeColors } from '../status-pages/branding.js';

const UNIQUE_VIOLATION = '23505';

export interface ServiceRecord {
  id: string;
  name: string;
  created_at: string;
}

export interface CardInput {
  name: string;
  services: string[];
}

export interface StatusPageInput extends Branding {
  name: string;
  url: string;
  cards: CardInput[];
}

export interface StatusPageRecord extends Branding {
  id: string;
  name: string;
  url: string;
  cards: { name: string; services: { id: string; name: string }[] }[];
  created_at: string;
  updated_at: string | null;
}

interface PageRow {
  id: string;
  account_id: string;
  name: string;
  url: string;
  cards: CardInput[];
  logo: string | null;
  redirect_to: string | null;
  favicon: string | null;
  default_theme: Theme;
  theme_colors: { light?: ThemeColors; dark?: ThemeColors };
  created_at: Date;
  updated_at: Date | null;
}

export async function createService(db: Queryable, accountId: string, name: string): Promise<ServiceRecord | undefined> {
  const [row] = await db.query<{ id: string; name: string; created_at: Date }>(
    `INSERT INTO status_page_services (id, account_id, name) VALUES ($1, $2, $3)
     ON CONFLICT (account_id, name) DO NOTHING RETURNING id, name, created_at`,
    [randomUUID(), accountId, name],
  );
  return row && { ...row, created_at: row.created_at.toISOString() };
}

export async function listServices(db: Queryable, accountId: string): Promise<ServiceRecord[]> {
  const rows = await db.query<{ id: string; name: string; created_at: Date }>(
    'SELECT id, name, created_at FROM status_page_services WHERE account_id = $1 ORDER BY name, id',
    [accountId],
  );
  return rows.map((row) => ({ ...row, created_at: row.created_at.toISOString() }));
}

/** Names of the account's services among `ids`; an id missing from the map is not the account's. */
export async function serviceNames(db: Queryable, accountId: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<{ id: string; name: string }>(
    'SELECT id, name FROM status_page_services WHERE account_id = $1 AND id = ANY($2::uuid[])',
    [accountId, [...new Set(ids)]],
  );
  return new Map(rows.map((row) => [row.id, row.name]));
}

export type DeleteServiceOutcome = 'deleted' | 'not-found' | 'in-use';

/** A service a status page still shows stays: the page would lose a line silently. */
export async function deleteService(db: Database, accountId: string, id: string): Promise<DeleteServiceOutcome> {
  return db.transaction(async (tx) => {
    const [service] = await tx.query<{ id: string }>(
      'SELECT id FROM status_page_services WHERE account_id = $1 AND id = $2 FOR UPDATE',
      [accountId, id],
    );
    if (!service) return 'not-found';
    const [used] = await tx.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM status_pages p, jsonb_array_elements(p.cards) card
       WHERE p.account_id = $1 AND card->'services' ? $2`,
      [accountId, id],
    );
    if (used!.n > 0) return 'in-use';
    await tx.query('DELETE FROM status_page_services WHERE id = $1', [id]);
    return 'deleted';
  });
}

async function pageRecord(db: Queryable, row: PageRow): Promise<StatusPageRecord> {
  const names = await serviceNames(db, row.account_id, row.cards.flatMap((card) => card.services));
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    cards: row.cards.map((card) => ({
      name: card.name,
      services: card.services.filter((id) => names.has(id)).map((id) => ({ id, name: names.get(id)! })),
    })),
    logo: row.logo,
    redirectTo: row.redirect_to,
    favicon: row.favicon,
    defaultTheme: row.default_theme,
    themeColors: { light: normalizeColors(row.theme_colors.light), dark: normalizeColors(row.theme_colors.dark) },
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at?.toISOString() ?? null,
  };
}

const brandingParams = (input: Branding) => [
  input.logo,
  input.redirectTo,
  input.favicon,
  input.defaultTheme,
  JSON.stringify({ light: normalizeColors(input.themeColors.light), dark: normalizeColors(input.themeColors.dark) }),
];

/** Undefined when the url is taken (urls are the public address, unique in the installation). */
export async function createPage(db: Queryable, accountId: string, input: StatusPageInput): Promise<StatusPageRecord | undefined> {
  const [row] = await db.query<PageRow>(
    `INSERT INTO status_pages (id, account_id, name, url, cards, logo, redirect_to, favicon, default_theme, theme_colors)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (url) DO NOTHING RETURNING *`,
    [randomUUID(), accountId, input.name, input.url, JSON.stringify(input.cards), ...brandingParams(input)],
  );
  return row && pageRecord(db, row);
}

export async function getPage(db: Queryable, accountId: string, id: string): Promise<StatusPageRecord | undefined> {
  const [row] = await db.query<PageRow>('SELECT * FROM status_pages WHERE account_id = $1 AND id = $2', [accountId, id]);
  return row && pageRecord(db, row);
}

/** A page by its public url, whoever's it is: what the public HTML page shows. */
export async function pageByUrl(db: Queryable, url: string): Promise<(StatusPageRecord & { accountId: string }) | undefined> {
  const [row] = await db.query<PageRow>('SELECT * FROM status_pages WHERE url = $1', [url]);
  return row && { ...(await pageRecord(db, row)), accountId: row.account_id };
}

export async function listPages(db: Queryable, accountId: string, page: { limit: number; page: number }): Promise<StatusPageRecord[]> {
  const rows = await db.query<PageRow>(
    'SELECT * FROM status_pages WHERE account_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3',
    [accountId, page.limit, (page.page - 1) * page.limit],
  );
  const records: StatusPageRecord[] = [];
  for (const row of rows) records.push(await pageRecord(db, row));
  return records;
}

/**
 * Oldest first from the page `fromId` on (from the first without it): up to
 * `limit` pages, and the id the next page starts at. An id that is no page
 * of the account's (deleted since) ends the list rather than starting it over.
 */
export async function listPagesFrom(
  db: Queryable,
  accountId: string,
  query: { limit: number; fromId: string | undefined },
): Promise<{ pages: StatusPageRecord[]; nextId: string | null }> {
  const rows = await db.query<PageRow>(
    `SELECT * FROM status_pages p WHERE p.account_id = $1
       AND ($2::uuid IS NULL OR (p.created_at, p.id) >= (SELECT f.created_at, f.id FROM status_pages f WHERE f.account_id = $1 AND f.id = $2::uuid))
     ORDER BY p.created_at, p.id LIMIT $3`,
    [accountId, query.fromId ?? null, query.limit + 1],
  );
  const pages: StatusPageRecord[] = [];
  for (const row of rows.slice(0, query.limit)) pages.push(await pageRecord(db, row));
  return { pages, nextId: rows[query.limit]?.id ?? null };
}

export type UpdatePageOutcome = { updated: StatusPageRecord } | { notFound: true } | { urlTaken: true };

export async function updatePage(
  db: Queryable,
  accountId: string,
  id: string,
  input: StatusPageInput,
): Promise<UpdatePageOutcome> {
  let rows: PageRow[];
  try {
    rows = await db.query<PageRow>(
      `UPDATE status_pages SET name = $3, url = $4, cards = $5, logo = $6, redirect_to = $7, favicon = $8,
         default_theme = $9, theme_colors = $10, updated_at = now()
       WHERE account_id = $1 AND id = $2 RETURNING *`,
      [accountId, id, input.name, input.url, JSON.stringify(input.cards), ...brandingParams(input)],
    );
  } catch (error) {
    if ((error as { code?: string }).code === UNIQUE_VIOLATION) return { urlTaken: true };
    throw error;
  }
  const [row] = rows;
  return row ? { updated: await pageRecord(db, row) } : { notFound: true };
}

export async function deletePage(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM status_pages WHERE account_id = $1 AND id = $2 RETURNING id', [accountId, id]);
  return rows.length > 0;
}

/** A check that opens incidents on one of the services (`triggerIncident.serviceId`): it feeds the service's uptime. */
export interface LinkedCheck {
  serviceId: string;
  checkId: string;
  tags: string[];
}

const LINKED_SERVICE = "c.definition->'triggerIncident'->>'serviceId'";

export async function linkedChecks(db: Queryable, accountId: string, serviceIds: readonly string[]): Promise<LinkedCheck[]> {
  if (serviceIds.length === 0) return [];
  const rows = await db.query<{ service_id: string; id: string; tags: string[] }>(
    `SELECT ${LINKED_SERVICE} AS service_id, c.id, c.tags FROM checks c
     WHERE c.account_id = $1 AND ${LINKED_SERVICE} = ANY($2::text[]) ORDER BY c.created_at, c.id`,
    [accountId, [...new Set(serviceIds)]],
  );
  return rows.map((row) => ({ serviceId: row.service_id, checkId: row.id, tags: row.tags }));
}

/** One service's runs on one UTC day: how many, and how many neither failed nor errored. */
export interface ServiceDay {
  serviceId: string;
  /** YYYY-MM-DD, a UTC day. */
  day: string;
  runs: number;
  passed: number;
}

/**
 * Per service and UTC day since `from`, the results of the checks linked to
 * it. Runs that measured nothing are left out: cancelled ones, and those the
 * service timed out because no agent ran them. A degraded run counts as
 * passed: the service answered.
 */
export async function dailyRuns(db: Queryable, accountId: string, serviceIds: readonly string[], from: Date): Promise<ServiceDay[]> {
  if (serviceIds.length === 0) return [];
  const rows = await db.query<{ service_id: string; day: string; runs: number; passed: number }>(
    `SELECT ${LINKED_SERVICE} AS service_id,
            to_char(COALESCE(r.started_at, r.created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
            count(*)::int AS runs,
            (count(*) FILTER (WHERE NOT (r.has_failures OR r.has_errors)))::int AS passed
     FROM checks c JOIN check_results r ON r.check_id = c.id
     WHERE c.account_id = $1 AND ${LINKED_SERVICE} = ANY($2::text[]) AND r.account_id = $1
       AND r.created_at >= $3::timestamptz AND COALESCE(r.started_at, r.created_at) >= $3::timestamptz
       AND NOT r.is_cancelled AND NOT r.timed_out AND r.result_type = 'FINAL'
     GROUP BY 1, 2 ORDER BY 1, 2`,
    [accountId, [...new Set(serviceIds)], from],
  );
  return rows.map((row) => ({ serviceId: row.service_id, day: row.day, runs: row.runs, passed: row.passed }));
}
