import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { speaksChecklyDialect } from '../auth.js';
import type { ServiceContext } from '../context.js';
import type { Queryable } from '../db/database.js';
import { sendError, sendInvalidBody } from '../http-errors.js';
import { DateTimeSchema, ErrorA, ErrorB, IdParams, Pagination } from '../schemas/common.js';
import { enqueueMail } from '../mail/outbox.js';
import {
  BRANDING_URL_FIELDS,
  brandingUrlProblem,
  COLOR_PATTERN,
  MAX_URL_LENGTH,
  THEME_COLOR_KEYS,
  THEMES,
  type Theme,
  type ThemeColors,
} from '../status-pages/branding.js';
import { ChecklyStatusPageSchema, checklyStatusPage, cursorPage, cursorPageSchema } from '../status-pages/checkly-dialect.js';
import { verificationMail } from '../status-pages/notifications.js';
import { unknownServices } from '../status-pages/unknown-services.js';
import {
  createPage,
  createService,
  deletePage,
  deleteService,
  getPage,
  listPages,
  listPagesFrom,
  listServices,
  updatePage,
  type StatusPageInput,
} from '../store/status-pages.js';
import { createSubscription, deleteSubscription, listSubscriptions } from '../store/subscriptions.js';
import { incidentRoutes } from './incidents.js';

const tags = ['Status pages'];
const Uuid = Type.String({ format: 'uuid' });

const ServiceRecord = Type.Object({ id: Type.String(), name: Type.String(), created_at: DateTimeSchema }, { title: 'StatusPageService' });
const ServiceRef = Type.Object({ id: Type.String(), name: Type.String() });
export const ServiceBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 255 }) });

const BrandingUrl = (description: string) =>
  Type.Optional(Type.Union([Type.String({ maxLength: MAX_URL_LENGTH }), Type.Null()], { default: null, description }));
const ThemeColorsSchema = Type.Object(
  Object.fromEntries(THEME_COLOR_KEYS.map((key) => [key, Type.Optional(Type.String({ pattern: COLOR_PATTERN, description: '#rrggbb' }))])),
  { description: 'Colours as #rrggbb; a colour left out keeps the built-in one' },
);
const ThemeColorsRecord = Type.Record(Type.String(), Type.String());

export const PageBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  url: Type.String({
    pattern: '^[a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])$',
    description: 'The page\'s public address, /status/{url}: 3 to 63 lower-case letters, digits and -; unique',
  }),
  cards: Type.Optional(
    Type.Array(
      Type.Object({
        name: Type.String({ minLength: 1, maxLength: 255 }),
        services: Type.Array(Uuid, { maxItems: 50, uniqueItems: true }),
      }),
      { maxItems: 20, default: [] },
    ),
  ),
  logo: BrandingUrl('https URL of the logo shown in the page\'s header (an image)'),
  redirectTo: BrandingUrl('https URL the logo links to'),
  favicon: BrandingUrl('https URL of the page\'s favicon'),
  defaultTheme: Type.Optional(
    Type.Enum(THEMES, { default: 'AUTO', description: 'AUTO follows the visitor\'s system setting' }),
  ),
  themeColors: Type.Optional(
    Type.Object({ light: Type.Optional(ThemeColorsSchema), dark: Type.Optional(ThemeColorsSchema) }, { default: {} }),
  ),
});
export interface PageBodyValue {
  name: string;
  url: string;
  cards?: StatusPageInput['cards'];
  logo?: string | null;
  redirectTo?: string | null;
  favicon?: string | null;
  defaultTheme?: Theme;
  themeColors?: { light?: ThemeColors; dark?: ThemeColors };
}
/** The body with every field it may leave out filled in: a PUT replaces them all. */
export const pageInput = (body: PageBodyValue): StatusPageInput => ({
  name: body.name,
  url: body.url,
  cards: body.cards ?? [],
  logo: body.logo ?? null,
  redirectTo: body.redirectTo ?? null,
  favicon: body.favicon ?? null,
  defaultTheme: body.defaultTheme ?? 'AUTO',
  themeColors: { light: body.themeColors?.light ?? {}, dark: body.themeColors?.dark ?? {} },
});
const PageRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  url: Type.String(),
  cards: Type.Array(Type.Object({ name: Type.String(), services: Type.Array(ServiceRef) })),
  logo: Type.Union([Type.String(), Type.Null()]),
  redirectTo: Type.Union([Type.String(), Type.Null()]),
  favicon: Type.Union([Type.String(), Type.Null()]),
  defaultTheme: Type.Enum(THEMES),
  themeColors: Type.Object({ light: ThemeColorsRecord, dark: ThemeColorsRecord }),
  created_at: DateTimeSchema,
  updated_at: Type.Union([DateTimeSchema, Type.Null()]),
}, { title: 'StatusPage' });

