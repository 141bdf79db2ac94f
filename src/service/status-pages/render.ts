import { createHash } from 'node:crypto';
import type { IncidentRecord } from '../store/incidents.js';
import type { OpenMaintenance } from '../store/maintenance-windows.js';
import { NO_BRANDING, themeCss, type Branding } from './branding.js';
import {
  HISTORY_DAYS,
  INCIDENT_STATUS_LABELS,
  MAINTENANCE_STATUS_LABELS,
  SERVICE_STATES,
  SEVERITY_LABELS,
  type PageView,
  type ServiceView,
} from './page-view.js';
import { availabilityBand, formatPercent, UPTIME_DAYS, type Uptime } from './uptime.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Everything a user typed goes through this before it reaches a page. */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => ESCAPES[char]!);

/** Seconds between the page's refreshes of itself. */
export const REFRESH_SECONDS = 60;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "15 Jan 2026, 15:30 UTC": what a visitor without JavaScript reads; the script puts it in their own zone. */
export function formatUtc(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]} ${at.getUTCFullYear()}, ${pad(at.getUTCHours())}:${pad(at.getUTCMinutes())} UTC`;
}

/** "15 Jan 2026", from a YYYY-MM-DD day. */
function formatDay(date: string): string {
  const [year, month, day] = date.split('-').map(Number);
  return `${day} ${MONTHS[(month ?? 1) - 1]} ${year}`;
}

const time = (iso: string) => `<time datetime="${escapeHtml(iso)}">${escapeHtml(formatUtc(iso))}</time>`;

/**
 * The page's only script, the same for every page (so its hash never
 * changes): times in the visitor's own zone and locale, and, every
 * data-refresh-seconds, the page's content fetched again and swapped in
 * place, so the visitor keeps their scroll. It waits while the subscribe
 * field is being filled in, and while the tab is hidden.
 */
export const PAGE_SCRIPT = `(function () {
  'use strict';
  var format;
  try {
    format = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZoneName: 'short' });
  } catch (e) { format = null; }
  function localTimes(root) {
    if (!format) return;
    var times = root.querySelectorAll('time[datetime]');
    for (var i = 0; i < times.length; i += 1) {
      var at = new Date(times[i].getAttribute('datetime'));
      if (isNaN(at.getTime())) continue;
      if (!times[i].title) times[i].title = times[i].textContent;
      times[i].textContent = format.format(at);
    }
  }
  localTimes(document);
  var content = document.getElementById('content');
  var source = content && content.getAttribute('data-refresh-url');
  var every = content ? Number(content.getAttribute('data-refresh-seconds')) * 1000 : 0;
  if (!source || !(every > 0) || !window.fetch || !window.DOMParser) return;
  setInterval(function () {
    if (document.hidden) return;
    var email = document.getElementById('email');
    if (email && (email.value || document.activeElement === email)) return;
    fetch(source, { headers: { accept: 'text/html' }, cache: 'no-store', credentials: 'omit' })
      .then(function (response) { if (!response.ok) throw new Error('HTTP ' + response.status); return response.text(); })
      .then(function (text) {
        // Only the content is parsed: the rest (its style, under another nonce) is not this page's to apply.
        var start = text.indexOf('<div id="content"');
        var end = text.indexOf('<!-- /content -->');
        if (start < 0 || end < start) return;
        var next = new DOMParser().parseFromString(text.slice(start, end), 'text/html').getElementById('content');
        if (!next) return;
        localTimes(next);
        content.replaceWith(next);
        content = next;
      })
      .catch(function () { /* the next round tries again */ });
  }, every);
})();`;

/** For the Content-Security-Policy: the one inline script allowed. */
export const PAGE_SCRIPT_HASH = `sha256-${createHash('sha256').update(PAGE_SCRIPT).digest('base64')}`;

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;line-height:1.45;background:var(--body-bg);color:var(--body-fg);-webkit-text-size-adjust:100%}
a{color:var(--link)}
.wrap{max-width:52rem;margin:0 auto;padding:0 1rem}
header.top{background:var(--header-bg);color:var(--header-fg);border-bottom:1px solid var(--border)}
header.top .wrap{display:flex;align-items:center;gap:.9rem;padding-top:1rem;padding-bottom:1rem;flex-wrap:wrap}
header.top a{color:inherit;display:inline-flex}
.logo{max-height:2.5rem;max-width:12rem;width:auto;height:auto;display:block}
h1{font-size:1.5rem;margin:0;overflow-wrap:anywhere}
h2{font-size:1.1rem;margin:2rem 0 .6rem}
h3{font-size:1rem;margin:.3rem 0}
main{padding-bottom:2rem}
main>h1{margin:1.5rem 0 .5rem}
.muted,.update time,.legend{color:var(--body-muted)}
.card{background:var(--card-bg);border:1px solid var(--border);border-radius:8px;margin:1rem 0;padding:.25rem 1rem}
.card h2{margin:.6rem 0;font-size:1.05rem}
.service{padding:.65rem 0;border-top:1px solid var(--border)}
.service-head{display:flex;justify-content:space-between;gap:1rem;align-items:baseline}
.service-head .name{font-weight:600;overflow-wrap:anywhere}
.state{white-space:nowrap;font-weight:600}
.state-operational{color:#1a7f37}.state-degraded_performance{color:#9a6700}.state-partial_outage{color:#bc4c00}
.state-major_outage{color:#cf222e}.state-under_maintenance{color:#0969da}
.banner{padding:.8rem 1rem;border-radius:8px;font-weight:600;margin:1.2rem 0;border:1px solid var(--border)}
.banner.ok{background:#1f883d;color:#fff}.banner.bad{background:#cf222e;color:#fff}.banner.maintenance{background:#0969da;color:#fff}
.banner.notice{background:var(--card-bg);color:var(--body-fg)}
.incident,.maintenance{background:var(--card-bg);border:1px solid var(--border);border-left:4px solid #cf222e;border-radius:6px;padding:.4rem 1rem;margin:1rem 0}
.incident.resolved{border-left-color:#1f883d}.maintenance{border-left-color:#0969da}
.incident p,.maintenance p{margin:.3rem 0}
.update{margin:.6rem 0;overflow-wrap:anywhere}.update time{font-size:.85rem}
.uptime{margin-top:.5rem}
.bar{display:flex;gap:2px;height:2rem;align-items:stretch}
.day{flex:1 1 0;min-width:0;border-radius:2px;background:#8c959f}
.b-0{background:#2da44e}.b-1{background:#7cb342}.b-2{background:#d4a72c}.b-3{background:#e16f24}.b-4{background:#cf222e}
.b-none{background:var(--border)}
.day:hover{opacity:.7}
.legend{display:flex;justify-content:space-between;gap:.5rem;font-size:.8rem;margin-top:.25rem}
.legend .short{display:none}
.unmeasured{font-size:.85rem;margin:.3rem 0 0}
form{display:flex;gap:.5rem;flex-wrap:wrap}
input[type=email]{flex:1 1 14rem;min-width:0;padding:.5rem;font:inherit;border:1px solid var(--border);border-radius:6px;background:var(--card-bg);color:var(--body-fg)}
button{padding:.5rem 1rem;font:inherit;font-weight:600;border:0;border-radius:6px;background:var(--button-bg);color:var(--button-fg);cursor:pointer}
footer{margin-top:2.5rem;font-size:.85rem;display:flex;flex-wrap:wrap;gap:.4rem 1rem}
@media (max-width:600px){
  h1{font-size:1.25rem}
  .wrap{padding:0 .75rem}
  .bar{height:1.75rem}
  .bar .day:nth-child(-n+${UPTIME_DAYS - 30}){display:none}
  .legend .long{display:none}.legend .short{display:inline}
  .service-head{flex-wrap:wrap;gap:.1rem .75rem}
}
`;

