import type { ServiceContext } from '../context.js';
import { deleteProject, lockProject, projectResources, recordDeployment, type DeploymentRow } from '../store/projects.js';
import { physicalIdOf, type DiffEntry } from './diff.js';
import { removeResources } from './removal.js';
import { transactionalDatabase } from './transactional-database.js';

/**
 * Deletes a project in one transaction: with its records (checks, groups,
 * alert channels, status pages its constructs became), or, preserving them, only the
 * project, after which they are ordinary records of the account.
 * undefined: there is no such project (already gone).
 */
export async function destroyProject(
  ctx: ServiceContext,
  accountId: string,
  logicalId: string,
  options: { preserveResources: boolean },
): Promise<DeploymentRow | undefined> {
  return ctx.db.transaction(async (tx) => {
    const project = await lockProject(tx, accountId, logicalId);
    if (!project) return undefined;
    const rows = await projectResources(tx, project.id);
    const diff: DiffEntry[] = options.preserveResources
      ? rows.map((row) => ({ type: row.resource_type, logicalId: row.logical_id, physicalId: physicalIdOf(row.resource_type, row.physical_id), action: 'DETACHED' }))
      : await removeResources(transactionalDatabase(ctx.db, tx), accountId, rows);
    await deleteProject(tx, project.id);
    return recordDeployment(tx, accountId, { projectLogicalId: logicalId, kind: 'DESTROY', status: 'SUCCEEDED', result: { diff } });
  });
}
