import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { speaksChecklyDialect } from '../auth.js';
import type { ServiceContext } from '../context.js';
import { sendError, sendInvalidBody } from '../http-errors.js';
import { ErrorA, ErrorB, Pagination } from '../schemas/common.js';
import { ChecklyIncidentSchema, checklyIncident, cursorPage, cursorPageSchema } from '../status-pages/checkly-dialect.js';
import { INCIDENT_SEVERITIES, INCIDENT_STATUSES } from '../status-pages/incident-status.js';
import { notifySubscribers } from '../status-pages/notifications.js';
import { unknownServices } from '../status-pages/unknown-services.js';
import {
  addIncidentUpdate,
  createIncident,
  deleteIncident,
  getIncident,
  listIncidents,
  listIncidentsFrom,
  updateIncident,
  type IncidentRecord,
  type IncidentUpdateInput,
} from '../store/incidents.js';

const tags = ['Status pages'];
const Uuid = Type.String({ format: 'uuid' });
const IncidentParams = Type.Object({ incidentId: Uuid });

const ServiceRef = Type.Object({ id: Type.String(), name: Type.String() });
const IncidentUpdateBody = Type.Object({
  description: Type.String({ minLength: 1, maxLength: 10_000 }),
  status: Type.Optional(Type.Enum(INCIDENT_STATUSES)),
  publicIncidentUpdateDate: Type.Optional(Type.String({ format: 'date-time', description: 'Defaults to the time of creation' })),
  notifySubscribers: Type.Optional(Type.Boolean({ default: false })),
});
const IncidentUpdateRecord = Type.Object({
  id: Type.String(),
  description: Type.String(),
  status: Type.Enum(INCIDENT_STATUSES),
  publicIncidentUpdateDate: Type.String(),
  created_at: Type.String(),
  notifySubscribers: Type.Boolean(),
});
const IncidentBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  severity: Type.Optional(Type.Enum(INCIDENT_SEVERITIES, { default: 'MINOR' })),
  services: Type.Array(
    Type.Union([
      Uuid,
      // The public checkly CLI names each service as the status page showed it to it.
      Type.Object({ id: Uuid, name: Type.Optional(Type.String()), accountId: Type.Optional(Type.String()) }),
    ]),
    { minItems: 1, maxItems: 50, uniqueItems: true, description: 'Service ids, or services as {id, …}' },
  ),
  incidentUpdates: Type.Array(IncidentUpdateBody, { minItems: 1, maxItems: 1, description: 'The first update' }),
});
const IncidentChange = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    severity: Type.Optional(Type.Enum(INCIDENT_SEVERITIES)),
  },
  { minProperties: 1 },
);
const IncidentRecordSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  severity: Type.String(),
  services: Type.Array(ServiceRef),
  lastUpdateStatus: Type.String(),
  incidentUpdates: Type.Array(IncidentUpdateRecord),
  created_at: Type.String(),
  updated_at: Type.Union([Type.String(), Type.Null()]),
  resolvedAt: Type.Union([Type.String(), Type.Null()]),
});
const Incident = Type.Union([ChecklyIncidentSchema, IncidentRecordSchema]);
const ListQuery = Type.Object({
  ...Pagination.properties,
  nextId: Type.Optional(Type.String({ format: 'uuid', description: 'Checkly dialect: the incident the page starts at' })),
});

const DIALECT_NOTE = 'A caller that names its account in x-checkly-account gets the incident as the public checkly CLI reads it.';

const updateInput = (body: {
  description: string;
  status?: IncidentUpdateInput['status'];
  publicIncidentUpdateDate?: string;
  notifySubscribers?: boolean;
}): IncidentUpdateInput => ({
  description: body.description,
  status: body.status,
  publicIncidentUpdateDate: body.publicIncidentUpdateDate,
  notifySubscribers: body.notifySubscribers ?? false,
});

