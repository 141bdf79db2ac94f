/**
 * A JSON API on loopback for API check tests: an auth-protected route (bearer
 * token or basic auth), redirects, an echo of what was sent, slow, failing
 * and oversized routes.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ApiTarget {
  url: string;
  /** Requests as received: method, path with query, headers, body. */
  received: ReceivedRequest[];
  close(): Promise<void>;
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export const TARGET_TOKEN = 'tok-7f3a9c1e5b2d4f60';
export const BASIC_USER = 'ada';
export const BASIC_PASSWORD = 'pw-lovelace-1815';
export const BIG_BODY_BYTES = 2 * 1024 * 1024;

export async function startApiTarget(): Promise<ApiTarget> {
  const received: ReceivedRequest[] = [];
  /** Requests each /flaky key has had: its first `failures` answer 503. */
  const flakyCounts = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const entry = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body };
      received.push(entry);
      const url = new URL(request.url ?? '/', 'http://target');
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
        response.writeHead(status, { 'content-type': 'application/json', ...headers });
        response.end(JSON.stringify(value));
      };
      switch (url.pathname) {
        case '/users':
          json(200, { users: [{ name: 'ada', roles: ['admin'] }, { name: 'bob', roles: [] }], count: 2, next: null }, {
            'x-request-id': 'req-42',
            'set-cookie': 'session=abc123; HttpOnly',
          });
          return;
        case '/text':
          response.writeHead(200, { 'content-type': 'text/plain' });
          response.end('hello from the target\n');
          return;
        case '/echo':
          json(200, entry);
          return;
        case '/private':
          if (request.headers.authorization === `Bearer ${TARGET_TOKEN}`) json(200, { ok: true, token: TARGET_TOKEN });
          else json(401, { error: 'unauthorized' }, { 'www-authenticate': 'Bearer' });
          return;
        case '/basic': {
          const expected = `Basic ${Buffer.from(`${BASIC_USER}:${BASIC_PASSWORD}`).toString('base64')}`;
          if (request.headers.authorization === expected) json(200, { user: BASIC_USER });
          else json(401, { error: 'unauthorized' }, { 'www-authenticate': 'Basic realm="test"' });
          return;
        }
        case '/redirect':
          response.writeHead(302, { location: '/users' });
          response.end();
          return;
        case '/redirect-307':
          response.writeHead(307, { location: '/echo' });
          response.end();
          return;
        case '/slow':
          setTimeout(() => json(200, { slow: true }), Number(url.searchParams.get('ms') ?? 300));
          return;
        case '/fail':
          json(500, { error: 'boom' });
          return;
        case '/flaky': {
          const key = url.searchParams.get('key') ?? '';
          const seen = (flakyCounts.get(key) ?? 0) + 1;
          flakyCounts.set(key, seen);
          if (seen <= Number(url.searchParams.get('failures') ?? 1)) json(503, { error: 'try again', attempt: seen });
          else json(200, { ok: true, attempt: seen });
          return;
        }
        case '/big':
          response.writeHead(200, { 'content-type': 'text/plain' });
          response.end('x'.repeat(BIG_BODY_BYTES));
          return;
        default:
          json(404, { error: 'not found' });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** API check settings: a GET of `url` with nothing else, overridden by `request` and `rest`. */
export function apiSettings(
  url: string,
  request: Record<string, unknown> = {},
  rest: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    request: {
      method: 'GET',
      url,
      headers: [],
      queryParameters: [],
      body: '',
      bodyType: 'NONE',
      basicAuth: null,
      followRedirects: true,
      skipSSL: false,
      ipFamily: 'IPv4',
      assertions: [],
      ...request,
    },
    setupScripts: [],
    tearDownScripts: [],
    degradedResponseTime: 5000,
    maxResponseTime: 20000,
    shouldFail: false,
    ...rest,
  };
}
