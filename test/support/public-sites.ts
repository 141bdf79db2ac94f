/**
 * Loopback stand-ins for the public sites that public Playwright example specs
 * visit, so those specs run here unchanged but for their base URL:
 *
 * - playwright.dev (create-playwright's `example.spec.ts`/`.js`): a home page
 *   whose title contains "Playwright", with a "Get started" link to a docs
 *   page whose heading is "Installation";
 * - the Danube WebShop (checkly's onboarding `homepage.spec.ts`): a home page
 *   titled "Danube WebShop".
 *
 * Each takes a `broken` option that makes some of those specs' tests fail the
 * way a broken site would, so that a comparison of outcomes covers failures.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface PublicSite {
  /** The stand-in's base URL, with a trailing slash: `http://127.0.0.1:<port>/`. */
  url: string;
  /** Paths requested so far, in order. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * How the playwright.dev stand-in breaks: `title` (the home page's title lacks
 * "Playwright": "has title" fails), `heading` (the docs page has no
 * "Installation" heading: "get started link" fails).
 */
export type PlaywrightDevBreak = 'title' | 'heading';
/** How the webshop stand-in breaks: `title` (another shop's title), `status` (the home page answers 500). */
export type WebShopBreak = 'title' | 'status';

type Route = { status?: number; html: string };

const page = (title: string, body: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>${title}</title></head><body>${body}</body></html>`;

export function startPlaywrightDev(options: { broken?: PlaywrightDevBreak } = {}): Promise<PublicSite> {
  const title = options.broken === 'title' ? 'Fast and reliable end-to-end testing for modern web apps' : 'Fast and reliable end-to-end testing for modern web apps | Playwright';
  const heading = options.broken === 'heading' ? 'Getting ready' : 'Installation';
  return startSite({
    '/': {
      html: page(
        title,
        `<header><nav><a href="/">Playwright</a> <a href="/docs/intro">Docs</a> <a href="/docs/api/class-playwright">API</a></nav></header>
         <main><h1>Playwright enables reliable end-to-end testing for modern web apps.</h1>
         <a class="button" href="/docs/intro">Get started</a> <a href="/community/welcome">Community</a></main>`,
      ),
    },
    '/docs/intro': {
      html: page(
        `${heading} | Playwright`,
        `<nav><a href="/">Playwright</a></nav><main><article><h1>${heading}</h1>
         <h2>Introduction</h2><p>Playwright Test was created specifically to accommodate the needs of end-to-end testing.</p>
         <h2>Installing Playwright</h2><pre>npm init playwright@latest</pre></article></main>`,
      ),
    },
  });
}

export function startWebShop(options: { broken?: WebShopBreak } = {}): Promise<PublicSite> {
  const title = options.broken === 'title' ? 'Tiber Books' : 'Danube WebShop';
  return startSite({
    '/': {
      status: options.broken === 'status' ? 500 : 200,
      html: page(
        title,
        `<header><h1>${title}</h1><input aria-label="Search" placeholder="Search"></header>
         <main><ul class="preview">
           <li><a href="/books/1">Haben oder haben</a> <span>9.95 €</span></li>
           <li><a href="/books/2">Parry Hotter</a> <span>9.95 €</span></li>
           <li><a href="/books/3">The Foreigner</a> <span>9.95 €</span></li>
         </ul></main>`,
      ),
    },
  });
}

async function startSite(routes: Record<string, Route>): Promise<PublicSite> {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://stand-in').pathname;
    requests.push(path);
    const route = routes[path];
    if (!route) {
      response.writeHead(404, { 'content-type': 'text/html; charset=utf-8' }).end(page('Page Not Found', '<h1>Page Not Found</h1>'));
      return;
    }
    response.writeHead(route.status ?? 200, { 'content-type': 'text/html; charset=utf-8' }).end(route.html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
