import { collectDefaultMetrics, type Registry } from 'prom-client';

/**
 * prom-client's Node.js process metrics under `prefix`, without the three
 * gauges it names like counters (`*_total`), which Prometheus's linter
 * refuses. Each is the sum over `type` of the gauge of the same name without
 * `_total`, which stays.
 */
export function collectProcessMetrics(registry: Registry, prefix: string): void {
  collectDefaultMetrics({ register: registry, prefix });
  for (const name of ['active_handles_total', 'active_requests_total', 'active_resources_total']) {
    registry.removeSingleMetric(`${prefix}nodejs_${name}`);
  }
}
