/**
 * The benchmark's target site, in a process of its own so its clock and
 * event loop are not the agent's. It records how long it held each delayed
 * request (request received → response finished), the reference the agent's
 * reported responseTime is compared with.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const handled = new Map<string, number>();
// The target's own lateness: a request it notices late is timed short, and counts as the agent's error.
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();

const server = createServer((request, response) => {
  const received = performance.now();
  const url = new URL(request.url ?? '/', 'http://target');
  if (url.pathname === '/loop-delay') {
    const ms = (ns: number) => ns / 1e6;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)) }));
    if (url.searchParams.has('reset')) loopDelay.reset();
    return;
  }
  if (url.pathname === '/stats') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(Object.fromEntries(handled)));
    return;
  }
  const delay = Number(url.searchParams.get('ms') ?? 0);
  const id = url.searchParams.get('id');
  const send = () => {
    response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '3' });
    response.end('ok\n', () => {
      if (id) handled.set(id, performance.now() - received);
    });
  };
  if (delay > 0) setTimeout(send, delay);
  else send();
});
server.keepAliveTimeout = 1000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
