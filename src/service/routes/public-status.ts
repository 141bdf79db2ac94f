import formbody from '@fastify/formbody';
import rateLimit from '@fastify/rate-limit';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ServiceContext } from '../context.js';
import { enqueueMail } from '../mail/outbox.js';
import { verificationMail } from '../status-pages/notifications.js';
import { renderMessage, renderStatusPage } from '../status-pages/render.js';
import { listIncidents } from '../store/incidents.js';
import { openMaintenances } from '../store/maintenance-windows.js';
import { pageByUrl, type StatusPageRecord } from '../store/status-pages.js';
import { createSubscription, unsubscribe, verifySubscription } from '../store/subscriptions.js';

const UrlParam = Type.Object({ url: Type.String({ maxLength: 63 }) });
const TokenQuery = Type.Object({ token: Type.Optional(Type.String({ maxLength: 200 })) });
/** What the form's field must look like before anything is stored or sent. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** Past incidents a page lists. */
const HISTORY_DAYS = 7;

const html = (reply: FastifyReply, status: number, body: string) =>
  reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(body);

/**
 * The public side of status pages: the page itself, its subscribe form and
 * the links its e-mails carry. No credentials; nothing here is in /openapi.json.
 */
export const publicStatusRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    await app.register(formbody);
    // The subscribe form sends e-mail to any address typed in: a low ceiling per visitor.
    await app.register(rateLimit, { global: false });

    async function pageHtml(page: StatusPageRecord & { accountId: string }, notice?: string): Promise<string> {
      const services = page.cards.flatMap((card) => card.services.map((service) => service.id));
      const scope = { limit: 50, page: 1, services };
      const open = services.length === 0 ? [] : await listIncidents(ctx.db, page.accountId, { ...scope, open: true });
      const recent =
        services.length === 0
          ? []
          : await listIncidents(ctx.db, page.accountId, { ...scope, open: false, resolvedWithinDays: HISTORY_DAYS });
      return renderStatusPage(page, open, recent, await openMaintenances(ctx.db, page.accountId), notice);
    }
    const notFound = (reply: FastifyReply) =>
      html(reply, 404, renderMessage('Status page not found', 'There is no status page at this address.'));

    app.get('/status/:url', { schema: { hide: true, params: UrlParam } }, async (request, reply) => {
      const page = await pageByUrl(ctx.db, request.params.url);
      return page ? html(reply, 200, await pageHtml(page)) : notFound(reply);
    });

    app.post(
      '/status/:url/subscribe',
      {
        schema: { hide: true, params: UrlParam, body: Type.Object({ email: Type.Optional(Type.String({ maxLength: 254 })) }) },
        config: { rateLimit: { max: 10, timeWindow: 60 * 60 * 1000 } },
      },
      async (request, reply) => {
        const page = await pageByUrl(ctx.db, request.params.url);
        if (!page) return notFound(reply);
        const address = request.body.email?.trim() ?? '';
        if (!EMAIL.test(address)) {
          return html(reply, 400, await pageHtml(page, `"${address}" is not an e-mail address.`));
        }
        await ctx.db.transaction(async (tx) => {
          const made = await createSubscription(tx, page.id, address);
          if (made) await enqueueMail(tx, [verificationMail(ctx, page.accountId, page, address, made.verifyToken)]);
        });
        ctx.wakeOutbox();
        // The same answer whether or not the address was on the list already: the form tells no one who subscribed.
        return html(reply, 200, await pageHtml(page, `Check ${address} for a link to confirm your subscription.`));
      },
    );

    app.get(
      '/status/:url/subscriptions/verify',
      { schema: { hide: true, params: UrlParam, querystring: TokenQuery } },
      async (request, reply) => {
        const page = await pageByUrl(ctx.db, request.params.url);
        if (!page) return notFound(reply);
        const verified = request.query.token ? await verifySubscription(ctx.db, page.id, request.query.token) : undefined;
        const back = { href: `/status/${page.url}`, label: `Back to ${page.name}` };
        if (!verified) return html(reply, 404, renderMessage('Link not valid', 'This confirmation link is not valid (any more).', back));
        return html(reply, 200, renderMessage('Subscription confirmed', `${verified.address} will get an e-mail about incidents on ${page.name}.`, back));
      },
    );

    app.get(
      '/status/:url/subscriptions/unsubscribe',
      { schema: { hide: true, params: UrlParam, querystring: TokenQuery } },
      async (request, reply) => {
        const page = await pageByUrl(ctx.db, request.params.url);
        if (!page) return notFound(reply);
        const removed = request.query.token ? await unsubscribe(ctx.db, page.id, request.query.token) : false;
        const back = { href: `/status/${page.url}`, label: `Back to ${page.name}` };
        if (!removed) return html(reply, 404, renderMessage('Link not valid', 'This link is not valid (any more).', back));
        return html(reply, 200, renderMessage('Unsubscribed', `You will get no more e-mail about ${page.name}.`, back));
      },
    );
  };

