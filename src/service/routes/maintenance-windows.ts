import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { updateSchemaFor } from '../check-types/common.js';
import type { ServiceContext } from '../context.js';
import { collapse, sendError, sendInvalidBody } from '../http-errors.js';
import { INITIAL_STATUSES, MAINTENANCE_STATUSES } from '../maintenance/status.js';
import { ErrorA, ErrorB, Pagination } from '../schemas/common.js';
import { notifyMaintenance } from '../status-pages/notifications.js';
import {
  addUpdate,
  createMaintenance,
  createWindow,
  deleteWindow,
  editUpdate,
  getMaintenance,
  getWindow,
  listMaintenances,
  listWindows,
  updateWindow,
  type WindowInput,
} from '../store/maintenance-windows.js';
import { compileBodyValidator } from '../validation.js';

const tags = ['Maintenance windows'];
const MAX_DESCRIPTION = 2000;
const DateTime = Type.String({ format: 'date-time' });
const Status = Type.Enum(MAINTENANCE_STATUSES);

export const WindowCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  tags: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
    minItems: 1,
    maxItems: 50,
    description: 'Checks with any of these tags are in the window',
  }),
  startsAt: DateTime,
  endsAt: DateTime,
  repeatUnit: Type.Optional(Type.Union([Type.Enum(['DAY', 'WEEK', 'MONTH']), Type.Null()], { default: null })),
  repeatInterval: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 366 }), Type.Null()], { default: null })),
  repeatEndsAt: Type.Optional(Type.Union([DateTime, Type.Null()], { default: null })),
});
const WindowUpdate = updateSchemaFor(WindowCreate);
const validateWindow = compileBodyValidator(WindowCreate);

const WindowRecord = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  tags: Type.Array(Type.String()),
  startsAt: DateTime,
  endsAt: DateTime,
  repeatUnit: Type.Union([Type.String(), Type.Null()]),
  repeatInterval: Type.Union([Type.Integer(), Type.Null()]),
  repeatEndsAt: Type.Union([DateTime, Type.Null()]),
  created_at: DateTime,
  updated_at: Type.Union([DateTime, Type.Null()]),
}, { title: 'MaintenanceWindow' });

const UpdateRecord = Type.Object({
  id: Type.String(),
  maintenanceWindowId: Type.Number(),
  maintenanceId: Type.String(),
  status: Type.String(),
  description: Type.String(),
  notifySubscribers: Type.Boolean(),
  created_at: DateTime,
  previousStatus: Type.Union([Type.String(), Type.Null()]),
  previousStartsAt: Type.Union([Type.String(), Type.Null()]),
  previousEndsAt: Type.Union([Type.String(), Type.Null()]),
  dateAdjustments: Type.Union([Type.Object({ startsAt: Type.String(), endsAt: Type.String() }), Type.Null()]),
});

const MaintenanceRecord = Type.Object({
  id: Type.String(),
  maintenanceWindowId: Type.Number(),
  status: Type.String(),
  startsAt: DateTime,
  endsAt: DateTime,
  created_at: DateTime,
  updates: Type.Array(UpdateRecord),
}, { title: 'Maintenance' });

const MaintenanceCreate = Type.Object({
  description: Type.String({ minLength: 1, maxLength: MAX_DESCRIPTION }),
  status: Type.Optional(Type.Enum(INITIAL_STATUSES, { default: 'SCHEDULED' })),
  startsAt: Type.Optional(DateTime),
  endsAt: Type.Optional(DateTime),
  notifySubscribers: Type.Optional(Type.Boolean({ default: false })),
});
const UpdateCreate = Type.Object({
  description: Type.String({ minLength: 1, maxLength: MAX_DESCRIPTION }),
  status: Type.Optional(Status),
  startsAt: Type.Optional(DateTime),
  endsAt: Type.Optional(DateTime),
  notifySubscribers: Type.Optional(Type.Boolean({ default: false })),
});
const UpdateEdit = Type.Object({
  description: Type.String({ minLength: 1, maxLength: MAX_DESCRIPTION }),
  status: Type.Optional(Status),
});

const WindowId = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
const MaintenancePath = Type.Object({ ...WindowId.properties, maintenanceId: Type.String({ format: 'uuid' }) });
const UpdatePath = Type.Object({ ...MaintenancePath.properties, updateId: Type.String({ format: 'uuid' }) });

