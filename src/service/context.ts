import type { Secret } from '../config/secret.js';
import type { Logger } from '../logging.js';
import type { DestinationPolicy } from '../net-policy/index.js';
import type { AgentKeys } from './agent-keys.js';
import type { ArtifactLinks } from './artifact-links.js';
import type { RateLimit } from './config.js';
import type { Database } from './db/database.js';
import type { ServiceEvents } from './events.js';
import type { ServiceMetrics } from './service-metrics.js';

/** What every route and background task of the service shares. */
export interface ServiceContext {
  db: Database;
  agentKeys: AgentKeys;
  events: ServiceEvents;
  logger: Logger;
  /** Base address for links in records, without a trailing slash. */
  baseUrl: string;
  artifactsDir: string;
  /** Signs and checks the short-lived download links of artifacts. */
  artifactLinks: ArtifactLinks;
  /** Lease handed out with each job; agents extend it for long jobs. */
  leaseSeconds: number;
  /** Longest a claim long poll may be held. */
  maxWaitSeconds: number;
  /** Bearer token of GET /metrics; undefined: the endpoint is open. */
  metricsToken: Secret | undefined;
  /** What GET /metrics shows; the scheduler and the HTTP hooks count into it. */
  metrics: ServiceMetrics;
  /** User API calls per API key; undefined: no limit. */
  rateLimit: RateLimit | undefined;
  /** Where webhook and Slack alerts may connect: channels are checked against it when saved, deliveries when sent. */
  webhookPolicy: DestinationPolicy;
  /** Private and data-center locations together, per check. */
  maxLocationsPerCheck: number;
  /** Sends what the outbox holds now, rather than at the next tick. */
  wakeOutbox(): void;
  /** Writes pending root cause analyses now, rather than at the next tick. */
  wakeAnalyses(): void;
  /** Sends pending alert deliveries now, rather than at the next tick. */
  wakeAlerts(): void;
}
