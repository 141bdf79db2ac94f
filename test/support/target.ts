import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Target {
  url: string;
  hits: Map<string, number>;
  close(): Promise<void>;
}

/** A loopback HTTP site whose routes the test defines. */
export async function startTarget(
  routes: Record<string, (request: IncomingMessage, response: ServerResponse) => void>,
): Promise<Target> {
  const hits = new Map<string, number>();
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes[path];
    if (route) return route(request, response);
    response.writeHead(404).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const respond =
  (status: number, body = 'ok', delayMs = 0) =>
  (_request: IncomingMessage, response: ServerResponse) => {
    const send = () => response.writeHead(status, { 'content-type': 'text/plain' }).end(body);
    if (delayMs === 0) return send();
    const timer = setTimeout(send, delayMs);
    response.on('close', () => clearTimeout(timer));
  };

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
