import type { IncidentRecord } from '../store/incidents.js';
import type { StatusPageRecord } from '../store/status-pages.js';
import {
  INCIDENT_STATUS_LABELS,
  pageIndicator,
  SERVICE_STATES,
  SEVERITY_LABELS,
  type PageView,
} from './page-view.js';
import { escapeHtml, formatUtc, pagePaths } from './render.js';
import { UPTIME_DAYS } from './uptime.js';

/** Characters XML 1.0 cannot carry at all, escaped or not: dropped from user text. */
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
/** Text for an XML element or attribute. */
export const escapeXml = (text: string) => text.replace(NOT_XML, '').replace(/[&<>"']/g, (char) => XML_ESCAPES[char]!);

const latest = (dates: readonly string[]) => dates.reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a));

/** When an incident last changed: its newest update (by when it was written), or its opening. */
function changedAt(incident: IncidentRecord): string {
  return latest([incident.created_at, ...incident.incidentUpdates.map((update) => update.created_at)]);
}

/** The incident as the entry's HTML: its updates newest first, each with its status and (public) date. */
function incidentContent(incident: IncidentRecord): string {
  const updates = [...incident.incidentUpdates].reverse().map(
    (update) =>
      `<p><small>${escapeHtml(formatUtc(update.publicIncidentUpdateDate))}</small><br><strong>${escapeHtml(
        INCIDENT_STATUS_LABELS[update.status] ?? update.status,
      )}</strong> - ${escapeHtml(update.description)}</p>`,
  );
  const affects = `<p>Affects: ${incident.services.map((service) => escapeHtml(service.name)).join(', ')} · ${escapeHtml(
    SEVERITY_LABELS[incident.severity] ?? incident.severity,
  )} impact</p>`;
  return [...updates, affects].join('');
}

interface FeedInput {
  baseUrl: string;
  page: StatusPageRecord;
  incidents: readonly IncidentRecord[];
}

const feedTitle = (page: StatusPageRecord) => `${page.name}: incident history`;
const feedUpdated = ({ page, incidents }: FeedInput) =>
  incidents.length > 0 ? latest(incidents.map(changedAt)) : (page.updated_at ?? page.created_at);

