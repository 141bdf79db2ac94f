import { createHash } from 'node:crypto';
import type { Queryable } from '../db/database.js';
import { failedResultRows, type FailedResultRow } from '../store/check-results.js';

/** One failed location result, as an analysis reads it. */
export interface FailedResult {
  resultId: string;
  checkSessionId: string;
  runLocation: string;
  checkType: string;
  startedAt: string | null;
  stoppedAt: string | null;
  responseTime: number | null;
  statusCode: number | null;
  timings: Record<string, number | null> | null;
  error: { code: string; message: string } | null;
  failedAssertions: { source: string; property: string; comparison: string; target: string; actual: unknown }[];
  logTail: string[];
}

export interface ErrorGroup {
  id: string;
  checkId: string;
  /** Set for the error groups of one session. */
  checkSessionId: string | null;
  fingerprint: string;
  code: string;
  /** The first result's message, as it was. */
  message: string;
  count: number;
  locations: string[];
  firstSeen: string;
  lastSeen: string;
}

/** How far back a check's error groups look. */
export const ERROR_GROUP_DAYS = 30;
/** Results read per request; the newest count. */
const MAX_RESULTS = 2000;
/** Results an analysis is given per group, newest first. */
export const SAMPLE_SIZE = 20;

/**
 * What makes two failures the same: the error code and its message with the
 * parts that change run to run (ids, addresses, numbers) blanked; a failed
 * assertion by what it asserts.
 */
export function fingerprintOf(result: FailedResult): { fingerprint: string; code: string; message: string } {
  if (result.error) {
    const normalized = result.error.message
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<id>')
      .replace(/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g, '<address>')
      .replace(/\d+(?:\.\d+)?/g, '<n>')
      .slice(0, 300);
    return { fingerprint: `${result.error.code}: ${normalized}`, code: result.error.code, message: result.error.message };
  }
  const assertion = result.failedAssertions[0];
  if (assertion) {
    const what = `${assertion.source}${assertion.property ? `.${assertion.property}` : ''} ${assertion.comparison} ${assertion.target}`;
    return { fingerprint: `ASSERTION_FAILED: ${what}`, code: 'ASSERTION_FAILED', message: `Assertion failed: ${what} (got ${String(assertion.actual)})` };
  }
  return { fingerprint: 'FAILED', code: 'FAILED', message: 'The check failed without an error or a failed assertion' };
}

const failed = (row: FailedResultRow): FailedResult => ({
  resultId: row.id,
  checkSessionId: row.session_id,
  runLocation: row.run_location,
  checkType: row.check_type,
  startedAt: row.started_at?.toISOString() ?? null,
  stoppedAt: (row.stopped_at ?? row.created_at).toISOString(),
  responseTime: row.response_time,
  statusCode: row.status_code,
  timings: row.timings,
  error: row.error,
  failedAssertions: row.assertions
    .filter((assertion) => !assertion.passed)
    .map(({ source, property, comparison, target, actual }) => ({ source, property, comparison, target, actual })),
  logTail: row.logs.slice(-20).map((line) => `${line.level}: ${line.message}`),
});

/** Failed results of a check (recent) or of one session, newest first. */
export async function failedResults(
  db: Queryable,
  accountId: string,
  scope: { checkId: string } | { checkSessionId: string },
): Promise<(FailedResult & { checkId: string })[]> {
  const rows = await failedResultRows(
    db,
    accountId,
    'checkSessionId' in scope ? scope : { checkId: scope.checkId, days: ERROR_GROUP_DAYS },
    MAX_RESULTS,
  );
  return rows.map((row) => ({ ...failed(row), checkId: row.check_id }));
}

/** Groups failed results by fingerprint, most frequent first; each with a sample for an analysis. */
export function groupErrors(
  results: readonly (FailedResult & { checkId: string })[],
  scope: { checkSessionId: string | null },
): { group: ErrorGroup; sample: FailedResult[] }[] {
  const groups = new Map<string, { group: ErrorGroup; sample: FailedResult[] }>();
  for (const result of results) {
    const { fingerprint, code, message } = fingerprintOf(result);
    const at = result.stoppedAt ?? result.startedAt ?? new Date(0).toISOString();
    let entry = groups.get(fingerprint);
    if (!entry) {
      const id = createHash('sha256')
        .update(`${scope.checkSessionId ?? result.checkId}\n${fingerprint}`)
        .digest('hex')
        .slice(0, 24);
      entry = {
        group: {
          id,
          checkId: result.checkId,
          checkSessionId: scope.checkSessionId,
          fingerprint,
          code,
          message,
          count: 0,
          locations: [],
          firstSeen: at,
          lastSeen: at,
        },
        sample: [],
      };
      groups.set(fingerprint, entry);
    }
    const { group } = entry;
    group.count += 1;
    if (!group.locations.includes(result.runLocation)) group.locations.push(result.runLocation);
    if (at < group.firstSeen) group.firstSeen = at;
    if (at > group.lastSeen) group.lastSeen = at;
    if (entry.sample.length < SAMPLE_SIZE) {
      const { checkId: _checkId, ...sample } = result;
      entry.sample.push(sample);
    }
  }
  for (const { group } of groups.values()) group.locations.sort();
  return [...groups.values()].sort((a, b) => b.group.count - a.group.count || (a.group.lastSeen < b.group.lastSeen ? 1 : -1));
}
