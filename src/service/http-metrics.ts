/**
 * Counts and times every HTTP request the service answers, labelled by the
 * route's template (`/v1/checks/:id`), never the URL asked for, so ids and
 * query strings make no new series. Requests no route matched share
 * `route="unmatched"`.
 */
import type { FastifyInstance } from 'fastify';
import type { ServiceMetrics } from './service-metrics.js';

export function instrumentHttp(app: FastifyInstance, metrics: ServiceMetrics['http']): void {
  // On the root instance, before any route is added: every route, in every plugin, is counted.
  app.addHook('onResponse', async (request, reply) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status_code: String(reply.statusCode),
    };
    metrics.requests.inc(labels);
    metrics.duration.observe(labels, reply.elapsedTime / 1000);
  });
}
