/**
 * A check's error groups as the checkly CLI reads them (`checks get`): the
 * groups Outpost derives from failed results (rca/error-groups.ts, the same
 * ids GET /v1/checks/{checkId}/error-groups answers with), in the field
 * names of the comparable product. Nothing is stored per group, so a group
 * is never archived, and its analyses are read through the rca commands.
 */
import Type from 'typebox';
import type { Queryable } from '../db/database.js';
import { ERROR_GROUP_DAYS, failedResults, groupErrors, type ErrorGroup } from '../rca/error-groups.js';
import { checksWithRecentFailures } from '../store/error-group-checks.js';

export const CheckErrorGroupSchema = Type.Object({
  id: Type.String(),
  checkId: Type.String(),
  errorHash: Type.String({ description: 'What the failures of the group share: the error code and its message with the varying parts blanked' }),
  rawErrorMessage: Type.Union([Type.String(), Type.Null()]),
  cleanedErrorMessage: Type.String(),
  firstSeen: Type.String(),
  lastSeen: Type.String(),
  archivedUntilNextEvent: Type.Boolean({ description: 'Always false: groups are derived from results, nothing archives them' }),
  code: Type.String(),
  count: Type.Integer({ description: 'Failed results in the group (last 30 days)' }),
  locations: Type.Array(Type.String()),
});
export type CheckErrorGroup = Type.Static<typeof CheckErrorGroupSchema>;

export function checkErrorGroup(group: ErrorGroup): CheckErrorGroup {
  return {
    id: group.id,
    checkId: group.checkId,
    errorHash: group.fingerprint,
    rawErrorMessage: group.message,
    cleanedErrorMessage: group.message,
    firstSeen: group.firstSeen,
    lastSeen: group.lastSeen,
    archivedUntilNextEvent: false,
    code: group.code,
    count: group.count,
    locations: group.locations,
  };
}

/** The check's error groups of the last 30 days, most frequent first. */
export async function errorGroupsOfCheck(db: Queryable, accountId: string, checkId: string): Promise<ErrorGroup[]> {
  return groupErrors(await failedResults(db, accountId, { checkId }), { checkSessionId: null }).map(({ group }) => group);
}

/** The account's check error group with this id, looked for among the checks that failed in the last 30 days. */
export async function findCheckErrorGroup(db: Queryable, accountId: string, groupId: string): Promise<ErrorGroup | undefined> {
  for (const checkId of await checksWithRecentFailures(db, accountId, ERROR_GROUP_DAYS)) {
    const found = (await errorGroupsOfCheck(db, accountId, checkId)).find((group) => group.id === groupId);
    if (found) return found;
  }
  return undefined;
}
