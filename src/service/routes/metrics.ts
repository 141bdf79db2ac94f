/**
 * GET /metrics: the service's Prometheus metrics (service-metrics.ts). Not part
 * of the API, so not in /openapi.json. With METRICS_TOKEN set, a scraper must
 * send it as a bearer token; without it the endpoint is open, as Prometheus
 * endpoints usually are, and shows counts, location ids and slugs, and (unless
 * METRICS_PER_CHECK=false) check ids and names.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import type { Secret } from '../../config/secret.js';
import { sendErrorA } from '../http-errors.js';

export const metricsRoutes =
  (registry: Registry, token: Secret | undefined): FastifyPluginAsync =>
  async (app) => {
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      if (token && !sameSecret(request.headers.authorization, `Bearer ${token.reveal()}`)) {
        return sendErrorA(reply, 401, 'Send the metrics token: "Authorization: Bearer <METRICS_TOKEN>"');
      }
      const text = await registry.metrics();
      return reply.header('content-type', registry.contentType).header('cache-control', 'no-store').send(text);
    });
  };

function sameSecret(given: string | undefined, expected: string): boolean {
  const a = Buffer.from(given ?? '');
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