export interface LayoutOptions {
  /** Nonce of the page's one inline style (its colours are the page's own). */
  nonce: string;
  branding?: Branding;
  /** Extra markup for <head>: feed links, the no-script refresh. */
  head?: string;
  header?: string;
  script?: boolean;
}

function layout(title: string, body: string, options: LayoutOptions): string {
  const branding = options.branding ?? NO_BRANDING;
  const favicon = branding.favicon ? `<link rel="icon" href="${escapeHtml(branding.favicon)}">` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>${favicon}${options.head ?? ''}
<style nonce="${escapeHtml(options.nonce)}">${themeCss(branding)}${STYLE}</style></head>
<body>${options.header ?? ''}<main class="wrap">${body}</main>${options.script ? `<script>${PAGE_SCRIPT}</script>` : ''}</body></html>`;
}

function headerHtml(name: string, branding: Branding): string {
  let logo = '';
  if (branding.logo) {
    const image = `<img class="logo" src="${escapeHtml(branding.logo)}" alt="${escapeHtml(name)} logo" referrerpolicy="no-referrer">`;
    logo = branding.redirectTo ? `<a href="${escapeHtml(branding.redirectTo)}" rel="noopener noreferrer">${image}</a>` : image;
  }
  return `<header class="top"><div class="wrap">${logo}<h1>${escapeHtml(name)}</h1></div></header>`;
}

function incidentHtml(incident: IncidentRecord): string {
  const resolved = incident.lastUpdateStatus === 'RESOLVED';
  const updates = [...incident.incidentUpdates]
    .reverse()
    .map(
      (update) => `<div class="update"><strong>${escapeHtml(INCIDENT_STATUS_LABELS[update.status] ?? update.status)}</strong>: ${escapeHtml(update.description)}
<br>${time(update.publicIncidentUpdateDate)}</div>`,
    )
    .join('\n');
  return `<article class="incident${resolved ? ' resolved' : ''}" id="incident-${escapeHtml(incident.id)}" data-incident-id="${escapeHtml(incident.id)}">
<h3>${escapeHtml(incident.name)}</h3>
<p class="muted">Affects ${incident.services.map((service) => escapeHtml(service.name)).join(', ')} · ${escapeHtml(SEVERITY_LABELS[incident.severity] ?? incident.severity)} impact</p>
${updates}
</article>`;
}

function maintenanceHtml(maintenance: OpenMaintenance): string {
  const latest = maintenance.updates.at(-1);
  return `<article class="maintenance" data-maintenance-id="${escapeHtml(maintenance.id)}">
<h3>${escapeHtml(maintenance.windowName)}</h3>
<p><strong>${escapeHtml(MAINTENANCE_STATUS_LABELS[maintenance.status] ?? maintenance.status)}</strong> · ${time(maintenance.startsAt)}
to ${time(maintenance.endsAt)}</p>
${latest ? `<p class="update">${escapeHtml(latest.description)}</p>` : ''}
</article>`;
}

function dayTitle(day: Uptime['days'][number]): string {
  if (day.availability === null) return `${formatDay(day.date)}: no data`;
  return `${formatDay(day.date)}: ${formatPercent(day.availability)} % of ${day.runs} ${day.runs === 1 ? 'run' : 'runs'} passed`;
}

/** What a screen reader says for the bar: the period's uptime and every day that fell short. */
function uptimeLabel(uptime: Uptime): string {
  const short = uptime.days.filter((day) => day.availability !== null && day.availability < 100);
  const empty = uptime.days.filter((day) => day.availability === null).length;
  const parts = [
    uptime.availability === null
      ? `No results in the last ${UPTIME_DAYS} days.`
      : `Uptime over the last ${UPTIME_DAYS} days: ${formatPercent(uptime.availability)} %.`,
  ];
  if (short.length > 0) {
    const named = short.slice(-10).map((day) => `${formatDay(day.date)} ${formatPercent(day.availability!)} %`);
    parts.push(`Days below 100 %: ${named.join(', ')}${short.length > named.length ? ` and ${short.length - named.length} more` : ''}.`);
  } else if (uptime.availability !== null) {
    parts.push('No day below 100 %.');
  }
  if (empty > 0 && uptime.availability !== null) parts.push(`${empty} ${empty === 1 ? 'day' : 'days'} without data.`);
  return parts.join(' ');
}

function uptimeHtml(uptime: Uptime): string {
  const days = uptime.days
    .map((day) => {
      const band = availabilityBand(day.availability);
      const value = day.availability === null ? '' : ` data-availability="${formatPercent(day.availability)}"`;
      return `<span class="day b-${band}" data-date="${day.date}"${value} title="${escapeHtml(dayTitle(day))}"></span>`;
    })
    .join('');
  const total = uptime.availability === null ? 'No data yet' : `${formatPercent(uptime.availability)} % uptime`;
  return `<div class="uptime" data-uptime="${uptime.availability === null ? '' : formatPercent(uptime.availability)}">
<div class="bar" role="img" aria-label="${escapeHtml(uptimeLabel(uptime))}">${days}</div>
<div class="legend" aria-hidden="true"><span><span class="long">${UPTIME_DAYS} days ago</span><span class="short">30 days ago</span></span><span class="total">${total}</span><span>Today</span></div>
</div>`;
}

function serviceHtml(service: ServiceView): string {
  const state = SERVICE_STATES[service.state];
  return `<div class="service" data-service-id="${escapeHtml(service.id)}" data-status="${service.state}">
<div class="service-head"><span class="name">${escapeHtml(service.name)}</span><span class="state state-${service.state}">${state.label}</span></div>
${service.uptime ? uptimeHtml(service.uptime) : ''}
</div>`;
}

function bannerHtml(view: PageView): string {
  const { open, services } = view;
  if (open.length > 0) {
    return `<p class="banner bad" role="status">${open.length === 1 ? 'An incident is' : `${open.length} incidents are`} open</p>`;
  }
  if (services.some((service) => service.state === 'under_maintenance')) {
    return '<p class="banner maintenance" role="status">Maintenance in progress</p>';
  }
  return '<p class="banner ok" role="status">All systems operational</p>';
}

/** The page's own address and its feeds', relative to the site. */
export const pagePaths = (url: string) => ({
  page: `/status/${url}`,
  atom: `/status/${url}/history.atom`,
  rss: `/status/${url}/history.rss`,
  summary: `/status/${url}/summary.json`,
});

export interface RenderOptions {
  nonce: string;
  /** A message about what the visitor just did, shown above the content. */
  notice?: string;
  /** Whether this answer is the page's own address (not a form's), so refreshing it is safe. */
  refresh?: boolean;
}

/** The public page: each service's state and uptime, open incidents, maintenance, recent history, the subscribe form. */
export function renderStatusPage(view: PageView, options: RenderOptions): string {
  const { page } = view;
  const paths = pagePaths(page.url);
  const cards = view.cards
    .map(
      (card) => `<section class="card"><h2>${escapeHtml(card.name)}</h2>
${card.services.map(serviceHtml).join('\n')}
</section>`,
    )
    .join('\n');
  const refresh = options.refresh ?? false;
  const head = `
<link rel="alternate" type="application/atom+xml" title="${escapeHtml(page.name)}: incidents (Atom)" href="${escapeHtml(paths.atom)}">
<link rel="alternate" type="application/rss+xml" title="${escapeHtml(page.name)}: incidents (RSS)" href="${escapeHtml(paths.rss)}">
<link rel="alternate" type="application/json" title="${escapeHtml(page.name)}: summary" href="${escapeHtml(paths.summary)}">${
    refresh ? `\n<noscript><meta http-equiv="refresh" content="${REFRESH_SECONDS}"></noscript>` : ''
  }`;
  const refreshAttributes = refresh ? ` data-refresh-url="${escapeHtml(paths.page)}" data-refresh-seconds="${REFRESH_SECONDS}"` : '';
  return layout(
    page.name,
    `${options.notice ? `<p class="banner notice" role="alert">${escapeHtml(options.notice)}</p>` : ''}
<div id="content"${refreshAttributes}>
${bannerHtml(view)}
${cards}
<h2>Current incidents</h2>
${view.open.length === 0 ? '<p>No open incidents.</p>' : view.open.map(incidentHtml).join('\n')}
<h2>Maintenance</h2>
${view.maintenances.length === 0 ? '<p>No maintenance planned.</p>' : view.maintenances.map(maintenanceHtml).join('\n')}
<h2>Past incidents</h2>
${view.recent.length === 0 ? `<p>Nothing resolved in the last ${HISTORY_DAYS} days.</p>` : view.recent.map(incidentHtml).join('\n')}
<p class="muted updated">Updated ${time(view.now.toISOString())}${refresh ? ` · refreshes every ${REFRESH_SECONDS} s` : ''}</p>
</div><!-- /content -->
<h2>Subscribe</h2>
<p>Get an e-mail when an incident is opened or updated.</p>
<form method="post" action="${escapeHtml(paths.page)}/subscribe">
<label for="email" hidden>E-mail address</label>
<input id="email" name="email" type="email" required placeholder="you@example.com" autocomplete="email">
<button type="submit">Subscribe</button>
</form>
<footer class="muted"><a href="${escapeHtml(paths.atom)}">Atom feed</a><a href="${escapeHtml(paths.rss)}">RSS feed</a><a href="${escapeHtml(paths.summary)}">JSON summary</a></footer>`,
    { nonce: options.nonce, branding: page, head, header: headerHtml(page.name, page), script: true },
  );
}

/** A short page for the subscription links and errors. */
export function renderMessage(
  title: string,
  message: string,
  options: { nonce: string; back?: { href: string; label: string }; branding?: Branding },
): string {
  const { back } = options;
  return layout(
    title,
    `<h1>${escapeHtml(title)}</h1><p role="status">${escapeHtml(message)}</p>${
      back ? `<p><a href="${escapeHtml(back.href)}">${escapeHtml(back.label)}</a></p>` : ''
    }`,
    { nonce: options.nonce, branding: options.branding },
  );
}
