import { Compile } from 'typebox/compile';
import type { Dispatcher } from 'undici';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Secret } from '../config/secret.js';
import {
  ConflictError,
  KeyRefusedError,
  ProtocolError,
  ServiceUnreachableError,
} from '../errors/index.js';
import {
  ClaimResponseSchema,
  HelloResponseSchema,
  LeasesResponseSchema,
  ReleasedSchema,
  ResultBatchAnswerSchema,
  type ClaimRequest,
  type ClaimResponse,
  type HelloRequest,
  type HelloResponse,
  type LeasesResponse,
  type Result,
  type ResultBatchAnswer,
} from '../protocol/agent-api.js';
import { EnvHttpProxyAgent, request } from './service-http.js';

const helloResponse = Compile(HelloResponseSchema);
const claimResponse = Compile(ClaimResponseSchema);
const resultBatchAnswer = Compile(ResultBatchAnswerSchema);
const leasesResponse = Compile(LeasesResponseSchema);
const released = Compile(ReleasedSchema);

/**
 * How long any call may take before the service counts as unreachable: a hung
 * service must show in readiness and logs, and must not hold up a shutdown.
 */
export const CALL_TIMEOUT_MS = 15_000;
/** A claim is a long poll: its wait, and this much on top. */
const CLAIM_SLACK_MS = 15_000;
/** An upload or download of up to 150 MB gets this long between bytes, not in all. */
const TRANSFER_IDLE_MS = 60_000;

type Validator<T> = { Check(value: unknown): value is T; Errors(value: unknown): { instancePath: string; message: string }[] };

/**
 * The agent's side of the agent protocol. Every failure becomes one of four
 * typed errors, so callers decide on codes: KEY_REFUSED, SERVICE_UNREACHABLE,
 * PROTOCOL_VIOLATION, JOB_CONFLICT.
 */
