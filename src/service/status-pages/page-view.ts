import type { Queryable } from '../db/database.js';
import { windowActiveAt } from '../maintenance/active.js';
import type { MaintenanceStatus } from '../maintenance/status.js';
import { listIncidents, type IncidentRecord } from '../store/incidents.js';
import { allWindows, openMaintenances, type OpenMaintenance } from '../store/maintenance-windows.js';
import { dailyRuns, linkedChecks, type ServiceDay, type StatusPageRecord } from '../store/status-pages.js';
import type { IncidentSeverity, IncidentStatus } from './incident-status.js';
import { uptimeByService, uptimeStart, type Uptime } from './uptime.js';

/** Past incidents a page lists. */
export const HISTORY_DAYS = 7;
/** Incidents a feed carries, newest first. */
export const FEED_INCIDENTS = 25;

/**
 * A service's state, as the comparable products name it: the code of their
 * JSON summaries, and the label a visitor reads.
 */
export const SERVICE_STATES = {
  operational: { label: 'Operational', rank: 0 },
  under_maintenance: { label: 'Under maintenance', rank: 0 },
  degraded_performance: { label: 'Degraded performance', rank: 1 },
  partial_outage: { label: 'Partial outage', rank: 3 },
  major_outage: { label: 'Major outage', rank: 4 },
} as const;
export type ServiceStateCode = keyof typeof SERVICE_STATES;

const BY_SEVERITY: Record<IncidentSeverity, ServiceStateCode> = {
  MINOR: 'degraded_performance',
  MEDIUM: 'degraded_performance',
  MAJOR: 'partial_outage',
  CRITICAL: 'major_outage',
};

export const INCIDENT_STATUS_LABELS: Record<IncidentStatus, string> = {
  INVESTIGATING: 'Investigating',
  IDENTIFIED: 'Identified',
  MONITORING: 'Monitoring',
  RESOLVED: 'Resolved',
};

export const MAINTENANCE_STATUS_LABELS: Record<MaintenanceStatus, string> = {
  SCHEDULED: 'Scheduled',
  IN_PROGRESS: 'In progress',
  VERIFYING: 'Verifying',
  COMPLETED: 'Completed',
  CANCELLED: 'Cancelled',
};

export const SEVERITY_LABELS: Record<IncidentSeverity, string> = {
  MINOR: 'Minor',
  MEDIUM: 'Medium',
  MAJOR: 'Major',
  CRITICAL: 'Critical',
};

/**
 * A service is as bad as the worst open incident naming it; with none, it
 * is under maintenance while a maintenance window covers one of the checks
 * linked to it (its schedule is open, or a maintenance of it is in progress
 * or being verified), and operational otherwise.
 */
export function serviceState(serviceId: string, open: readonly IncidentRecord[], inMaintenance = false): ServiceStateCode {
  let worst: ServiceStateCode = 'operational';
  for (const incident of open) {
    if (!incident.services.some((service) => service.id === serviceId)) continue;
    const state = BY_SEVERITY[incident.severity] ?? 'operational';
    if (SERVICE_STATES[state].rank > SERVICE_STATES[worst].rank) worst = state;
  }
  return worst === 'operational' && inMaintenance ? 'under_maintenance' : worst;
}

export interface ServiceView {
  id: string;
  name: string;
  state: ServiceStateCode;
  /** Null when no check is linked to the service: there is nothing to measure. */
  uptime: Uptime | null;
}

export interface PageView {
  page: StatusPageRecord & { accountId: string };
  now: Date;
  cards: { name: string; services: ServiceView[] }[];
  /** Each service once, in the order the cards show them. */
  services: ServiceView[];
  open: IncidentRecord[];
  recent: IncidentRecord[];
  maintenances: OpenMaintenance[];
}

/** How long a page's daily runs are reused: every visitor's page refreshes every minute, the days change slowly. */
const UPTIME_CACHE_MS = 60_000;
const UPTIME_CACHE_ENTRIES = 500;
const uptimeCache = new WeakMap<Queryable, Map<string, { at: number; rows: ServiceDay[] }>>();

