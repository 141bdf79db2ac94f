/**
 * What the service's /metrics reads from the database (service-metrics.ts):
 * state every service instance answers alike, read when scraped.
 */
import type { Queryable } from '../db/database.js';
import type { CheckType } from '../../protocol/enums.js';
import { AGENT_ACTIVE_SECONDS } from './private-locations.js';

export interface AgentCountRow {
  id: string;
  slug_name: string;
  agents: number;
}

/** Agents of each private location that called within AGENT_ACTIVE_SECONDS. */
export async function countConnectedAgents(db: Queryable): Promise<AgentCountRow[]> {
  return db.query<AgentCountRow>(
    `SELECT pl.id, pl.slug_name, count(a.id)::int AS agents
       FROM private_locations pl
       LEFT JOIN agents a ON a.private_location_id = pl.id AND a.last_seen > now() - make_interval(secs => $1)
      GROUP BY pl.id, pl.slug_name`,
    [AGENT_ACTIVE_SECONDS],
  );
}

export interface JobCountRow {
  id: string;
  slug_name: string;
  check_type: CheckType;
  /** The job's own lane (an API job with scripts is a script job). */
  lane: 'uptime' | 'script';
  state: 'queued' | 'leased';
  jobs: number;
  /** Of the leased ones: those whose lease ran out, waiting for the lease sweep. */
  expired: number;
  oldest_seconds: number | null;
}

/** Queued and leased jobs per private location, check type, lane and state. */
export async function countOpenJobs(db: Queryable): Promise<JobCountRow[]> {
  return db.query<JobCountRow>(
    `SELECT pl.id, pl.slug_name, j.check_type, j.lane, j.state, count(*)::int AS jobs,
            count(*) FILTER (WHERE j.state = 'leased' AND j.lease_expires_at < now())::int AS expired,
            extract(epoch FROM now() - min(j.scheduled_at))::float8 AS oldest_seconds
       FROM jobs j JOIN private_locations pl ON pl.id = j.private_location_id
      WHERE j.state IN ('queued', 'leased')
      GROUP BY pl.id, pl.slug_name, j.check_type, j.lane, j.state`,
  );
}

export interface LatestResultRow {
  check_id: string;
  check_name: string;
  check_type: CheckType;
  location: string;
  has_errors: boolean;
  has_failures: boolean;
  is_degraded: boolean;
  timed_out: boolean;
  /** Seconds since the epoch. */
  at: number;
}

/**
 * The latest result of each activated check at each of its private locations
 * (cancelled ones aside), for at most `limit` check/location pairs, the
 * oldest checks first. `pairs`: how many pairs there are in all, results or
 * not, so the caller can say how many it left out.
 */
export async function latestCheckResults(db: Queryable, limit: number): Promise<{ rows: LatestResultRow[]; pairs: number }> {
  const [rows, [count]] = await Promise.all([
    db.query<LatestResultRow>(
      `WITH pairs AS (
         SELECT c.id, c.name, c.check_type, loc.slug
           FROM checks c CROSS JOIN LATERAL jsonb_array_elements_text(c.private_locations) AS loc(slug)
          WHERE c.activated
          ORDER BY c.created_at, c.id, loc.slug
          LIMIT $1)
       SELECT p.id AS check_id, p.name AS check_name, p.check_type, p.slug AS location,
              r.has_errors, r.has_failures, r.is_degraded, r.timed_out,
              extract(epoch FROM COALESCE(r.stopped_at, r.created_at))::float8 AS at
         FROM pairs p
         CROSS JOIN LATERAL (
           SELECT has_errors, has_failures, is_degraded, timed_out, stopped_at, created_at
             FROM check_results
            WHERE check_id = p.id AND run_location = p.slug AND NOT is_cancelled AND result_type = 'FINAL'
            ORDER BY created_at DESC LIMIT 1) r`,
      [limit],
    ),
    db.query<{ pairs: number }>(
      `SELECT COALESCE(sum(jsonb_array_length(private_locations)), 0)::int AS pairs FROM checks WHERE activated`,
    ),
  ]);
  return { rows, pairs: count?.pairs ?? 0 };
}

export interface SessionResultRow {
  check_id: string;
  check_name: string;
  check_type: CheckType;
  location: string;
  has_errors: boolean;
  has_failures: boolean;
  is_degraded: boolean;
  is_cancelled: boolean;
  timed_out: boolean;
  /** Milliseconds; null when nothing ran (timed out, cancelled). */
  response_time: number | null;
}

/** Every location's result of these check sessions, with the check's current name. */
export async function sessionResults(db: Queryable, sessionIds: readonly string[]): Promise<SessionResultRow[]> {
  return db.query<SessionResultRow>(
    `SELECT r.check_id, COALESCE(c.name, r.name) AS check_name, r.check_type, r.run_location AS location,
            r.has_errors, r.has_failures, r.is_degraded, r.is_cancelled, r.timed_out, r.response_time
       FROM check_results r LEFT JOIN checks c ON c.id = r.check_id
      WHERE r.session_id = ANY($1::uuid[])`,
    [sessionIds],
  );
}