export class ServiceClient {
  readonly #dispatcher: Dispatcher;

  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: Secret,
    dispatcher?: Dispatcher,
  ) {
    // Honours HTTPS_PROXY, HTTP_PROXY and NO_PROXY; NODE_EXTRA_CA_CERTS is read by Node's TLS itself.
    this.#dispatcher = dispatcher ?? new EnvHttpProxyAgent({ keepAliveTimeout: 60_000 });
  }

  hello(body: HelloRequest, signal?: AbortSignal): Promise<HelloResponse> {
    return this.#json('POST', '/v1/agent/hello', body, helloResponse, signal);
  }

  claim(body: ClaimRequest, signal?: AbortSignal): Promise<ClaimResponse> {
    return this.#json('POST', '/v1/agent/jobs/claim', body, claimResponse, signal, body.waitSeconds * 1000 + CLAIM_SLACK_MS);
  }

  /** One heartbeat for every job held (at most MAX_JOBS_PER_CALL of each kind); answers those no longer this agent's. */
  renewLeases(agentId: string, running: readonly string[], waiting: readonly string[], signal?: AbortSignal): Promise<LeasesResponse> {
    return this.#json('POST', '/v1/agent/leases', { agentId, running, waiting }, leasesResponse, signal);
  }

  /** Up to MAX_RESULTS_PER_BATCH results in one call; each gets its own outcome. */
  postResults(results: readonly Result[], signal?: AbortSignal): Promise<ResultBatchAnswer> {
    return this.#json('POST', '/v1/agent/results', { results }, resultBatchAnswer, signal);
  }

  /** Offers jobs again at once (at most MAX_JOBS_PER_CALL); answers how many were still this agent's. */
  async release(agentId: string, jobIds: readonly string[], reason: string, signal?: AbortSignal): Promise<number> {
    const answer = await this.#json('POST', '/v1/agent/jobs/release', { agentId, jobIds, reason }, released, signal);
    return answer.released;
  }

  /** Leaves: every job of this agent's but `keep` is offered again, those of an unanswered claim included. */
  async goodbye(agentId: string, keep: readonly string[], reason: string, signal?: AbortSignal): Promise<number> {
    const answer = await this.#json('POST', '/v1/agent/goodbye', { agentId, keep, reason }, released, signal);
    return answer.released;
  }

  async uploadArtifact(
    jobId: string,
    name: string,
    body: Readable | Buffer,
    contentType: string,
    size: number,
    /** The service takes a job's artifacts only from the agent the job is leased to. */
    agentId?: string,
  ): Promise<void> {
    const query = agentId === undefined ? '' : `?agentId=${encodeURIComponent(agentId)}`;
    await this.#call(
      'PUT',
      `/v1/agent/jobs/${jobId}/artifacts/${encodeURIComponent(name)}${query}`,
      body,
      { 'content-type': contentType, 'content-length': String(size) },
      undefined,
      // Up to 150 MB on a slow line: bounded by silence, not by a total.
      undefined,
    );
  }

  /**
   * Streams a code bundle to `destination`, never holding it in memory, and
   * answers its size and SHA-256 as received; the caller decides whether they
   * are the ones the job named. More than `limitBytes` is cut off.
   */
  async downloadCodeBundle(
    bundleId: string,
    destination: string,
    limitBytes: number,
    signal?: AbortSignal,
  ): Promise<{ size: number; sha256: string }> {
    const path = `/v1/agent/code-bundles/${encodeURIComponent(bundleId)}`;
    let response: Dispatcher.ResponseData;
    try {
      response = await request(`${this.baseUrl}${path}`, {
        method: 'GET',
        dispatcher: this.#dispatcher,
        headers: { authorization: `Bearer ${this.apiKey.reveal()}` },
        signal,
        headersTimeout: CALL_TIMEOUT_MS,
        bodyTimeout: TRANSFER_IDLE_MS,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new ServiceUnreachableError(`Cannot reach the service at ${this.baseUrl}: ${describe(error)}`, { cause: error });
    }
    if (response.statusCode >= 300) {
      throwForStatus('GET', path, response.statusCode, await response.body.text().catch(() => ''));
      throw new ProtocolError(`The service answered GET ${path} with ${response.statusCode}`);
    }
    let size = 0;
    const hash = createHash('sha256');
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        size += chunk.length;
        hash.update(chunk);
        callback(size > limitBytes ? new ProtocolError(`the code bundle is larger than ${limitBytes} bytes`) : null, chunk);
      },
    });
    try {
      await pipeline(response.body, meter, createWriteStream(destination), { signal });
    } catch (error) {
      if (error instanceof ProtocolError || signal?.aborted) throw error;
      throw new ServiceUnreachableError(`Downloading ${path} failed: ${describe(error)}`, { cause: error });
    }
    return { size, sha256: hash.digest('hex') };
  }

  async close(): Promise<void> {
    await this.#dispatcher.close();
  }

  async #json<T>(
    method: 'POST',
    path: string,
    body: unknown,
    validator: Validator<T>,
    signal?: AbortSignal,
    timeoutMs = CALL_TIMEOUT_MS,
  ): Promise<T> {
    const payload = await this.#call(method, path, body, undefined, signal, timeoutMs);
    if (!validator.Check(payload)) {
      const problems = validator
        .Errors(payload)
        .slice(0, 5)
        .map((error) => `${error.instancePath || '(root)'} ${error.message}`);
      throw new ProtocolError(`The service answered ${method} ${path} with an unexpected body: ${problems.join('; ')}`);
    }
    return payload;
  }

  async #call(
    method: 'POST' | 'PUT',
    path: string,
    body: unknown,
    /** Given: `body` is raw bytes sent as they are, whatever the content type (a JSON report too). */
    rawHeaders?: Record<string, string>,
    signal?: AbortSignal,
    /** The whole call, answer read included; undefined: bounded by silence on the line instead. */
    timeoutMs: number | undefined = CALL_TIMEOUT_MS,
  ): Promise<unknown> {
    const call = boundedCall(signal, timeoutMs);
    let response: Dispatcher.ResponseData;
    let text: string;
    try {
      response = await request(`${this.baseUrl}${path}`, {
        method,
        dispatcher: this.#dispatcher,
        headers: { ...(rawHeaders ?? { 'content-type': 'application/json' }), authorization: `Bearer ${this.apiKey.reveal()}` },
        body: rawHeaders ? (body as Buffer) : JSON.stringify(body),
        signal: call.signal,
        // An upload's answer comes after its last byte: undici's own default bounds that wait.
        ...(timeoutMs === undefined ? {} : { headersTimeout: timeoutMs }),
        bodyTimeout: TRANSFER_IDLE_MS,
      });
      text = await response.body.text();
    } catch (error) {
      if (signal?.aborted) throw error;
      if (call.timedOut()) {
        throw new ServiceUnreachableError(
          `The service at ${this.baseUrl} did not answer ${method} ${path} within ${Math.round(timeoutMs / 1000)} s`,
          { cause: error },
        );
      }
      throw new ServiceUnreachableError(`Cannot reach the service at ${this.baseUrl}: ${describe(error)}`, {
        cause: error,
      });
    } finally {
      call.done();
    }
    const status = response.statusCode;
    throwForStatus(method, path, status, text);
    if (status === 204 || text === '') return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new ProtocolError(`The service answered ${method} ${path} with a body that is not JSON`);
    }
  }
}

/** Every failing status as one of the client's typed errors; nothing for a success. */
function throwForStatus(method: string, path: string, status: number, text: string): void {
  if (status === 401 || status === 403) {
    throw new KeyRefusedError(
      `The service refused the private location key (${status}): ${messageOf(text)}. ` +
        'Check API_KEY: the key may be mistyped, removed, or for another service.',
    );
  }
  if (status === 409) throw new ConflictError(messageOf(text));
  if (status >= 500 || status === 429) {
    throw new ServiceUnreachableError(`The service answered ${method} ${path} with ${status}: ${messageOf(text)}`);
  }
  if (status >= 400) {
    throw new ProtocolError(`The service rejected ${method} ${path} (${status}): ${messageOf(text)}`);
  }
}

function messageOf(text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.slice(0, 200) || 'no details';
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : '';
    return `${code ? `${code} ` : ''}${error.message}${cause}`;
  }
  return String(error);
}

/**
 * A signal of the call's own, aborted by the caller's or by the timeout. The
 * caller's long-lived signal gets one listener per call, removed when the
 * call ends, however it ends: listeners left on it pile up over an outage.
 */
function boundedCall(outer: AbortSignal | undefined, timeoutMs: number | undefined) {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener('abort', onAbort, { once: true });
  if (outer?.aborted) controller.abort(outer.reason);
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          controller.abort(new Error('timed out'));
        }, timeoutMs);
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    done: () => {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    },
  };
}
