/**
 * Test sessions as the public `checkly` CLI reads them (`test-sessions list`
 * and `get`). Outpost has no users behind API keys, no error groups and no
 * projects of test runs: those fields are null or empty.
 */
import type { TestResultRow, TestSessionSummaryRow } from '../store/test-sessions.js';

type ResultStatus = 'PASSED' | 'FAILED' | 'CANCELLED';

function resultStatus(result: TestResultRow): ResultStatus {
  if (result.is_cancelled) return 'CANCELLED';
  return result.has_failures || result.has_errors ? 'FAILED' : 'PASSED';
}

function repoField(session: TestSessionSummaryRow, field: string): string | null {
  const value = session.repo_info?.[field];
  return typeof value === 'string' && value !== '' ? value : null;
}

export function testSessionLink(baseUrl: string, id: string): string {
  return `${baseUrl}/v1/test-sessions/${id}`;
}

export function testSessionListEntry(session: TestSessionSummaryRow) {
  const bucket = (statuses: readonly string[]) =>
    session.checks.filter((check) => statuses.includes(check.status)).map((check) => check.name);
  return {
    id: session.id,
    accountId: session.account_id,
    projectId: null,
    name: session.name,
    provider: session.provider,
    running: bucket(['STARTED', 'PROGRESS', 'PROGRESS_FAILED', 'PROGRESS_DEGRADED']),
    passed: bucket(['PASSED', 'DEGRADED']),
    failed: bucket(['FAILED', 'TIMED_OUT']),
    cancelled: bucket(['CANCELLED']),
    status: session.status,
    region: session.run_location,
    privateLocationId: session.private_location_id,
    invoker: null,
    repoUrl: repoField(session, 'repoUrl'),
    commitId: repoField(session, 'commitId'),
    commitOwner: repoField(session, 'commitOwner'),
    commitMessage: repoField(session, 'commitMessage'),
    branchName: repoField(session, 'branchName'),
    environment: session.environment,
    startedAt: session.started_at.toISOString(),
    stoppedAt: session.stopped_at?.toISOString() ?? null,
    created_at: session.started_at.toISOString(),
    updated_at: null,
  };
}

export function testSessionDetail(session: TestSessionSummaryRow, results: readonly TestResultRow[], baseUrl: string) {
  const link = testSessionLink(baseUrl, session.id);
  const metadata = Object.fromEntries(
    [
      ['environment', session.environment],
      ...['repoUrl', 'commitId', 'commitOwner', 'commitMessage', 'branchName'].map((field) => [field, repoField(session, field)]),
    ].filter(([, value]) => value !== null),
  ) as Record<string, string>;
  return {
    testSessionId: session.id,
    testSessionLink: link,
    name: session.name,
    status: session.status,
    provider: session.provider,
    runLocation: session.run_location,
    startedAt: session.started_at.toISOString(),
    stoppedAt: session.stopped_at?.toISOString() ?? null,
    timeElapsed: Math.max(0, (session.stopped_at ?? new Date()).getTime() - session.started_at.getTime()),
    metadata,
    errorGroupIds: [] as string[],
    results: results.map((result) => ({
      testSessionResultId: result.id,
      testSessionResultLink: `${link}/results/${result.id}`,
      checkId: result.check_id === result.sequence_id ? null : result.check_id,
      checkType: result.check_type,
      name: result.name,
      runLocation: result.run_location,
      resultType: result.result_type,
      status: resultStatus(result),
      hasErrors: result.has_errors,
      hasFailures: result.has_failures,
      isDegraded: result.is_degraded,
      aborted: result.aborted,
      isCancelled: result.is_cancelled,
      responseTime: result.response_time,
      startedAt: result.started_at?.toISOString() ?? null,
      stoppedAt: result.stopped_at?.toISOString() ?? null,
      errorGroupIds: [] as string[],
    })),
  };
}
