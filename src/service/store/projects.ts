import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/database.js';

export interface ProjectRow {
  id: string;
  account_id: string;
  logical_id: string;
  name: string;
  repo_url: string | null;
  created_at: Date;
  updated_at: Date | null;
}

/** What one construct of a project became: its record's id, as text whatever the record's id type. */
export interface ProjectResourceRow {
  resource_type: string;
  logical_id: string;
  physical_id: string;
}

export type DeploymentKind = 'DEPLOY' | 'DESTROY';

export interface DeploymentRow {
  id: string;
  account_id: string;
  project_logical_id: string;
  kind: DeploymentKind;
  status: string;
  result: unknown;
  created_at: Date;
}

/**
 * The project, made on its first deploy, its name and repository kept
 * current; the row stays locked until the transaction ends, so two deploys
 * of one project apply one after the other.
 */
export async function claimProject(
  db: Queryable,
  accountId: string,
  project: { logicalId: string; name: string; repoUrl: string | null },
): Promise<ProjectRow> {
  const [row] = await db.query<ProjectRow>(
    `INSERT INTO projects (id, account_id, logical_id, name, repo_url) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (account_id, logical_id) DO UPDATE SET name = EXCLUDED.name, repo_url = EXCLUDED.repo_url, updated_at = now()
     RETURNING *`,
    [randomUUID(), accountId, project.logicalId, project.name, project.repoUrl],
  );
  return row!;
}

/** The project, locked until the transaction ends; undefined when it was never deployed. */
export async function lockProject(db: Queryable, accountId: string, logicalId: string): Promise<ProjectRow | undefined> {
  const [row] = await db.query<ProjectRow>(
    'SELECT * FROM projects WHERE account_id = $1 AND logical_id = $2 FOR UPDATE',
    [accountId, logicalId],
  );
  return row;
}

export async function projectResources(db: Queryable, projectId: string): Promise<ProjectResourceRow[]> {
  return db.query<ProjectResourceRow>(
    'SELECT resource_type, logical_id, physical_id FROM project_resources WHERE project_id = $1 ORDER BY resource_type, logical_id',
    [projectId],
  );
}

/** The project's constructs are exactly these afterwards. */
export async function replaceProjectResources(
  db: Queryable,
  projectId: string,
  resources: readonly ProjectResourceRow[],
): Promise<void> {
  await db.query('DELETE FROM project_resources WHERE project_id = $1', [projectId]);
  if (resources.length === 0) return;
  await db.query(
    `INSERT INTO project_resources (project_id, resource_type, logical_id, physical_id)
     SELECT $1, t, l, p FROM unnest($2::text[], $3::text[], $4::text[]) AS r(t, l, p)`,
    [
      projectId,
      resources.map((resource) => resource.resource_type),
      resources.map((resource) => resource.logical_id),
      resources.map((resource) => resource.physical_id),
    ],
  );
}

/** Forgets the project and its bookkeeping; the records its constructs became are the caller's. */
export async function deleteProject(db: Queryable, projectId: string): Promise<void> {
  await db.query('DELETE FROM projects WHERE id = $1', [projectId]);
}

export async function recordDeployment(
  db: Queryable,
  accountId: string,
  deployment: { projectLogicalId: string; kind: DeploymentKind; status: string; result: unknown },
): Promise<DeploymentRow> {
  const [row] = await db.query<DeploymentRow>(
    `INSERT INTO project_deployments (id, account_id, project_logical_id, kind, status, result)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [randomUUID(), accountId, deployment.projectLogicalId, deployment.kind, deployment.status, JSON.stringify(deployment.result)],
  );
  return row!;
}

export async function getDeployment(
  db: Queryable,
  accountId: string,
  projectLogicalId: string,
  id: string,
): Promise<DeploymentRow | undefined> {
  const [row] = await db.query<DeploymentRow>(
    'SELECT * FROM project_deployments WHERE account_id = $1 AND project_logical_id = $2 AND id = $3',
    [accountId, projectLogicalId, id],
  );
  return row;
}

/** Checks of the group outside `exceptCheckIds`: a group that still holds any cannot go. */
export async function otherChecksInGroup(
  db: Queryable,
  accountId: string,
  groupId: number,
  exceptCheckIds: readonly string[],
): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM checks WHERE account_id = $1 AND group_id = $2 AND NOT (id::text = ANY($3::text[]))',
    [accountId, groupId, exceptCheckIds],
  );
  return row!.n;
}

export async function deleteEmptyGroup(db: Queryable, accountId: string, groupId: number): Promise<boolean> {
  const rows = await db.query(
    `DELETE FROM check_groups WHERE account_id = $1 AND id = $2
       AND NOT EXISTS (SELECT 1 FROM checks WHERE group_id = $2) RETURNING id`,
    [accountId, groupId],
  );
  return rows.length > 0;
}

/** Slug of each of the account's private locations among `ids`; ids of other accounts, or none, are left out. */
export async function privateLocationSlugsById(db: Queryable, accountId: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.query<{ id: string; slug_name: string }>(
    'SELECT id, slug_name FROM private_locations WHERE account_id = $1 AND id::text = ANY($2::text[])',
    [accountId, ids],
  );
  return new Map(rows.map((row) => [row.id, row.slug_name]));
}

/** The first run of these new checks waits one frequency instead of starting at once. */
export async function deferFirstRuns(db: Queryable, accountId: string, checkIds: readonly string[]): Promise<void> {
  if (checkIds.length === 0) return;
  await db.query(
    `UPDATE checks SET next_run_at = now() + make_interval(mins => frequency)
     WHERE account_id = $1 AND id::text = ANY($2::text[]) AND next_run_at IS NOT NULL`,
    [accountId, checkIds],
  );
}

/**
 * Renames one of the account's status page services in place, keeping what
 * links to it; false when another of its services has the name (names are
 * unique in the account), checked first so the deploy's transaction stays usable.
 */
export async function renameStatusPageService(db: Queryable, accountId: string, id: string, name: string): Promise<boolean> {
  const rows = await db.query(
    `UPDATE status_page_services SET name = $3 WHERE account_id = $1 AND id = $2
       AND NOT EXISTS (SELECT 1 FROM status_page_services o WHERE o.account_id = $1 AND o.name = $3 AND o.id <> $2) RETURNING id`,
    [accountId, id, name],
  );
  return rows.length > 0;
}
