/**
 * The checks' target: a loopback HTTP site of the test's own that answers 200
 * to every path after a delay chosen per path prefix, and counts hits per
 * path and requests still open (jobs in flight).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlowTarget {
  readonly url: string;
  readonly hits: Map<string, number>;
  /** Requests arrived and not yet answered or abandoned. */
  readonly open: number;
  /** All hits on every path. */
  total(): number;
  close(): Promise<void>;
}

/** `delays`: path prefix → ms before the answer; the longest matching prefix wins, no match answers at once. */
export async function startSlowTarget(delays: Record<string, number>): Promise<SlowTarget> {
  const hits = new Map<string, number>();
  let open = 0;
  const prefixes = Object.keys(delays).sort((a, b) => b.length - a.length);
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    open += 1;
    let counted = true;
    const done = () => {
      if (counted) open -= 1;
      counted = false;
    };
    const prefix = prefixes.find((candidate) => path.startsWith(candidate));
    const delay = prefix === undefined ? 0 : delays[prefix]!;
    const timer = setTimeout(() => {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      done();
    }, delay);
    response.on('close', () => {
      clearTimeout(timer);
      done();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    get open() {
      return open;
    },
    total: () => [...hits.values()].reduce((sum, value) => sum + value, 0),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
