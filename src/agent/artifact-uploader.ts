/**
 * Sends a job's artifacts (traces, screenshots, videos) to the service,
 * streamed from disk, retried when the service or the network falter. A file
 * over the service's limit is not sent at all: the result says which, how
 * big and what the limit is.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { ServiceUnreachableError } from '../errors/index.js';
import type { ArtifactRef } from '../protocol/agent-api.js';
import { MAX_ARTIFACT_BYTES } from '../protocol/agent-api.js';
import { Backoff, sleep } from './backoff.js';
import type { AgentMetrics } from './metrics.js';
import type { ServiceClient } from './service-client.js';

export interface ArtifactUploaderOptions {
  attempts?: number;
  limitBytes?: number;
  metrics?: Pick<AgentMetrics, 'artifactBytes' | 'artifactFailures'>;
  /** Who uploads: the service refuses artifacts of a job not leased to this agent. */
  agentId?: string;
}

export type ArtifactFailure = 'too_large' | 'unreadable' | 'unscrubbable' | 'upload_failed';

export class ArtifactUploader {
  readonly #attempts: number;
  readonly #limit: number;
  readonly #metrics: ArtifactUploaderOptions['metrics'];
  readonly #agentId: string | undefined;

  constructor(
    private readonly client: Pick<ServiceClient, 'uploadArtifact'>,
    options: ArtifactUploaderOptions = {},
  ) {
    this.#attempts = options.attempts ?? 4;
    this.#limit = options.limitBytes ?? MAX_ARTIFACT_BYTES;
    this.#metrics = options.metrics;
    this.#agentId = options.agentId;
  }

  /** Counts an artifact that never reached the uploader (one that could not be scrubbed, say). */
  failed(reason: ArtifactFailure): void {
    this.#metrics?.artifactFailures.inc({ reason });
  }

  /** Never throws: what went wrong is in the returned reference. */
  async upload(jobId: string, name: string, contentType: string, path: string, signal?: AbortSignal): Promise<ArtifactRef> {
    let size: number;
    try {
      size = (await stat(path)).size;
    } catch (error) {
      this.failed('unreadable');
      return { name, contentType, size: 0, uploaded: false, error: `could not read the file: ${(error as Error).message}` };
    }
    if (size > this.#limit) {
      this.failed('too_large');
      return {
        name,
        contentType,
        size,
        uploaded: false,
        error: `${name} is ${size} bytes, over the ${this.#limit}-byte artifact limit; not uploaded`,
      };
    }
    const backoff = new Backoff(500, 10_000);
    let lastError = '';
    for (let attempt = 1; attempt <= this.#attempts; attempt += 1) {
      try {
        await this.client.uploadArtifact(jobId, name, createReadStream(path), contentType, size, this.#agentId);
        this.#metrics?.artifactBytes.inc(size);
        return { name, contentType, size, uploaded: true, error: null };
      } catch (error) {
        lastError = (error as Error).message;
        // Only the transient kind is worth another try; a 4xx will not change.
        if (!(error instanceof ServiceUnreachableError) || attempt === this.#attempts || signal?.aborted) break;
        await sleep(backoff.next(), signal);
      }
    }
    this.failed('upload_failed');
    return { name, contentType, size, uploaded: false, error: `upload failed: ${lastError}` };
  }
}