/** The services' runs per day since the bar's start, read at most once a minute per database and set of services. */
async function cachedDailyRuns(db: Queryable, accountId: string, serviceIds: readonly string[], now: Date): Promise<ServiceDay[]> {
  const from = uptimeStart(now);
  const key = `${accountId} ${from.toISOString()} ${[...serviceIds].sort().join(',')}`;
  let cache = uptimeCache.get(db);
  if (!cache) uptimeCache.set(db, (cache = new Map<string, { at: number; rows: ServiceDay[] }>()));
  const hit = cache.get(key);
  if (hit && now.getTime() - hit.at >= 0 && now.getTime() - hit.at < UPTIME_CACHE_MS) return hit.rows;
  const rows = await dailyRuns(db, accountId, serviceIds, from);
  cache.delete(key);
  cache.set(key, { at: now.getTime(), rows });
  // Oldest first out: a Map keeps insertion order.
  while (cache.size > UPTIME_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  return rows;
}

/** Which of the services a maintenance window covers now, through the tags of their linked checks. */
async function servicesInMaintenance(
  db: Queryable,
  accountId: string,
  linked: readonly { serviceId: string; tags: string[] }[],
  maintenances: readonly OpenMaintenance[],
  now: Date,
): Promise<Set<string>> {
  if (linked.length === 0) return new Set();
  const windows = await allWindows(db, accountId);
  const working = new Set(
    maintenances.filter((m) => m.status === 'IN_PROGRESS' || m.status === 'VERIFYING').map((m) => m.maintenanceWindowId),
  );
  const covering = windows.filter((window) => working.has(window.id) || windowActiveAt(window, now));
  const services = new Set<string>();
  for (const check of linked) {
    if (covering.some((window) => window.tags.some((tag) => check.tags.includes(tag)))) services.add(check.serviceId);
  }
  return services;
}

/** Everything a page, its summary and its feeds show, read at `now`. */
export async function loadPageView(db: Queryable, page: StatusPageRecord & { accountId: string }, now = new Date()): Promise<PageView> {
  const ids = [...new Set(page.cards.flatMap((card) => card.services.map((service) => service.id)))];
  const scope = { limit: 50, page: 1, services: ids };
  const open = ids.length === 0 ? [] : await listIncidents(db, page.accountId, { ...scope, open: true });
  const recent =
    ids.length === 0 ? [] : await listIncidents(db, page.accountId, { ...scope, open: false, resolvedWithinDays: HISTORY_DAYS });
  const maintenances = await openMaintenances(db, page.accountId);
  const linked = await linkedChecks(db, page.accountId, ids);
  const measured = new Set(linked.map((check) => check.serviceId));
  const uptimes = uptimeByService(
    ids,
    measured.size === 0 ? [] : await cachedDailyRuns(db, page.accountId, [...measured], now),
    now,
  );
  const maintained = await servicesInMaintenance(db, page.accountId, linked, maintenances, now);
  const views = new Map<string, ServiceView>();
  for (const card of page.cards) {
    for (const service of card.services) {
      if (views.has(service.id)) continue;
      views.set(service.id, {
        id: service.id,
        name: service.name,
        state: serviceState(service.id, open, maintained.has(service.id)),
        uptime: measured.has(service.id) ? uptimes.get(service.id)! : null,
      });
    }
  }
  return {
    page,
    now,
    cards: page.cards.map((card) => ({ name: card.name, services: card.services.map((service) => views.get(service.id)!) })),
    services: [...views.values()],
    open,
    recent,
    maintenances,
  };
}

/** The incidents a page's feeds carry: of its services, open or not, newest first. */
export async function feedIncidents(db: Queryable, page: StatusPageRecord & { accountId: string }): Promise<IncidentRecord[]> {
  const ids = [...new Set(page.cards.flatMap((card) => card.services.map((service) => service.id)))];
  if (ids.length === 0) return [];
  return listIncidents(db, page.accountId, { limit: FEED_INCIDENTS, page: 1, services: ids });
}

/** The page as a whole, the way the comparable products' summaries put it. */
export function pageIndicator(view: Pick<PageView, 'services'>): { indicator: string; description: string } {
  const worst = Math.max(0, ...view.services.map((service) => SERVICE_STATES[service.state].rank));
  if (worst >= 4) return { indicator: 'critical', description: 'Major service outage' };
  if (worst >= 3) return { indicator: 'major', description: 'Partial system outage' };
  if (worst >= 1) return { indicator: 'minor', description: 'Minor service outage' };
  if (view.services.some((service) => service.state === 'under_maintenance')) {
    return { indicator: 'maintenance', description: 'Service under maintenance' };
  }
  return { indicator: 'none', description: 'All systems operational' };
}
