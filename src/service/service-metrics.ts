/**
 * The service's Prometheus metrics: the work waiting for and running at each
 * private location, and its agents. Read from the database when scraped, so
 * every service instance answers the same numbers. The point is demand an
 * autoscaler can see without any agent running: jobs queued at a location
 * are invisible to its agents until claimed.
 */
import { Gauge, Registry } from 'prom-client';
import type { Queryable } from './db/database.js';
import { collectProcessMetrics } from '../metrics/process-metrics.js';
import { laneOf } from '../protocol/lanes.js';
import type { CheckType } from '../protocol/enums.js';
import { VERSION } from '../version.js';
import { AGENT_ACTIVE_SECONDS } from './store/private-locations.js';

const LOCATION = ['private_location_id', 'private_location'] as const;

interface JobCountRow {
  id: string;
  slug_name: string;
  check_type: CheckType;
  state: 'queued' | 'leased';
  jobs: number;
  oldest_seconds: number | null;
}

export function createServiceMetrics(db: Queryable): Registry {
  const registry = new Registry();
  new Gauge({
    name: 'outpost_service_agents_connected',
    help: `Agents of a private location that called within the last ${AGENT_ACTIVE_SECONDS} s`,
    labelNames: LOCATION,
    registers: [registry],
    async collect() {
      const rows = await db.query<{ id: string; slug_name: string; agents: number }>(
        `SELECT pl.id, pl.slug_name, count(a.id)::int AS agents
           FROM private_locations pl
           LEFT JOIN agents a ON a.private_location_id = pl.id AND a.last_seen > now() - make_interval(secs => $1)
          GROUP BY pl.id, pl.slug_name`,
        [AGENT_ACTIVE_SECONDS],
      );
      this.reset();
      for (const row of rows) this.set({ private_location_id: row.id, private_location: row.slug_name }, row.agents);
    },
  });
  // Both job gauges come from one query. A scrape collects every metric at once, so the
  // first of the two to be collected runs it and the other shares its answer.
  let counting: Promise<JobCountRow[]> | undefined;
  const countJobs = () =>
    (counting ??= db
      .query<JobCountRow>(
        `SELECT pl.id, pl.slug_name, j.check_type, j.state, count(*)::int AS jobs,
                extract(epoch FROM now() - min(j.scheduled_at))::float8 AS oldest_seconds
           FROM jobs j JOIN private_locations pl ON pl.id = j.private_location_id
          WHERE j.state IN ('queued', 'leased')
          GROUP BY pl.id, pl.slug_name, j.check_type, j.state`,
      )
      .finally(() => setImmediate(() => (counting = undefined))));
  const collectJobs = async () => {
    const rows = await countJobs();
    jobs.reset();
    oldest.reset();
    // Check types of one lane are summed; a lane's oldest job is the oldest of its types'.
    const oldestByLane = new Map<string, { labels: Record<string, string>; seconds: number }>();
    for (const row of rows) {
      const labels = { private_location_id: row.id, private_location: row.slug_name, lane: laneOf(row.check_type) };
      jobs.inc({ ...labels, state: row.state }, row.jobs);
      if (row.state !== 'queued' || row.oldest_seconds === null) continue;
      const key = `${row.id}/${labels.lane}`;
      const seconds = Math.max(0, row.oldest_seconds);
      if (seconds >= (oldestByLane.get(key)?.seconds ?? -1)) oldestByLane.set(key, { labels, seconds });
    }
    for (const { labels, seconds } of oldestByLane.values()) oldest.set(labels, seconds);
  };
  const jobs = new Gauge({
    name: 'outpost_service_jobs',
    help: 'Jobs of private locations, by lane and state: queued (waiting for an agent) or leased (an agent runs them)',
    labelNames: [...LOCATION, 'lane', 'state'] as const,
    registers: [registry],
    collect: () => collectJobs(),
  });
  const oldest = new Gauge({
    name: 'outpost_service_oldest_queued_job_age_seconds',
    help: 'How long the oldest queued job of a private location and lane has waited since it was due',
    labelNames: [...LOCATION, 'lane'] as const,
    registers: [registry],
    collect: () => collectJobs(),
  });
  new Gauge({
    name: 'outpost_service_build_info',
    help: 'Service version and Node.js runtime',
    labelNames: ['version', 'node'] as const,
    registers: [registry],
  }).set({ version: VERSION, node: process.version }, 1);
  collectProcessMetrics(registry, 'outpost_service_');
  return registry;
}