/** Status page incidents and their updates. */
export const incidentRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const shown = (request: FastifyRequest, incident: IncidentRecord) =>
      speaksChecklyDialect(request) ? checklyIncident(request.accountId, incident) : incident;

    app.post(
      '/v1/status-pages/incidents',
      {
        schema: {
          tags,
          summary: 'Open an incident',
          description: `With its first update (status INVESTIGATING unless told). ${DIALECT_NOTE}`,
          body: IncidentBody,
          response: { 201: Incident, 400: ErrorB },
        },
      },
      async (request, reply) => {
        const services = request.body.services.map((service) => (typeof service === 'string' ? service : service.id));
        if (new Set(services).size !== services.length) return sendInvalidBody(reply, { services: 'names a service twice' });
        const problems = await unknownServices(ctx.db, request.accountId, { services });
        if (Object.keys(problems).length > 0) return sendInvalidBody(reply, problems);
        const { incident, update } = await createIncident(ctx.db, request.accountId, {
          name: request.body.name,
          severity: request.body.severity ?? 'MINOR',
          services,
          update: updateInput(request.body.incidentUpdates[0]!),
        });
        if (update.notifySubscribers) await notifySubscribers(ctx, request.accountId, incident, update);
        return reply.code(201).send(shown(request, incident));
      },
    );

    app.get(
      '/v1/status-pages/incidents',
      {
        schema: {
          tags,
          summary: 'List incidents',
          description:
            'Newest first. A caller that names its account in x-checkly-account gets a cursor page, {entries, length, nextId}, ' +
            'paged by limit and nextId.',
          querystring: ListQuery,
          response: { 200: Type.Union([cursorPageSchema(ChecklyIncidentSchema), Type.Array(IncidentRecordSchema)]) },
        },
      },
      async (request) => {
        const { limit = 10, page = 1, nextId } = request.query;
        if (!speaksChecklyDialect(request)) return listIncidents(ctx.db, request.accountId, { limit, page });
        const found = await listIncidentsFrom(ctx.db, request.accountId, { limit, fromId: nextId });
        return cursorPage(
          found.incidents.map((incident) => checklyIncident(request.accountId, incident)),
          found.nextId,
        );
      },
    );

    app.get(
      '/v1/status-pages/incidents/:incidentId',
      {
        schema: {
          tags,
          summary: 'Retrieve an incident, with its updates',
          description: DIALECT_NOTE,
          params: IncidentParams,
          response: { 200: Incident, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const incident = await getIncident(ctx.db, request.accountId, request.params.incidentId);
        return incident ? shown(request, incident) : sendError(reply, 404, 'Incident not found');
      },
    );

    app.patch(
      '/v1/status-pages/incidents/:incidentId',
      {
        schema: {
          tags,
          summary: "Change an incident's name or severity",
          description: `Open or resolved; its updates stay as they are. ${DIALECT_NOTE}`,
          params: IncidentParams,
          body: IncidentChange,
          response: { 200: Incident, 400: ErrorB, 404: ErrorB },
        },
      },
      async (request, reply) => {
        const { name, severity } = request.body;
        const updated = await updateIncident(ctx.db, request.accountId, request.params.incidentId, { name, severity });
        return updated ? shown(request, updated) : sendError(reply, 404, 'Incident not found', { incidentId: 'not found' });
      },
    );

    app.delete(
      '/v1/status-pages/incidents/:incidentId',
      {
        schema: {
          tags,
          summary: 'Delete an incident, with its updates',
          params: IncidentParams,
          response: { 204: Type.Null(), 400: ErrorB, 404: ErrorB },
        },
      },
      async (request, reply) => {
        if (!(await deleteIncident(ctx.db, request.accountId, request.params.incidentId))) {
          return sendError(reply, 404, 'Incident not found', { incidentId: 'not found' });
        }
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/v1/status-pages/incidents/:incidentId/incident-updates',
      {
        schema: {
          tags,
          summary: 'Add an incident update',
          description:
            'With no status the incident keeps its own. RESOLVED closes the incident; it takes no more updates. ' +
            'publicIncidentUpdateDate defaults to the time of creation.',
          params: IncidentParams,
          body: IncidentUpdateBody,
          response: { 201: IncidentUpdateRecord, 400: ErrorB, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const outcome = await addIncidentUpdate(ctx.db, request.accountId, request.params.incidentId, updateInput(request.body));
        if ('notFound' in outcome) return sendError(reply, 404, 'Incident not found');
        if ('refused' in outcome) return sendInvalidBody(reply, { status: outcome.refused });
        if (outcome.added.notifySubscribers) await notifySubscribers(ctx, request.accountId, outcome.incident, outcome.added);
        return reply.code(201).send(outcome.added);
      },
    );
  };
