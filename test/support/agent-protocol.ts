import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { HelloRequest, Job, Result } from '../../src/protocol/agent-api.js';
import { ensureAccount, ensureApiKey } from '../../src/service/store/accounts.js';
import { eventually } from './agent.js';
import type { ApiAnswer, TestService } from './service.js';

/** Error shape A: exactly {statusCode, error, message}. */
export function expectErrorA(answer: ApiAnswer, statusCode: number, error: string): void {
  expect(answer.status).toBe(statusCode);
  expect(answer.body).toEqual({ statusCode, error, message: expect.any(String) });
  expect(answer.body.message.length).toBeGreaterThan(0);
}

/** Error shape B: exactly {message, attributes}, attributes naming exactly `fields` (in any order). */
export function expectErrorB(answer: ApiAnswer, fields: readonly string[], statusCode = 400): void {
  expect(answer.status).toBe(statusCode);
  expect(answer.body).toEqual({ message: expect.any(String), attributes: expect.any(Object) });
  expect(Object.keys(answer.body.attributes).sort()).toEqual([...fields].sort());
  for (const field of fields) expect(answer.body.attributes[field]).toEqual(expect.any(String));
}

/** Shape A for a read's 400: the message names each bad field, as shape B's attributes would. */
export function expectErrorANaming(answer: ApiAnswer, fields: readonly string[], statusCode = 400): void {
  expectErrorA(answer, statusCode, statusCode === 400 ? 'Bad Request' : STATUS_NAMES[statusCode] ?? 'Error');
  for (const field of fields) expect(answer.body.message).toContain(field);
}
const STATUS_NAMES: Record<number, string> = { 404: 'Not Found', 409: 'Conflict' };

/** A second account with its own API key, written straight into the service's database. */
export async function createSecondAccount(service: TestService): Promise<{ accountId: string; apiKey: string }> {
  const accountId = randomUUID();
  const apiKey = `second_${randomUUID()}`;
  await ensureAccount(service.service.db, accountId, 'Second account');
  await ensureApiKey(service.service.db, accountId, apiKey);
  return { accountId, apiKey };
}

export type AccountCall = (method: string, path: string, body?: unknown) => Promise<ApiAnswer>;

/** A second account and a way to call the API as it (with its service key): each test its own records. */
export async function asNewAccount(service: TestService): Promise<{ account: { accountId: string; apiKey: string }; call: AccountCall }> {
  const account = await createSecondAccount(service);
  const call: AccountCall = (method, path, body) =>
    service.raw(method, path, body, { authorization: `Bearer ${account.apiKey}`, 'x-service-account': account.accountId });
  return { account, call };
}

/** Calls with exactly the body text and headers given (for bodies that are not JSON). */
export async function sendText(
  service: TestService,
  method: string,
  path: string,
  text: string,
  headers: Record<string, string>,
): Promise<ApiAnswer> {
  const response = await fetch(`${service.url}${path}`, { method, headers, body: text });
  const body = await response.text();
  let parsed: unknown = body;
  try {
    parsed = body ? JSON.parse(body) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body: parsed as any, headers: response.headers };
}

export function urlCheckBody(privateLocations: string[], overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: `check ${randomUUID().slice(0, 8)}`,
    // The agent is driven by hand: nothing ever fetches this address.
    request: { url: 'http://127.0.0.1:9/health' },
    privateLocations,
    ...overrides,
  };
}

/**
 * A URL check the scheduler leaves alone (activated: false), so the only jobs
 * at its locations are the ones a test triggers.
 */
