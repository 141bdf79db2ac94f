import { createServer, type Server } from '../node-http.js';
import type { AddressInfo } from 'node:net';
import { PortInUseError } from '../errors/index.js';
import { VERSION } from '../version.js';
import type { AgentMetrics } from './metrics.js';
import type { Readiness } from './readiness.js';

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

/**
 * /-/readiness decides whether the orchestrator sends the agent work (and
 * whether a rolling update may go on); /-/liveness and /health only say the
 * process answers, so a not-ready agent is not killed for waiting on a key.
 */
export async function startHealthServer(
  port: number,
  readiness: Readiness,
  metrics: AgentMetrics,
  host = '0.0.0.0',
  /** More for /health, read at each request: what the agent found at start (its isolation backend). */
  about: () => Record<string, unknown> = () => ({}),
): Promise<HealthServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(JSON.stringify(body));
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') return json(405, { status: 'method not allowed' });
    switch (path) {
      case '/-/readiness':
        return json(readiness.ready ? 200 : 503, { status: readiness.state, detail: readiness.detail });
      case '/-/liveness':
        return json(200, { status: 'alive' });
      case '/health':
        return json(200, { status: 'ok', version: VERSION, readiness: readiness.state, detail: readiness.detail, ...about() });
      case '/metrics':
        metrics.registry
          .metrics()
          .then((text) => {
            response.writeHead(200, { 'content-type': metrics.registry.contentType });
            response.end(text);
          })
          .catch(() => json(500, { status: 'metrics unavailable' }));
        return;
      default:
        return json(404, { status: 'not found' });
    }
  });
  // Probes must not keep a draining process alive.
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new PortInUseError(`AGENT_HEALTH_PORT ${port} is already in use on ${host}; choose another AGENT_HEALTH_PORT`, { cause: error })
          : error,
      );
    });
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