const PageListQuery = Type.Object({
  ...Pagination.properties,
  nextId: Type.Optional(Type.String({ format: 'uuid', description: 'Checkly dialect: the status page the page starts at' })),
});

/** What the page routes (and a project deploy) refuse in a page body: unknown services, branding that is no https URL. */
export async function pageProblems(db: Queryable, accountId: string, body: StatusPageInput): Promise<Record<string, string>> {
  const lists: Record<string, string[]> = {};
  body.cards.forEach((card, index) => (lists[`cards.${index}.services`] = card.services));
  const problems = await unknownServices(db, accountId, lists);
  for (const field of BRANDING_URL_FIELDS) {
    const value = body[field];
    const problem = value === null ? undefined : brandingUrlProblem(value);
    if (problem) problems[field] = problem;
  }
  return problems;
}

export const statusPageRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    await app.register(incidentRoutes(ctx));

    app.post(
      '/v1/status-pages/services',
      {
        schema: {
          tags,
          summary: 'Create a status page service',
          description: 'A thing a status page shows and an incident names. Names are unique in the account.',
          body: ServiceBody,
          response: { 201: ServiceRecord, 400: ErrorB },
        },
      },
      async (request, reply) => {
        const created = await createService(ctx.db, request.accountId, request.body.name);
        if (!created) return sendError(reply, 400, `A service named ${request.body.name} exists`, { name: 'already exists' });
        return reply.code(201).send(created);
      },
    );

    app.get(
      '/v1/status-pages/services',
      { schema: { tags, summary: 'List status page services', response: { 200: Type.Array(ServiceRecord) } } },
      async (request) => listServices(ctx.db, request.accountId),
    );

    app.delete(
      '/v1/status-pages/services/:id',
      {
        schema: {
          tags,
          summary: 'Delete a status page service',
          description: 'Not while a status page shows it (409).',
          params: IdParams,
          response: { 204: Type.Null(), 400: ErrorB, 404: ErrorB, 409: ErrorB },
        },
      },
      async (request, reply) => {
        const outcome = await deleteService(ctx.db, request.accountId, request.params.id);
        if (outcome === 'not-found') return sendError(reply, 404, 'Service not found', { id: 'not found' });
        if (outcome === 'in-use') return sendError(reply, 409, 'A status page shows this service', { id: 'shown on a status page' });
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/v1/status-pages',
      {
        schema: {
          tags,
          summary: 'Create a status page',
          description: 'Branding: logo, redirectTo and favicon are https URLs; themeColors are #rrggbb.',
          body: PageBody,
          response: { 201: PageRecord, 400: ErrorB },
        },
      },
      async (request, reply) => {
        const body = pageInput(request.body);
        const problems = await pageProblems(ctx.db, request.accountId, body);
        if (Object.keys(problems).length > 0) return sendInvalidBody(reply, problems);
        const created = await createPage(ctx.db, request.accountId, body);
        if (!created) return sendError(reply, 400, `The url ${body.url} is taken`, { url: 'is taken' });
        return reply.code(201).send(created);
      },
    );

    app.get(
      '/v1/status-pages',
      {
        schema: {
          tags,
          summary: 'List status pages',
          description:
            'Oldest first. A caller that names its account in x-checkly-account gets a cursor page, {entries, length, nextId}, ' +
            'paged by limit and nextId, each page as the public checkly CLI reads it.',
          querystring: PageListQuery,
          response: { 200: Type.Union([cursorPageSchema(ChecklyStatusPageSchema), Type.Array(PageRecord)]) },
        },
      },
      async (request) => {
        const { limit = 10, page = 1, nextId } = request.query;
        if (!speaksChecklyDialect(request)) return listPages(ctx.db, request.accountId, { limit, page });
        const found = await listPagesFrom(ctx.db, request.accountId, { limit, fromId: nextId });
        return cursorPage(
          found.pages.map((statusPage) => checklyStatusPage(request.accountId, statusPage)),
          found.nextId,
        );
      },
    );

    app.get(
      '/v1/status-pages/:id',
      {
        schema: {
          tags,
          summary: 'Retrieve a status page',
          description: 'A caller that names its account in x-checkly-account gets the page as the public checkly CLI reads it.',
          params: IdParams,
          response: { 200: Type.Union([ChecklyStatusPageSchema, PageRecord]), 404: ErrorA },
        },
      },
      async (request, reply) => {
        const statusPage = await getPage(ctx.db, request.accountId, request.params.id);
        if (!statusPage) return sendError(reply, 404, 'Status page not found');
        return speaksChecklyDialect(request) ? checklyStatusPage(request.accountId, statusPage) : statusPage;
      },
    );

    app.put(
      '/v1/status-pages/:id',
      {
        schema: {
          tags,
          summary: 'Replace a status page',
          description: 'Every field is replaced: branding left out goes back to none.',
          params: IdParams,
          body: PageBody,
          response: { 200: PageRecord, 400: ErrorB, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const body = pageInput(request.body);
        const problems = await pageProblems(ctx.db, request.accountId, body);
        if (Object.keys(problems).length > 0) return sendInvalidBody(reply, problems);
        const outcome = await updatePage(ctx.db, request.accountId, request.params.id, body);
        if ('notFound' in outcome) return sendError(reply, 404, 'Status page not found');
        if ('urlTaken' in outcome) return sendError(reply, 400, `The url ${body.url} is taken`, { url: 'is taken' });
        return outcome.updated;
      },
    );

    const PageParam = Type.Object({ statusPageId: Uuid });
    const SubscriptionRecord = Type.Object({
      id: Type.String(),
      type: Type.Literal('EMAIL'),
      address: Type.String(),
      status: Type.Union([Type.Literal('PENDING'), Type.Literal('VERIFIED')]),
      created_at: Type.String(),
      updated_at: Type.String(),
    });

    app.post(
      '/v1/status-pages/:statusPageId/subscriptions',
      {
        schema: {
          tags,
          summary: 'Subscribe an e-mail address to a status page',
          description:
            'The subscription is PENDING, and the address gets a link to confirm it; following the link makes it VERIFIED. ' +
            'Only VERIFIED subscribers are notified.',
          params: PageParam,
          body: Type.Object({ address: Type.String({ format: 'email', maxLength: 254 }) }),
          response: { 201: SubscriptionRecord, 400: ErrorB, 404: ErrorA },
        },
      },
      async (request, reply) => {
        const page = await getPage(ctx.db, request.accountId, request.params.statusPageId);
        if (!page) return sendError(reply, 404, 'Status page not found');
        const created = await ctx.db.transaction(async (tx) => {
          const made = await createSubscription(tx, page.id, request.body.address);
          if (made) await enqueueMail(tx, [verificationMail(ctx, request.accountId, page, made.subscription.address, made.verifyToken)]);
          return made;
        });
        if (!created) return sendError(reply, 400, `${request.body.address} is already subscribed`, { address: 'is already subscribed' });
        ctx.wakeOutbox();
        return reply.code(201).send(created.subscription);
      },
    );

    app.get(
      '/v1/status-pages/:statusPageId/subscriptions',
      {
        schema: {
          tags,
          summary: 'List status page subscriptions',
          params: PageParam,
          response: { 200: Type.Array(SubscriptionRecord), 404: ErrorA },
        },
      },
      async (request, reply) => {
        const page = await getPage(ctx.db, request.accountId, request.params.statusPageId);
        return page ? listSubscriptions(ctx.db, page.id) : sendError(reply, 404, 'Status page not found');
      },
    );

    app.delete(
      '/v1/status-pages/:statusPageId/subscriptions/:subscriptionId',
      {
        schema: {
          tags,
          summary: 'Delete a status page subscription',
          params: Type.Object({ statusPageId: Uuid, subscriptionId: Uuid }),
          response: { 204: Type.Null(), 400: ErrorB, 404: ErrorB },
        },
      },
      async (request, reply) => {
        const page = await getPage(ctx.db, request.accountId, request.params.statusPageId);
        const deleted = page ? await deleteSubscription(ctx.db, page.id, request.params.subscriptionId) : false;
        if (!deleted) return sendError(reply, 404, 'Subscription not found', { subscriptionId: 'not found' });
        return reply.code(204).send(null);
      },
    );

    app.delete(
      '/v1/status-pages/:id',
      {
        schema: {
          tags,
          summary: 'Delete a status page, with its subscriptions',
          params: IdParams,
          response: { 204: Type.Null(), 400: ErrorB, 404: ErrorB },
        },
      },
      async (request, reply) => {
        if (!(await deletePage(ctx.db, request.accountId, request.params.id))) {
          return sendError(reply, 404, 'Status page not found', { id: 'not found' });
        }
        return reply.code(204).send(null);
      },
    );
  };
