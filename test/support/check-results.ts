import { randomUUID } from 'node:crypto';
import type { TestService } from './service.js';

export interface StoredRun {
  at: Date;
  failed?: boolean;
  degraded?: boolean;
  cancelled?: boolean;
}

/**
 * A URL check at a new private location, linked to a status page service
 * (`triggerIncident.serviceId`), not activated: its history is what the test writes.
 */
export async function linkedCheck(service: TestService, serviceId: string, options: { tags?: string[] } = {}) {
  const location = await service.privateLocation();
  const created = await service.api('POST', '/v1/checks/url', {
    name: `linked to ${serviceId.slice(0, 8)}`,
    activated: false,
    tags: options.tags ?? [],
    privateLocations: [location.slugName],
    request: { url: 'https://shop.test/' },
    triggerIncident: { serviceId, name: 'Shop down', description: 'The shop is down', notifySubscribers: false },
  });
  if (created.status !== 201) throw new Error(`creating a linked check: ${JSON.stringify(created.body)}`);
  return { checkId: created.body.id as string, locationId: location.id };
}

/**
 * Writes results as an agent's reports would leave them, dated in the past:
 * the uptime bar reads stored history, and no agent can report yesterday.
 */
export async function storeRuns(
  service: TestService,
  check: { checkId: string; locationId: string },
  runs: readonly StoredRun[],
  accountId = service.accountId,
): Promise<void> {
  const db = service.service.db;
  // Three statements for the whole history, whatever its length: JSON recordsets, as the service writes batches.
  const rows = runs.map((run) => ({
    session_id: randomUUID(),
    job_id: randomUUID(),
    result_id: randomUUID(),
    status: run.cancelled ? 'CANCELLED' : run.failed ? 'FAILED' : run.degraded ? 'DEGRADED' : 'PASSED',
    failed: run.failed ?? false,
    degraded: run.degraded ?? false,
    cancelled: run.cancelled ?? false,
    status_code: run.failed ? 500 : 200,
    at: run.at.toISOString(),
  }));
  const json = JSON.stringify(rows);
  const recordset = `jsonb_to_recordset($1::jsonb) AS x(session_id uuid, job_id uuid, result_id uuid, status text, failed boolean,
    degraded boolean, cancelled boolean, status_code int, at timestamptz)`;
  await db.query(
    `INSERT INTO check_sessions (id, account_id, check_id, check_type, name, status, run_source, run_locations, started_at, stopped_at)
     SELECT x.session_id, $2, $3, 'URL', 'linked', x.status, 'SCHEDULER', '["here"]', x.at, x.at FROM ${recordset}`,
    [json, accountId, check.checkId],
  );
  await db.query(
    `INSERT INTO jobs (id, session_id, account_id, check_id, private_location_id, run_location, check_type, state, timeout_seconds, payload, created_at)
     SELECT x.job_id, x.session_id, $2, $3, $4, 'here', 'URL', 'done', 10, '{}', x.at FROM ${recordset}`,
    [json, accountId, check.checkId, check.locationId],
  );
  await db.query(
    `INSERT INTO check_results (id, session_id, job_id, account_id, check_id, check_type, name, run_location,
        has_errors, has_failures, is_degraded, aborted, is_cancelled, response_time, status_code, started_at, stopped_at, created_at)
     SELECT x.result_id, x.session_id, x.job_id, $2, $3, 'URL', 'linked', 'here', false, x.failed, x.degraded, false, x.cancelled,
        42, x.status_code, x.at, x.at, x.at
     FROM ${recordset}`,
    [json, accountId, check.checkId],
  );
}

const DAY_MS = 86_400_000;

/** A minute past midnight (UTC) of the day `days` days before today, plus `minutes`: never in the future for today. */
export function daysAgo(days: number, minutes = 0): Date {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), 0, 1 + minutes) - days * DAY_MS);
}
