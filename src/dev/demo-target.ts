import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DemoTarget {
  url: string;
  close(): Promise<void>;
}

/** The slow page answers after this long: over the 3 s degraded threshold, under the 5 s maximum. */
export const SLOW_MS = 3500;

/**
 * A small local site to monitor, so `npm start` runs real checks without
 * sending a packet off the machine: a healthy page, a slow one and a broken one.
 */
export async function startDemoTarget(): Promise<DemoTarget> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    if (path === '/slow') {
      const timer = setTimeout(() => response.end('slow but fine\n'), SLOW_MS);
      response.on('close', () => clearTimeout(timer));
      return;
    }
    if (path === '/broken') {
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end('internal error\n');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.end('ok\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