/** Rules across a window's fields, by field. */
export function windowProblems(window: WindowInput): Record<string, string> {
  const problems: Record<string, string> = {};
  const startsAt = Date.parse(window.startsAt);
  if (Date.parse(window.endsAt) <= startsAt) problems.endsAt = 'must be after startsAt';
  if ((window.repeatUnit === null) !== (window.repeatInterval === null)) {
    problems[window.repeatUnit === null ? 'repeatUnit' : 'repeatInterval'] = 'repeatUnit and repeatInterval go together';
  }
  if (window.repeatEndsAt !== null) {
    if (window.repeatUnit === null) problems.repeatEndsAt = 'needs repeatUnit and repeatInterval';
    else if (Date.parse(window.repeatEndsAt) <= startsAt) problems.repeatEndsAt = 'must be after startsAt';
  }
  return problems;
}


export const maintenanceWindowRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.post(
      '/v1/maintenance-windows',
      {
        schema: { tags, summary: 'Create a maintenance window', body: WindowCreate, response: { 201: WindowRecord, 400: ErrorB } },
      },
      async (request, reply) => {
        const window = request.body as WindowInput;
        const problems = windowProblems(window);
        if (Object.keys(problems).length > 0) return sendInvalidBody(reply, problems);
        return reply.code(201).send(await createWindow(ctx.db, request.accountId, window));
      },
    );

    app.get(
      '/v1/maintenance-windows',
      {
        schema: { tags, summary: 'List maintenance windows', querystring: Pagination, response: { 200: Type.Array(WindowRecord) } },
      },
      async (request) =>
        listWindows(ctx.db, request.accountId, { limit: request.query.limit ?? 10, page: request.query.page ?? 1 }),
    );

    app.get(
      '/v1/maintenance-windows/:id',
      { schema: { tags, summary: 'Retrieve a maintenance window', params: WindowId, response: { 200: WindowRecord, 404: ErrorA } } },
      async (request, reply) =>
        (await getWindow(ctx.db, request.accountId, request.params.id)) ??
        sendError(reply, 404, 'Maintenance window not found'),
    );

    app.put(
      '/v1/maintenance-windows/:id',
      {
        schema: {
          tags,
          summary: 'Update a maintenance window',
          description: 'Fields left out keep their stored value.',
          params: WindowId,
          body: WindowUpdate,
          response: { 200: WindowRecord, 400: ErrorB, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const stored = await getWindow(ctx.db, request.accountId, request.params.id);
        if (!stored) return sendError(reply, 404, 'Maintenance window not found');
        const { id: _id, created_at: _created, updated_at: _updated, ...fields } = stored;
        const merged = { ...fields, ...request.body };
        if (!validateWindow(merged)) {
          const attributes = collapse(validateWindow.errors ?? []);
          return sendInvalidBody(reply, attributes);
        }
        const problems = windowProblems(merged);
        if (Object.keys(problems).length > 0) return sendInvalidBody(reply, problems);
        return (
          (await updateWindow(ctx.db, request.accountId, stored.id, merged)) ??
          sendError(reply, 404, 'Maintenance window not found')
        );
      },
    );

    app.delete(
      '/v1/maintenance-windows/:id',
      {
        schema: {
          tags,
          summary: 'Delete a maintenance window, with its maintenances and their updates',
          params: WindowId,
          response: { 204: Type.Null(), 400: ErrorB, 404: ErrorB },
        },
      },
      async (request, reply) => {
        if (!(await deleteWindow(ctx.db, request.accountId, request.params.id))) {
          return sendError(reply, 404, 'Maintenance window not found', { id: 'not found' });
        }
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/v1/maintenance-windows/:id/maintenances',
      {
        schema: {
          tags,
          summary: 'Open a maintenance in a window',
          description: 'With its first status update (SCHEDULED unless IN_PROGRESS is sent); dates default to the window\'s.',
          params: WindowId,
          body: MaintenanceCreate,
          response: { 201: MaintenanceRecord, 400: ErrorB, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const window = await getWindow(ctx.db, request.accountId, request.params.id);
        if (!window) return sendError(reply, 404, 'Maintenance window not found');
        const startsAt = request.body.startsAt ?? window.startsAt;
        const endsAt = request.body.endsAt ?? window.endsAt;
        if (Date.parse(endsAt) <= Date.parse(startsAt)) {
          return sendInvalidBody(reply, { endsAt: 'must be after startsAt' });
        }
        const maintenance = await createMaintenance(ctx.db, window.id, {
          status: request.body.status ?? 'SCHEDULED',
          startsAt,
          endsAt,
          description: request.body.description,
          notifySubscribers: request.body.notifySubscribers ?? false,
        });
        const first = maintenance.updates[0]!;
        if (first.notifySubscribers) await notifyMaintenance(ctx, request.accountId, { ...maintenance, windowName: window.name }, first);
        return reply.code(201).send(maintenance);
      },
    );

    app.get(
      '/v1/maintenance-windows/:id/maintenances',
      {
        schema: {
          tags,
          summary: "List a window's maintenances, with their updates",
          params: WindowId,
          response: { 200: Type.Array(MaintenanceRecord), 404: ErrorA },
        },
      },
      async (request, reply) => {
        const window = await getWindow(ctx.db, request.accountId, request.params.id);
        return window ? listMaintenances(ctx.db, window.id) : sendError(reply, 404, 'Maintenance window not found');
      },
    );

    app.get(
      '/v1/maintenance-windows/:id/maintenances/:maintenanceId',
      {
        schema: {
          tags,
          summary: 'Retrieve a maintenance, with its updates',
          params: MaintenancePath,
          response: { 200: MaintenanceRecord, 404: ErrorA },
        },
      },
      async (request, reply) =>
        (await getMaintenance(ctx.db, request.accountId, request.params.id, request.params.maintenanceId)) ??
        sendError(reply, 404, 'Maintenance not found'),
    );

    app.post(
      '/v1/maintenance-windows/:id/maintenances/:maintenanceId/updates',
      {
        schema: {
          tags,
          summary: 'Add a status update to a maintenance',
          description:
            'With no status the maintenance keeps its own. New startsAt/endsAt move the maintenance: the update records ' +
            'the old dates (previousStartsAt, previousEndsAt) and the new ones (dateAdjustments).',
          params: MaintenancePath,
          body: UpdateCreate,
          response: { 201: UpdateRecord, 400: ErrorB, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const { id, maintenanceId } = request.params;
        const outcome = await addUpdate(ctx.db, request.accountId, id, maintenanceId, {
          status: request.body.status,
          description: request.body.description,
          notifySubscribers: request.body.notifySubscribers ?? false,
          startsAt: request.body.startsAt,
          endsAt: request.body.endsAt,
        });
        if ('notFound' in outcome) return sendError(reply, 404, 'Maintenance not found');
        if ('refused' in outcome) {
          return sendInvalidBody(reply, { [outcome.field]: outcome.refused });
        }
        if (outcome.added.notifySubscribers) {
          const window = await getWindow(ctx.db, request.accountId, id);
          const maintenance = await getMaintenance(ctx.db, request.accountId, id, maintenanceId);
          if (window && maintenance) {
            await notifyMaintenance(ctx, request.accountId, { ...maintenance, windowName: window.name }, outcome.added);
          }
        }
        return reply.code(201).send(outcome.added);
      },
    );

    app.put(
      '/v1/maintenance-windows/:id/maintenances/:maintenanceId/updates/:updateId',
      {
        schema: {
          tags,
          summary: 'Update a maintenance window status update',
          description:
            'Replaces the description; with no status sent the stored status is kept. Only the latest update may change ' +
            'status, along the same transitions, and the maintenance follows it.',
          params: UpdatePath,
          body: UpdateEdit,
          response: { 200: UpdateRecord, 400: ErrorB, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const { id, maintenanceId, updateId } = request.params;
        const outcome = await editUpdate(ctx.db, request.accountId, id, maintenanceId, updateId, {
          description: request.body.description,
          status: request.body.status,
        });
        if ('notFound' in outcome) return sendError(reply, 404, 'Maintenance update not found');
        if ('refused' in outcome) {
          return sendInvalidBody(reply, { [outcome.field]: outcome.refused });
        }
        return outcome.edited;
      },
    );
  };
