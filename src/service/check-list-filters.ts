/**
 * The filters of GET /v1/checks, as the checkly CLI's `checks list` and
 * `checks stats` send them, and the one filter the checks table cannot
 * answer alone: a check's status, which comes from its latest run.
 */
import Type from 'typebox';
import type { Queryable } from './db/database.js';
import { listCheckStatuses, type CheckStatusRow } from './store/check-statuses.js';
import { CHECK_TYPES } from '../protocol/enums.js';

export const CHECK_LIST_STATUSES = ['passing', 'failing', 'degraded'] as const;
export type CheckListStatus = (typeof CHECK_LIST_STATUSES)[number];

const tagList = (description: string) => Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100, description });

export const CheckListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  tag: Type.Optional(tagList('Checks carrying at least one of these tags (repeated or comma-separated)')),
  // Axios, which the checkly CLI sends requests with, writes a list as tag[]=a&tag[]=b.
  'tag[]': Type.Optional(tagList('The same as tag')),
  checkType: Type.Optional(Type.Enum(CHECK_TYPES)),
  search: Type.Optional(Type.String({ maxLength: 200, description: 'Part of the name, any case' })),
  status: Type.Optional(
    Type.Enum(CHECK_LIST_STATUSES, {
      description:
        "From the check's latest finished run: failing (a location failed or errored), degraded, passing. A check that has not run yet has none.",
    }),
  ),
});

/** The status the checkly CLI shows for a check, or none before its first finished run. */
export function listStatusOf(row: CheckStatusRow): CheckListStatus | undefined {
  if (row.has_failures === null) return undefined;
  if (row.has_failures || row.has_errors) return 'failing';
  return row.is_degraded ? 'degraded' : 'passing';
}

/** The ids of the account's checks whose status is `status`. */
export async function checkIdsWithStatus(db: Queryable, accountId: string, status: CheckListStatus): Promise<string[]> {
  const statuses = await listCheckStatuses(db, accountId);
  return statuses.filter((row) => listStatusOf(row) === status).map((row) => row.check_id);
}
