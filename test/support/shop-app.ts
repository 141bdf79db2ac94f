/**
 * A small multi-page web app on loopback for browser checks: a home page
 * (with a console error it logs itself and an image that is missing), a
 * log-in form posted to the server, and an account page behind it. Every
 * request's headers are kept, so a test can see what the browser sent.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ShopApp {
  url: string;
  /** Headers of every request, in order. */
  requests: { method: string; path: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

export const SHOP_TITLE = 'Outpost Shop';
export const CONSOLE_ERROR = 'shop widget failed to load';

const page = (title: string, body: string, head = ''): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${head}</head><body>${body}</body></html>`;

export async function startShopApp(options: { password: string }): Promise<ShopApp> {
  const requests: ShopApp['requests'] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://shop');
    requests.push({ method: request.method ?? 'GET', path: url.pathname, headers: request.headers });
    const html = (status: number, body: string) => {
      response.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      response.end(body);
    };
    if (request.method === 'GET' && url.pathname === '/') {
      html(
        200,
        page(
          SHOP_TITLE,
          `<h1>${SHOP_TITLE}</h1><p>Fresh tools for every job.</p>
           <nav><a href="/login">Log in</a> <a href="/about">About</a></nav>
           <img src="/missing.png" alt="banner">
           <script src="/widget.js"></script>`,
        ),
      );
    } else if (request.method === 'GET' && url.pathname === '/widget.js') {
      response.writeHead(200, { 'content-type': 'text/javascript' });
      response.end(`console.error(${JSON.stringify(CONSOLE_ERROR)});\n`);
    } else if (request.method === 'GET' && url.pathname === '/about') {
      html(200, page('About', '<h1>About us</h1><a href="/">Home</a>'));
    } else if (request.method === 'GET' && url.pathname === '/login') {
      html(
        200,
        page(
          'Log in',
          `<h1>Log in</h1><form method="post" action="/login">
             <label>User <input name="user" autocomplete="username"></label>
             <label>Password <input name="password" type="password" autocomplete="current-password"></label>
             <button type="submit">Log in</button>
           </form>`,
        ),
      );
    } else if (request.method === 'POST' && url.pathname === '/login') {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        const form = new URLSearchParams(body);
        const user = form.get('user') ?? '';
        if (form.get('password') === options.password && /^[a-z]{1,20}$/.test(user)) {
          response.writeHead(303, { location: `/account?user=${user}` });
          response.end();
        } else {
          html(401, page('Log in', '<h1>Wrong password</h1><a href="/login">Try again</a>'));
        }
      });
    } else if (request.method === 'GET' && url.pathname === '/account') {
      const user = (url.searchParams.get('user') ?? '').replace(/[^a-z]/g, '');
      html(200, page('Account', `<h1>Welcome, ${user}</h1><p>Your orders: none yet.</p>`));
    } else {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not found');
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    requests,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
