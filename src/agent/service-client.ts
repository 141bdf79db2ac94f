import { Compile } from 'typebox/compile';
import { EnvHttpProxyAgent, request, type Dispatcher } from 'undici';
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
  LeaseResponseSchema,
  ResultBatchAnswerSchema,
  type ClaimRequest,
  type ClaimResponse,
  type HelloRequest,
  type HelloResponse,
  type Result,
  type ResultBatchAnswer,
} from '../protocol/agent-api.js';

const helloResponse = Compile(HelloResponseSchema);
const claimResponse = Compile(ClaimResponseSchema);
const leaseResponse = Compile(LeaseResponseSchema);
const resultBatchAnswer = Compile(ResultBatchAnswerSchema);

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
    return this.#json('POST', '/v1/agent/jobs/claim', body, claimResponse, signal);
  }

  async extendLease(jobId: string, agentId: string): Promise<string> {
    const answer = await this.#json('POST', `/v1/agent/jobs/${jobId}/lease`, { agentId }, leaseResponse);
    return answer.leaseExpiresAt;
  }

  /** Up to MAX_RESULTS_PER_BATCH results in one call; each gets its own outcome. */
  postResults(results: readonly Result[]): Promise<ResultBatchAnswer> {
    return this.#json('POST', '/v1/agent/results', { results }, resultBatchAnswer);
  }

  async release(jobId: string, agentId: string, reason: string): Promise<void> {
    await this.#call('POST', `/v1/agent/jobs/${jobId}/release`, { agentId, reason });
  }

  async uploadArtifact(
    jobId: string,
    name: string,
    body: Readable | Buffer,
    contentType: string,
    size: number,
  ): Promise<void> {
    await this.#call('PUT', `/v1/agent/jobs/${jobId}/artifacts/${encodeURIComponent(name)}`, body, {
      'content-type': contentType,
      'content-length': String(size),
    });
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

  async #json<T>(method: 'POST', path: string, body: unknown, validator: Validator<T>, signal?: AbortSignal): Promise<T> {
    const payload = await this.#call(method, path, body, undefined, signal);
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
  ): Promise<unknown> {
    let response: Dispatcher.ResponseData;
    try {
      response = await request(`${this.baseUrl}${path}`, {
        method,
        dispatcher: this.#dispatcher,
        headers: { ...(rawHeaders ?? { 'content-type': 'application/json' }), authorization: `Bearer ${this.apiKey.reveal()}` },
        body: rawHeaders ? (body as Buffer) : JSON.stringify(body),
        signal,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new ServiceUnreachableError(`Cannot reach the service at ${this.baseUrl}: ${describe(error)}`, {
        cause: error,
      });
    }
    const text = await response.body.text().catch(() => '');
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
