import type { Database } from '../db/database.js';
import { deleteChannel } from '../store/alert-channels.js';
import { deleteCheck } from '../store/checks.js';
import { deleteWindow } from '../store/maintenance-windows.js';
import { deleteEmptyGroup, otherChecksInGroup, type ProjectResourceRow } from '../store/projects.js';
import { deletePage, deleteService } from '../store/status-pages.js';
import { ConstructInvalidError } from './construct-invalid-error.js';
import { physicalIdOf, type DiffEntry } from './diff.js';

/**
 * Kinds whose records deploy owns, in the order they go; link constructs live
 * on their check or group and go with it. Pages before services: a service a
 * page still shows cannot go.
 */
const ORDER = ['check', 'check-group', 'alert-channel', 'maintenance-window', 'status-page', 'status-page-service'];

/**
 * Deletes the records of constructs gone from the project: checks first, so
 * a group they leave is empty; a group still holding checks from outside the
 * project stays and fails the deploy, as DELETE /v1/check-groups/{id} would.
 */
export async function removeResources(
  /** The deploy's (or destroy's) transaction. */
  tx: Database,
  accountId: string,
  rows: readonly ProjectResourceRow[],
): Promise<DiffEntry[]> {
  const diff: DiffEntry[] = [];
  const sorted = [...rows].sort((a, b) => rank(a.resource_type) - rank(b.resource_type));
  const removedChecks = rows.filter((row) => row.resource_type === 'check').map((row) => row.physical_id);
  for (const row of sorted) {
    if (row.resource_type === 'check') {
      await deleteCheck(tx, accountId, row.physical_id);
    } else if (row.resource_type === 'check-group') {
      const groupId = Number(row.physical_id);
      const others = await otherChecksInGroup(tx, accountId, groupId, removedChecks);
      if (others > 0) {
        throw new ConstructInvalidError(
          { type: row.resource_type, logicalId: row.logical_id },
          `check group ${groupId} still holds ${others} check(s) that are not part of this project; move or delete them first`,
        );
      }
      await deleteEmptyGroup(tx, accountId, groupId);
    } else if (row.resource_type === 'alert-channel') {
      await deleteChannel(tx, accountId, Number(row.physical_id));
    } else if (row.resource_type === 'maintenance-window') {
      await deleteWindow(tx, accountId, Number(row.physical_id));
    } else if (row.resource_type === 'status-page') {
      await deletePage(tx, accountId, row.physical_id);
    } else if (row.resource_type === 'status-page-service') {
      if ((await deleteService(tx, accountId, row.physical_id)) === 'in-use') {
        throw new ConstructInvalidError(
          { type: row.resource_type, logicalId: row.logical_id },
          `status page service ${row.physical_id} is still shown on a status page that is not part of this project; take it off that page first`,
        );
      }
    }
    diff.push({ type: row.resource_type, logicalId: row.logical_id, physicalId: physicalIdOf(row.resource_type, row.physical_id), action: 'DELETE' });
  }
  return diff;
}

function rank(type: string): number {
  const index = ORDER.indexOf(type);
  return index === -1 ? ORDER.length : index;
}
