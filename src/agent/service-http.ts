/**
 * The parts of undici the agent's service client uses, loaded without the
 * rest of it: dispatchers with their request methods, and the proxy-aware
 * agent.
 *
 * Why not `import from 'undici'`: its index loads every part of undici (fetch,
 * WebSocket, caches, mocks, HTTP/2), and fetch's parts load Node.js's own copy
 * of undici besides: some 4 MB of an uptime agent's resident memory, for code
 * it never runs. Measured in docs/performance.md. The files are the very
 * objects the index exports; a contract test holds them to that, so an undici
 * that moves them fails the tests, not an agent.
 */
import type { Dispatcher as DispatcherType } from 'undici';
import api from 'undici/lib/api/index.js';
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import EnvHttpProxyAgent from 'undici/lib/dispatcher/env-http-proxy-agent.js';

// What undici's index does before anything else: every dispatcher gets request(),
// stream(), pipeline(), upgrade() and connect(). Its proxy agents call connect()
// on their own; the service client calls request(). Doing it again is harmless.
Object.assign(Dispatcher.prototype, api);

export { EnvHttpProxyAgent };

export type ServiceRequestOptions = Omit<DispatcherType.RequestOptions, 'origin' | 'path'> & { dispatcher: DispatcherType };

/** undici's request(url, options) with the dispatcher given: the URL becomes its origin and path. */
export function request(url: string, { dispatcher, ...options }: ServiceRequestOptions): Promise<DispatcherType.ResponseData> {
  const { origin, pathname, search } = new URL(url);
  return dispatcher.request({ ...options, origin, path: `${pathname}${search}` });
}