/** An Atom 1.0 feed (RFC 4287) of the page's incidents, one entry each, newest first. */
export function atomFeed(input: FeedInput): string {
  const { baseUrl, page, incidents } = input;
  const paths = pagePaths(page.url);
  const pageUrl = `${baseUrl}${paths.page}`;
  const entries = incidents.map(
    (incident) => `<entry>
<id>urn:uuid:${escapeXml(incident.id)}</id>
<title>${escapeXml(incident.name)}</title>
<link rel="alternate" type="text/html" href="${escapeXml(`${pageUrl}#incident-${incident.id}`)}"/>
<published>${escapeXml(incident.created_at)}</published>
<updated>${escapeXml(changedAt(incident))}</updated>
<category term="${escapeXml(incident.lastUpdateStatus)}" label="${escapeXml(INCIDENT_STATUS_LABELS[incident.lastUpdateStatus] ?? incident.lastUpdateStatus)}"/>
<content type="html">${escapeXml(incidentContent(incident))}</content>
</entry>`,
  );
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="en">
<id>${escapeXml(pageUrl)}</id>
<title>${escapeXml(feedTitle(page))}</title>
<link rel="alternate" type="text/html" href="${escapeXml(pageUrl)}"/>
<link rel="self" type="application/atom+xml" href="${escapeXml(`${baseUrl}${paths.atom}`)}"/>
<updated>${escapeXml(feedUpdated(input))}</updated>
<author><name>${escapeXml(page.name)}</name></author>
${page.favicon ? `<icon>${escapeXml(page.favicon)}</icon>\n` : ''}${page.logo ? `<logo>${escapeXml(page.logo)}</logo>\n` : ''}${entries.join('\n')}
</feed>
`;
}

const rfc822 = (iso: string) => new Date(iso).toUTCString();

/** An RSS 2.0 feed of the page's incidents, one item each, newest first. */
export function rssFeed(input: FeedInput): string {
  const { baseUrl, page, incidents } = input;
  const paths = pagePaths(page.url);
  const pageUrl = `${baseUrl}${paths.page}`;
  const items = incidents.map(
    (incident) => `<item>
<title>${escapeXml(incident.name)}</title>
<link>${escapeXml(`${pageUrl}#incident-${incident.id}`)}</link>
<guid isPermaLink="false">urn:uuid:${escapeXml(incident.id)}</guid>
<pubDate>${rfc822(incident.created_at)}</pubDate>
<category>${escapeXml(INCIDENT_STATUS_LABELS[incident.lastUpdateStatus] ?? incident.lastUpdateStatus)}</category>
<description>${escapeXml(incidentContent(incident))}</description>
</item>`,
  );
  return `<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
<channel>
<title>${escapeXml(feedTitle(page))}</title>
<link>${escapeXml(pageUrl)}</link>
<description>${escapeXml(`Incidents on the ${page.name} status page`)}</description>
<language>en</language>
<lastBuildDate>${rfc822(feedUpdated(input))}</lastBuildDate>
<atom:link href="${escapeXml(`${baseUrl}${paths.rss}`)}" rel="self" type="application/rss+xml"/>
${items.join('\n')}
</channel>
</rss>
`;
}

const lower = (value: string) => value.toLowerCase();
const IMPACT: Record<string, string> = { MINOR: 'minor', MEDIUM: 'minor', MAJOR: 'major', CRITICAL: 'critical' };

/**
 * The page as JSON, in the shape of the comparable product's
 * `/api/v2/summary.json` (snake_case, lower-case statuses), so tools built
 * for it read it: the page, its overall status, its components (each card a
 * group of its services, each service once), the open incidents and the
 * open maintenance. Each service also carries its uptime over the bar's days.
 */
export function summaryJson(baseUrl: string, view: PageView) {
  const { page } = view;
  const pageUrl = `${baseUrl}${pagePaths(page.url).page}`;
  const updated = [page.updated_at ?? page.created_at, ...view.open.map(changedAt), ...view.maintenances.map((m) => m.created_at)];
  const placed = new Set<string>();
  const components: Record<string, unknown>[] = [];
  view.cards.forEach((card, index) => {
    const groupId = `card-${index + 1}`;
    const members = card.services.filter((service) => !placed.has(service.id));
    const worst = card.services.reduce<keyof typeof SERVICE_STATES>(
      (state, service) => (SERVICE_STATES[service.state].rank > SERVICE_STATES[state].rank ? service.state : state),
      card.services.some((service) => service.state === 'under_maintenance') ? 'under_maintenance' : 'operational',
    );
    components.push({ id: groupId, name: card.name, status: worst, position: components.length + 1, group: true, group_id: null, components: members.map((s) => s.id) });
    for (const service of members) {
      placed.add(service.id);
      components.push({
        id: service.id,
        name: service.name,
        status: service.state,
        position: components.length + 1,
        group: false,
        group_id: groupId,
        uptime: service.uptime && {
          days: UPTIME_DAYS,
          percent: service.uptime.availability === null ? null : Math.floor(service.uptime.availability * 100) / 100,
        },
      });
    }
  });
  return {
    page: {
      id: page.id,
      name: page.name,
      url: pageUrl,
      time_zone: 'Etc/UTC',
      updated_at: latest(updated),
    },
    status: pageIndicator(view),
    components,
    incidents: view.open.map((incident) => ({
      id: incident.id,
      name: incident.name,
      status: lower(incident.lastUpdateStatus),
      impact: IMPACT[incident.severity] ?? 'minor',
      severity: incident.severity,
      created_at: incident.created_at,
      updated_at: changedAt(incident),
      resolved_at: incident.resolvedAt,
      shortlink: `${pageUrl}#incident-${incident.id}`,
      components: incident.services.map((service) => ({ id: service.id, name: service.name })),
      incident_updates: [...incident.incidentUpdates].reverse().map((update) => ({
        id: update.id,
        status: lower(update.status),
        body: update.description,
        created_at: update.created_at,
        display_at: update.publicIncidentUpdateDate,
      })),
    })),
    scheduled_maintenances: view.maintenances.map((maintenance) => ({
      id: maintenance.id,
      name: maintenance.windowName,
      status: lower(maintenance.status),
      created_at: maintenance.created_at,
      scheduled_for: maintenance.startsAt,
      scheduled_until: maintenance.endsAt,
      incident_updates: [...maintenance.updates].reverse().map((update) => ({
        id: update.id,
        status: lower(update.status),
        body: update.description,
        created_at: update.created_at,
      })),
    })),
  };
}
