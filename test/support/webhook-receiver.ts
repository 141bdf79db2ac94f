/** A real HTTP receiver on loopback for webhooks, Slack and the SMS provider; it can fail on purpose. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedHook {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface WebhookReceiver {
  /** The receiver's origin; any path under it is accepted. */
  base: string;
  received: ReceivedHook[];
  /** The next `times` calls to `path` answer 500. */
  fail(path: string, times: number): void;
  at(path: string): ReceivedHook[];
  /** The parsed bodies of calls whose `x-outpost-event` is `event`. */
  events(event: string): Record<string, any>[];
  close(): Promise<void>;
}

/**
 * The service refuses loopback webhook destinations unless its operator
 * allows them; a test whose receiver listens on loopback allows it as an
 * operator would, in the service's environment.
 */
export const LOOPBACK_WEBHOOKS = { WEBHOOK_ALLOWED_DESTINATIONS: '127.0.0.0/8' } as const;

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedHook[] = [];
  const failures = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://receiver');
      received.push({ method: request.method ?? '', path: url.pathname, query: url.searchParams, headers: request.headers, body });
      const left = failures.get(url.pathname) ?? 0;
      if (left > 0) {
        failures.set(url.pathname, left - 1);
        response.writeHead(500).end('busy');
        return;
      }
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    fail: (path, times) => void failures.set(path, times),
    at: (path) => received.filter((entry) => entry.path === path),
    events: (event) =>
      received.filter((entry) => entry.headers['x-outpost-event'] === event).map((entry) => JSON.parse(entry.body) as Record<string, any>),
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
