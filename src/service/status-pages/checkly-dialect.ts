import Type, { type TSchema } from 'typebox';
import type { IncidentRecord } from '../store/incidents.js';
import type { StatusPageRecord } from '../store/status-pages.js';
import { INCIDENT_SEVERITIES, INCIDENT_STATUSES } from './incident-status.js';

/**
 * Status pages and incidents as the public `checkly` CLI reads them
 * (`checkly status-pages …`, `checkly incidents …`): services carry their
 * account, lists come as cursor pages, and an incident's updates come newest
 * first.
 */

const DIALECT = 'Answered to a caller that names its account in x-checkly-account (the public checkly CLI)';

const Service = Type.Object({ id: Type.String(), name: Type.String(), accountId: Type.String() });

export const ChecklyStatusPageSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    url: Type.String({ description: 'The public address is /status/{url}' }),
    customDomain: Type.Null({ description: 'Outpost serves pages under its own address only' }),
    isPrivate: Type.Boolean({ description: 'Always false: every page is public' }),
    defaultTheme: Type.String(),
    cards: Type.Array(
      Type.Object({
        id: Type.Null({ description: 'Outpost cards have no ids: a card is its place on the page' }),
        name: Type.String(),
        services: Type.Array(Service),
      }),
    ),
    logo: Type.Union([Type.String(), Type.Null()]),
    redirectTo: Type.Union([Type.String(), Type.Null()]),
    favicon: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String(),
    updated_at: Type.Union([Type.String(), Type.Null()]),
  },
  { description: DIALECT },
);
export type ChecklyStatusPage = Type.Static<typeof ChecklyStatusPageSchema>;

export function checklyStatusPage(accountId: string, page: StatusPageRecord): ChecklyStatusPage {
  return {
    id: page.id,
    name: page.name,
    url: page.url,
    customDomain: null,
    isPrivate: false,
    defaultTheme: page.defaultTheme,
    cards: page.cards.map((card) => ({
      id: null,
      name: card.name,
      services: card.services.map((service) => ({ ...service, accountId })),
    })),
    logo: page.logo,
    redirectTo: page.redirectTo,
    favicon: page.favicon,
    created_at: page.created_at,
    updated_at: page.updated_at,
  };
}

const IncidentUpdate = Type.Object({
  id: Type.String(),
  description: Type.String(),
  status: Type.Enum(INCIDENT_STATUSES),
  publicIncidentUpdateDate: Type.String(),
  created_at: Type.String(),
  notifySubscribers: Type.Boolean(),
});

export const ChecklyIncidentSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    severity: Type.Enum(INCIDENT_SEVERITIES),
    lastUpdateStatus: Type.Enum(INCIDENT_STATUSES),
    services: Type.Array(Service),
    incidentUpdates: Type.Array(IncidentUpdate, { description: 'Newest first' }),
    created_at: Type.String(),
    updated_at: Type.Union([Type.String(), Type.Null()]),
    resolvedAt: Type.Union([Type.String(), Type.Null()]),
  },
  { description: DIALECT },
);
export type ChecklyIncident = Type.Static<typeof ChecklyIncidentSchema>;

export function checklyIncident(accountId: string, incident: IncidentRecord): ChecklyIncident {
  return {
    ...incident,
    services: incident.services.map((service) => ({ ...service, accountId })),
    incidentUpdates: [...incident.incidentUpdates].reverse(),
  };
}

/** A cursor page: `nextId` is where the next page starts, null on the last. */
export const cursorPageSchema = (entry: TSchema) =>
  Type.Object(
    {
      entries: Type.Array(entry),
      length: Type.Integer({ description: 'Entries on this page' }),
      nextId: Type.Union([Type.String(), Type.Null()], { description: 'Pass as nextId for the next page; null on the last' }),
    },
    { description: DIALECT },
  );

export function cursorPage<T>(entries: T[], nextId: string | null): { entries: T[]; length: number; nextId: string | null } {
  return { entries, length: entries.length, nextId };
}
