import type { IncidentRecord } from '../store/incidents.js';
import type { OpenMaintenance } from '../store/maintenance-windows.js';
import type { StatusPageRecord } from '../store/status-pages.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Everything a user typed goes through this before it reaches a page. */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => ESCAPES[char]!);

const SERVICE_STATE: Record<string, { label: string; rank: number }> = {
  MINOR: { label: 'Degraded performance', rank: 1 },
  MEDIUM: { label: 'Degraded performance', rank: 2 },
  MAJOR: { label: 'Partial outage', rank: 3 },
  CRITICAL: { label: 'Major outage', rank: 4 },
};
const OPERATIONAL = { label: 'Operational', rank: 0 };

/** A service is as bad as the worst open incident naming it. */
export function serviceState(serviceId: string, open: readonly IncidentRecord[]): { label: string; rank: number } {
  let worst = OPERATIONAL;
  for (const incident of open) {
    if (!incident.services.some((service) => service.id === serviceId)) continue;
    const state = SERVICE_STATE[incident.severity] ?? OPERATIONAL;
    if (state.rank > worst.rank) worst = state;
  }
  return worst;
}

const STYLE = `
body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}
h1{font-size:1.6rem}h2{font-size:1.15rem;margin-top:2rem}
.card{border:1px solid #d0d7de;border-radius:8px;margin:1rem 0;padding:.5rem 1rem}
.service{display:flex;justify-content:space-between;padding:.4rem 0;border-top:1px solid #eaeef2}
.service:first-of-type{border-top:0}
.state-0{color:#1a7f37}.state-1,.state-2{color:#9a6700}.state-3,.state-4{color:#cf222e}
.banner{padding:.8rem 1rem;border-radius:8px;font-weight:600}
.banner.ok{background:#dafbe1}.banner.bad{background:#ffebe9}
.incident{border-left:4px solid #cf222e;padding:.2rem 1rem;margin:1rem 0}
.incident.resolved{border-color:#1a7f37}
.maintenance{border-left:4px solid #0969da;padding:.2rem 1rem;margin:1rem 0}
.update{margin:.6rem 0}.update time{color:#57606a;font-size:.85rem}
form{display:flex;gap:.5rem}input[type=email]{flex:1;padding:.4rem}
`;

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>${body}</body></html>`;
}

function incidentHtml(incident: IncidentRecord): string {
  const resolved = incident.lastUpdateStatus === 'RESOLVED';
  const updates = [...incident.incidentUpdates]
    .reverse()
    .map(
      (update) => `<div class="update"><strong>${escapeHtml(update.status)}</strong>: ${escapeHtml(update.description)}
<br><time datetime="${escapeHtml(update.publicIncidentUpdateDate)}">${escapeHtml(update.publicIncidentUpdateDate)}</time></div>`,
    )
    .join('\n');
  return `<article class="incident${resolved ? ' resolved' : ''}" data-incident-id="${escapeHtml(incident.id)}">
<h3>${escapeHtml(incident.name)}</h3>
<p>Affects ${incident.services.map((service) => escapeHtml(service.name)).join(', ')} · ${escapeHtml(incident.severity.toLowerCase())}</p>
${updates}
</article>`;
}

function maintenanceHtml(maintenance: OpenMaintenance): string {
  const latest = maintenance.updates.at(-1);
  return `<article class="maintenance" data-maintenance-id="${escapeHtml(maintenance.id)}">
<h3>${escapeHtml(maintenance.windowName)}</h3>
<p><strong>${escapeHtml(maintenance.status)}</strong> · <time datetime="${escapeHtml(maintenance.startsAt)}">${escapeHtml(maintenance.startsAt)}</time>
to <time datetime="${escapeHtml(maintenance.endsAt)}">${escapeHtml(maintenance.endsAt)}</time></p>
${latest ? `<p class="update">${escapeHtml(latest.description)}</p>` : ''}
</article>`;
}

/** The public page: current state of each service, open incidents, maintenance, recent history, and the subscribe form. */
export function renderStatusPage(
  page: StatusPageRecord,
  open: readonly IncidentRecord[],
  recent: readonly IncidentRecord[],
  maintenances: readonly OpenMaintenance[],
  notice?: string,
): string {
  const cards = page.cards
    .map(
      (card) => `<section class="card"><h2>${escapeHtml(card.name)}</h2>
${card.services
  .map((service) => {
    const state = serviceState(service.id, open);
    return `<div class="service" data-service-id="${escapeHtml(service.id)}"><span>${escapeHtml(service.name)}</span><span class="state-${state.rank}">${state.label}</span></div>`;
  })
  .join('\n')}
</section>`,
    )
    .join('\n');
  const banner =
    open.length === 0
      ? '<p class="banner ok" role="status">All systems operational</p>'
      : `<p class="banner bad" role="status">${open.length === 1 ? 'An incident is' : `${open.length} incidents are`} open</p>`;
  return layout(
    page.name,
    `<h1>${escapeHtml(page.name)}</h1>
${notice ? `<p class="banner ok" role="alert">${escapeHtml(notice)}</p>` : ''}
${banner}
${cards}
<h2>Current incidents</h2>
${open.length === 0 ? '<p>No open incidents.</p>' : open.map(incidentHtml).join('\n')}
<h2>Maintenance</h2>
${maintenances.length === 0 ? '<p>No maintenance planned.</p>' : maintenances.map(maintenanceHtml).join('\n')}
<h2>Past incidents</h2>
${recent.length === 0 ? '<p>Nothing resolved in the last 7 days.</p>' : recent.map(incidentHtml).join('\n')}
<h2>Subscribe</h2>
<p>Get an e-mail when an incident is opened or updated.</p>
<form method="post" action="/status/${escapeHtml(page.url)}/subscribe">
<label for="email" hidden>E-mail address</label>
<input id="email" name="email" type="email" required placeholder="you@example.com" autocomplete="email">
<button type="submit">Subscribe</button>
</form>`,
  );
}

/** A short page for the subscription links and errors. */
export function renderMessage(title: string, message: string, back?: { href: string; label: string }): string {
  return layout(
    title,
    `<h1>${escapeHtml(title)}</h1><p role="status">${escapeHtml(message)}</p>${
      back ? `<p><a href="${escapeHtml(back.href)}">${escapeHtml(back.label)}</a></p>` : ''
    }`,
  );
}
