/**
 * Sentry's client for the agent's error events, built from `@sentry/core`:
 * its server client, stack parser, envelopes, rate limits and buffering,
 * with the envelopes posted through undici like the rest of the agent's
 * traffic to its service (the same proxy settings, HTTPS_PROXY, HTTP_PROXY
 * and NO_PROXY).
 *
 * Why not `@sentry/node`: its entry point loads OpenTelemetry and every
 * integration it ships, which the agent turns off. An agent that reported one
 * error kept some 35 MB more resident for the rest of its life; with this
 * client, about 2 MB. Measured in docs/performance.md.
 *
 * Loaded by the reporter at its first event, never at start.
 */
import { gzipSync } from 'node:zlib';
import {
  applySdkMetadata,
  createStackParser,
  createTransport,
  dedupeIntegration,
  type BaseTransportOptions,
  type ErrorEvent,
  type Transport,
  type TransportMakeRequestResponse,
} from '@sentry/core';
import { ServerRuntimeClient, nodeStackLineParser, type ServerRuntimeClientOptions } from '@sentry/core/server';
import { EnvHttpProxyAgent, request } from '../service-http.js';

export interface SentryClientOptions {
  dsn: string;
  release: string;
  /** Headers on every envelope request (the agent's key, for its own service only). */
  headers: Record<string, string>;
  /** Sentry's last step before an event is put in an envelope: the allowlist. */
  beforeSend(event: ErrorEvent): ErrorEvent | null;
}

/** What the reporter needs of a client. */
export interface SentryClient {
  captureException(error: unknown): void;
  captureMessage(message: string): void;
  /** Sends what is pending, waiting at most `timeoutMs`, and closes the client's connections. */
  close(timeoutMs: number): Promise<void>;
}

/** Sentry's own transport compresses bodies above this size; the receivers take both. */
const GZIP_ABOVE_BYTES = 32 * 1024;
/** An envelope still unanswered after this long is given up (it counts as dropped). */
const REQUEST_TIMEOUT_MS = 30_000;

export function createSentryClient(options: SentryClientOptions): SentryClient {
  const dispatcher = new EnvHttpProxyAgent({ keepAliveTimeout: 10_000 });
  const clientOptions: ServerRuntimeClientOptions = {
    dsn: options.dsn,
    release: options.release,
    platform: 'node',
    runtime: { name: 'node', version: process.version },
    transport: (transportOptions) => undiciTransport(transportOptions, dispatcher),
    transportOptions: { headers: options.headers },
    stackParser: createStackParser(nodeStackLineParser()),
    // No integration gathers anything: no breadcrumbs, no request data, no context lines.
    integrations: [dedupeIntegration()],
    sendClientReports: false,
    maxBreadcrumbs: 0,
    beforeSend: (event) => options.beforeSend(event),
  };
  applySdkMetadata(clientOptions, 'core');
  const client = new ServerRuntimeClient(clientOptions);
  client.init();
  return {
    captureException: (error) => client.captureException(error),
    captureMessage: (message) => client.captureMessage(message, 'error'),
    async close(timeoutMs) {
      await client.close(timeoutMs);
      await dispatcher.destroy();
    },
  };
}

function undiciTransport(options: BaseTransportOptions, dispatcher: EnvHttpProxyAgent): Transport {
  return createTransport(options, async ({ body }): Promise<TransportMakeRequestResponse> => {
    const headers: Record<string, string> = { ...options.headers };
    let payload = body;
    if (body.length > GZIP_ABOVE_BYTES) {
      headers['content-encoding'] = 'gzip';
      payload = gzipSync(body);
    }
    const response = await request(options.url, {
      dispatcher,
      method: 'POST',
      headers,
      body: payload,
      headersTimeout: REQUEST_TIMEOUT_MS,
      bodyTimeout: REQUEST_TIMEOUT_MS,
    });
    await response.body.dump();
    return {
      statusCode: response.statusCode,
      headers: {
        'retry-after': firstHeader(response.headers['retry-after']),
        'x-sentry-rate-limits': firstHeader(response.headers['x-sentry-rate-limits']),
      },
    };
  });
}

function firstHeader(value: string | string[] | undefined): string | null {
  return (Array.isArray(value) ? value[0] : value) ?? null;
}
