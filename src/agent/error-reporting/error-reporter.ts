/**
 * Error events out of the agent, in Sentry's envelope protocol: to the
 * monitoring service's own receiver by default, or to SENTRY_DSN. Every event
 * passes the allowlist (event-allowlist.ts) in `beforeSend`, the SDK's last
 * step before an event is put in an envelope.
 *
 * The SDK is loaded at the first event, not at start: an agent that never
 * errs should not pay for its code.
 */
import type { ErrorEvent } from '@sentry/core';
import type { Secret } from '../../config/secret.js';
import { Scrubber } from '../../scrub/index.js';
import { VERSION } from '../../version.js';
import type { ErrorReportingConfig } from '../config.js';
import { allowlistEvent } from './event-allowlist.js';
import type { SentryClient } from './sentry-client.js';

export interface ErrorReporter {
  /** Reports an error-level event; never throws, never waits. */
  capture(message: string, error?: Error): void;
  /** Sends what is pending, waiting at most `timeoutMs`; the reporter takes nothing afterwards. */
  close(timeoutMs: number): Promise<void>;
}

/** At most this many events per hour: a failure that repeats must not flood the receiver. */
const EVENTS_PER_HOUR = 60;

export const noErrorReporter: ErrorReporter = {
  capture() {},
  async close() {},
};

export interface ErrorReporterOptions {
  /** The agent's key: sent only to the service's own receiver, and scrubbed from every event. */
  apiKey: Secret;
  /** SERVICE_SECRET_* values, scrubbed from every event. */
  secrets: string[];
  /** Told, once, when the SDK cannot be loaded or set up: reporting is then off. */
  onUnavailable?: (reason: string) => void;
}

export function createErrorReporter(config: ErrorReportingConfig | undefined, options: ErrorReporterOptions): ErrorReporter {
  return config ? new SentryErrorReporter(config, options) : noErrorReporter;
}

class SentryErrorReporter implements ErrorReporter {
  #client: Promise<SentryClient | undefined> | undefined;
  #closed = false;
  #sentThisHour = 0;
  #hourStarted = Date.now();
  readonly #scrubSecrets: (text: string) => string;

  constructor(
    private readonly config: ErrorReportingConfig,
    private readonly options: ErrorReporterOptions,
  ) {
    let scrubber: Scrubber | undefined;
    try {
      scrubber = new Scrubber([options.apiKey.reveal(), ...options.secrets]);
    } catch {
      // A secret too large to scrub for: no text of any event can be vouched for.
    }
    this.#scrubSecrets = scrubber ? (text) => scrubber.scrubText(text) : () => '<withheld: a secret is too large to scrub>';
  }

  capture(message: string, error?: Error): void {
    if (this.#closed || !this.#withinBudget()) return;
    this.#client ??= this.#load();
    void this.#client.then((client) => {
      if (!client) return;
      if (error) client.captureException(error);
      else client.captureMessage(message);
    });
  }

  async close(timeoutMs: number): Promise<void> {
    this.#closed = true;
    const client = await this.#client;
    await client?.close(timeoutMs);
  }

  #withinBudget(): boolean {
    if (Date.now() - this.#hourStarted > 3_600_000) {
      this.#hourStarted = Date.now();
      this.#sentThisHour = 0;
    }
    this.#sentThisHour += 1;
    return this.#sentThisHour <= EVENTS_PER_HOUR;
  }

  async #load(): Promise<SentryClient | undefined> {
    try {
      const { createSentryClient } = await import('./sentry-client.js');
      return createSentryClient({
        dsn: this.config.dsn,
        release: VERSION,
        headers: this.config.sendsKey ? { authorization: `Bearer ${this.options.apiKey.reveal()}` } : {},
        beforeSend: (event: ErrorEvent) => allowlistEvent(event, { release: VERSION, scrubSecrets: this.#scrubSecrets }),
      });
    } catch (error) {
      // Reporting errors must never become one; the operator is told it is off.
      this.options.onUnavailable?.(error instanceof Error ? error.message : String(error));
      return undefined;
    }
  }
}