export async function createIdleUrlCheck(
  service: TestService,
  privateLocations: string[],
  overrides: Record<string, unknown> = {},
): Promise<any> {
  const answer = await service.api('POST', '/v1/checks/url', urlCheckBody(privateLocations, { activated: false, ...overrides }));
  if (answer.status !== 201) throw new Error(`creating a check: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** Starts a session of the check through the user API; returns the session record. */
export async function triggerCheck(service: TestService, checkId: string): Promise<any> {
  const answer = await service.api('POST', '/v2/check-sessions/trigger', { target: { checkId: [checkId] } });
  if (answer.status !== 201) throw new Error(`triggering a check: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.sessions[0];
}

export async function getSession(service: TestService, sessionId: string): Promise<any> {
  const answer = await service.api('GET', `/v1/check-sessions/${sessionId}`);
  if (answer.status !== 200) throw new Error(`reading session ${sessionId}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}

export { eventually };

/** An agent driven by hand over HTTP, as a real agent would talk to the service. */
export class ManualAgent {
  constructor(
    readonly service: TestService,
    readonly key: string,
    readonly agentId: string = randomUUID(),
  ) {}

  call<T = any>(method: string, path: string, body?: unknown): Promise<ApiAnswer<T>> {
    return this.service.raw<T>(method, path, body, { authorization: `Bearer ${this.key}` });
  }

  helloBody(overrides: Partial<HelloRequest> = {}): HelloRequest {
    return {
      agentId: this.agentId,
      version: '0.0.0-test',
      hostname: `host-${this.agentId.slice(0, 8)}`,
      mode: 'full',
      checkTypes: ['URL', 'DNS', 'TCP', 'ICMP'],
      runtimes: [],
      capacity: { uptime: 10, script: 1 },
      ...overrides,
    };
  }

  hello(overrides: Partial<HelloRequest> = {}): Promise<ApiAnswer> {
    return this.call('POST', '/v1/agent/hello', this.helloBody(overrides));
  }

  /** Says hello and fails the test unless the service accepted it. */
  async connect(overrides: Partial<HelloRequest> = {}): Promise<this> {
    const answer = await this.hello(overrides);
    if (answer.status !== 200) throw new Error(`hello refused: ${answer.status} ${JSON.stringify(answer.body)}`);
    return this;
  }

  claim(waitSeconds = 0, max = 10): Promise<ApiAnswer<{ jobs: Job[] }>> {
    return this.call('POST', '/v1/agent/jobs/claim', { agentId: this.agentId, max, waitSeconds });
  }

  /** Claims until a job turns up (a claim may legitimately come back empty), within `ms`. */
  async claimOne(ms = 5000): Promise<Job> {
    return eventually(
      async () => {
        const answer = await this.claim(1, 1);
        if (answer.status !== 200) throw new Error(`claim refused: ${answer.status} ${JSON.stringify(answer.body)}`);
        return answer.body.jobs[0];
      },
      ms,
      `a job for agent ${this.agentId}`,
    );
  }

  report(job: Job, overrides: Partial<Result> = {}): Promise<ApiAnswer> {
    return this.call('POST', `/v1/agent/jobs/${job.jobId}/result`, resultFor(job, this.agentId, overrides));
  }

  extend(jobId: string): Promise<ApiAnswer> {
    return this.call('POST', `/v1/agent/jobs/${jobId}/lease`, { agentId: this.agentId });
  }

  release(jobId: string, reason = 'shutting down'): Promise<ApiAnswer> {
    return this.call('POST', `/v1/agent/jobs/${jobId}/release`, { agentId: this.agentId, reason });
  }

  heartbeat(running: string[], waiting: string[] = []): Promise<ApiAnswer<{ leaseExpiresAt: string; lost: string[]; cancelled?: string[] }>> {
    return this.call('POST', '/v1/agent/leases', { agentId: this.agentId, running, waiting });
  }

  releaseMany(jobIds: string[], reason = 'shutting down'): Promise<ApiAnswer<{ released: number }>> {
    return this.call('POST', '/v1/agent/jobs/release', { agentId: this.agentId, jobIds, reason });
  }

  goodbye(keep: string[] = [], reason = 'shutting down'): Promise<ApiAnswer<{ released: number }>> {
    return this.call('POST', '/v1/agent/goodbye', { agentId: this.agentId, keep, reason });
  }
}

/** A passing URL result for `job`; overrides make it fail, degrade, etc. */
export function resultFor(job: Job, agentId: string, overrides: Partial<Result> = {}): Result {
  const stoppedAt = new Date();
  return {
    agentId,
    jobId: job.jobId,
    checkId: job.checkId,
    checkType: job.checkType,
    runLocation: job.runLocation,
    startedAt: new Date(stoppedAt.getTime() - 42).toISOString(),
    stoppedAt: stoppedAt.toISOString(),
    responseTime: 42,
    hasErrors: false,
    hasFailures: false,
    isDegraded: false,
    aborted: false,
    isCancelled: false,
    error: null,
    timings: { dns: 1, tcp: 2, tls: null, firstByte: 30, download: 9, total: 42 },
    statusCode: 200,
    assertions: [{ source: 'STATUS_CODE', property: '', comparison: 'EQUALS', target: '200', actual: 200, passed: true }],
    details: {},
    logs: [{ time: stoppedAt.toISOString(), level: 'INFO', message: 'GET answered 200' }],
    artifacts: [],
    ...overrides,
  };
}
