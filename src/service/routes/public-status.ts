import formbody from '@fastify/formbody';
import rateLimit from '@fastify/rate-limit';
import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ServiceContext } from '../context.js';
import { enqueueMail } from '../mail/outbox.js';
import { atomFeed, rssFeed, summaryJson } from '../status-pages/feeds.js';
import { verificationMail } from '../status-pages/notifications.js';
import { feedIncidents, loadPageView } from '../status-pages/page-view.js';
import { PAGE_SCRIPT_HASH, renderMessage, renderStatusPage } from '../status-pages/render.js';
import { pageByUrl, type StatusPageRecord } from '../store/status-pages.js';
import { createSubscription, unsubscribe, verifySubscription } from '../store/subscriptions.js';

const UrlParam = Type.Object({ url: Type.String({ maxLength: 63 }) });
const TokenQuery = Type.Object({ token: Type.Optional(Type.String({ maxLength: 200 })) });
/** What the form's field must look like before anything is stored or sent. */
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

type PublicPage = StatusPageRecord & { accountId: string };

/**
 * What a page may do, whatever its owner typed: its own one script (by
 * hash) and its own style (by nonce); images, the logo and favicon
 * included, from this site or https only; fetches only to this site (the
 * refresh); forms only to this site; no plugins, frames or <base>.
 */
const contentSecurityPolicy = (nonce: string) =>
  [
    "default-src 'none'",
    `script-src '${PAGE_SCRIPT_HASH}'`,
    `style-src 'nonce-${nonce}'`,
    "img-src 'self' https:",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');

function html(reply: FastifyReply, status: number, body: (nonce: string) => string) {
  const nonce = randomBytes(16).toString('base64');
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', contentSecurityPolicy(nonce))
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .send(body(nonce));
}

/** Feeds and the summary: public data anyone's tools may read, across origins too. */
function data(reply: FastifyReply, type: string, body: string | object) {
  return reply
    .code(200)
    .type(type)
    .header('cache-control', 'no-cache')
    .header('access-control-allow-origin', '*')
    .header('x-content-type-options', 'nosniff')
    .send(body);
}

/**
 * The public side of status pages: the page itself, its feeds and summary,
 * its subscribe form and the links its e-mails carry. No credentials;
 * nothing here is in /openapi.json.
 */
export const publicStatusRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    await app.register(formbody);
    // The subscribe form sends e-mail to any address typed in: a low ceiling per visitor.
    await app.register(rateLimit, { global: false });

    async function pageHtml(page: PublicPage, status: number, reply: FastifyReply, notice?: string) {
      const view = await loadPageView(ctx.db, page);
      return html(reply, status, (nonce) => renderStatusPage(view, { nonce, notice, refresh: notice === undefined }));
    }
    const message = (reply: FastifyReply, status: number, title: string, text: string, page?: PublicPage) =>
      html(reply, status, (nonce) =>
        renderMessage(title, text, {
          nonce,
          branding: page,
          back: page && { href: `/status/${page.url}`, label: `Back to ${page.name}` },
        }),
      );
    const notFound = (reply: FastifyReply) => message(reply, 404, 'Status page not found', 'There is no status page at this address.');

    app.get('/status/:url', { schema: { hide: true, params: UrlParam } }, async (request, reply) => {
      const page = await pageByUrl(ctx.db, request.params.url);
      return page ? pageHtml(page, 200, reply) : notFound(reply);
    });

    const summary = async (url: string, reply: FastifyReply) => {
      const page = await pageByUrl(ctx.db, url);
      if (!page) return reply.code(404).header('access-control-allow-origin', '*').send({ message: 'Status page not found' });
      return data(reply, 'application/json; charset=utf-8', summaryJson(ctx.baseUrl, await loadPageView(ctx.db, page)));
    };
    app.get('/status/:url/summary.json', { schema: { hide: true, params: UrlParam } }, (request, reply) =>
      summary(request.params.url, reply),
    );
    // Where tools written for the comparable product look, relative to the page.
    app.get('/status/:url/api/v2/summary.json', { schema: { hide: true, params: UrlParam } }, (request, reply) =>
      summary(request.params.url, reply),
    );

    for (const [format, type, render] of [
      ['atom', 'application/atom+xml; charset=utf-8', atomFeed],
      ['rss', 'application/rss+xml; charset=utf-8', rssFeed],
    ] as const) {
      app.get(`/status/:url/history.${format}`, { schema: { hide: true, params: UrlParam } }, async (request, reply) => {
        const page = await pageByUrl(ctx.db, request.params.url);
        if (!page) return notFound(reply);
        return data(reply, type, render({ baseUrl: ctx.baseUrl, page, incidents: await feedIncidents(ctx.db, page) }));
      });
    }

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
          return pageHtml(page, 400, reply, `"${address}" is not an e-mail address.`);
        }
        await ctx.db.transaction(async (tx) => {
          const made = await createSubscription(tx, page.id, address);
          if (made) await enqueueMail(tx, [verificationMail(ctx, page.accountId, page, address, made.verifyToken)]);
        });
        ctx.wakeOutbox();
        // The same answer whether or not the address was on the list already: the form tells no one who subscribed.
        return pageHtml(page, 200, reply, `Check ${address} for a link to confirm your subscription.`);
      },
    );

    app.get(
      '/status/:url/subscriptions/verify',
      { schema: { hide: true, params: UrlParam, querystring: TokenQuery } },
      async (request, reply) => {
        const page = await pageByUrl(ctx.db, request.params.url);
        if (!page) return notFound(reply);
        const verified = request.query.token ? await verifySubscription(ctx.db, page.id, request.query.token) : undefined;
        if (!verified) return message(reply, 404, 'Link not valid', 'This confirmation link is not valid (any more).', page);
        return message(reply, 200, 'Subscription confirmed', `${verified.address} will get an e-mail about incidents on ${page.name}.`, page);
      },
    );

    app.get(
      '/status/:url/subscriptions/unsubscribe',
      { schema: { hide: true, params: UrlParam, querystring: TokenQuery } },
      async (request, reply) => {
        const page = await pageByUrl(ctx.db, request.params.url);
        if (!page) return notFound(reply);
        const removed = request.query.token ? await unsubscribe(ctx.db, page.id, request.query.token) : false;
        if (!removed) return message(reply, 404, 'Link not valid', 'This link is not valid (any more).', page);
        return message(reply, 200, 'Unsubscribed', `You will get no more e-mail about ${page.name}.`, page);
      },
    );
  };
