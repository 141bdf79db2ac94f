import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { captureLogger } from './logs.js';
import { loadServiceConfig } from '../../src/service/config.js';
import { startService, type RunningService, type ServiceOptions } from '../../src/service/service.js';
import { createTestDatabase, type DbKind } from './databases.js';

export interface ApiAnswer<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface TestService {
  service: RunningService;
  url: string;
  accountId: string;
  apiKey: string;
  /** Calls the user API as the bootstrap account. */
  api<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiAnswer<T>>;
  /** Calls any route with exactly the headers given. */
  raw<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiAnswer<T>>;
  /** A new private location with one key: what an agent needs. */
  privateLocation(slugName?: string): Promise<{ id: string; slugName: string; rawKey: string; keyId: string }>;
  logs: string[];
  /** Where the service keeps uploaded artifacts, `<dir>/<jobId>/<name>`. */
  artifactsDir: string;
  close(): Promise<void>;
}

/** The real service on a fresh database, listening on a free loopback port. */
export async function startTestService(kind: DbKind, options: ServiceOptions & { tickMs?: number; env?: Record<string, string> } = {}): Promise<TestService> {
  const database = await createTestDatabase(kind);
  const artifactsDir = await mkdtemp(join(tmpdir(), 'outpost-test-artifacts-'));
  const accountId = randomUUID();
  const apiKey = `test_${randomUUID()}`;
  const config = loadServiceConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    ARTIFACTS_DIR: artifactsDir,
    BOOTSTRAP_ACCOUNT_ID: accountId,
    BOOTSTRAP_API_KEY: apiKey,
    LOG_LEVEL: 'INFO',
    // Tests call the API far faster than users; the rate-limit test sets its own.
    RATE_LIMIT_MAX: '1000000',
    ...options.env,
  });
  config.tickMs = options.tickMs ?? 200;
  const { logger, logs } = captureLogger('test-service');
  const service = await startService(config, { ...options, logger });

  const raw = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${service.url}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: parsed as any, headers: response.headers };
  };
  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    raw(method, path, body, { authorization: `Bearer ${apiKey}`, 'x-service-account': accountId, ...headers });

  return {
    service,
    url: service.url,
    accountId,
    apiKey,
    api,
    raw,
    logs,
    artifactsDir,
    async privateLocation(slugName = `loc-${randomUUID().slice(0, 8)}`) {
      const location = await api('POST', '/v1/private-locations', { name: slugName, slugName });
      if (location.status !== 201) throw new Error(`creating a private location: ${JSON.stringify(location.body)}`);
      const key = await api('POST', `/v1/private-locations/${location.body.id}/keys`);
      return { id: location.body.id, slugName, rawKey: key.body.rawKey, keyId: key.body.id };
    },
    async close() {
      await service.close();
      await database.drop();
      await rm(artifactsDir, { recursive: true, force: true });
    },
  };
}
