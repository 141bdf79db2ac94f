import { bool, str } from 'envalid';
import { cidrList, describeEnv, httpUrl, integer, parseEnv, pattern, upperChoice } from '../config/env.js';
import { Secret } from '../config/secret.js';
import { ConfigError } from '../errors/index.js';
import { LOG_LEVELS, type LogLevel } from '../logging.js';
import { PRIVATE_LOCATION_KEY_PATTERN } from '../protocol/agent-api.js';
import type { Cidr } from '../net-policy/index.js';
import { DEFAULT_PER_CHECK_LIMIT } from './service-metrics.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** As the API's slugName. */
const SLUG = /^[a-z0-9][a-z0-9-]{0,49}$/;

export const serviceEnvSpecs = {
  PORT: integer(0, 65535)({ default: 3000, desc: 'HTTP port of the API (0: any free port)' }),
  HOST: str({ default: '0.0.0.0', desc: 'Address to listen on' }),
  PUBLIC_URL: httpUrl({ default: undefined, desc: 'Base address used in links (default http://localhost:PORT)' }),
  DATABASE_URL: pattern(/^postgres(ql)?:\/\//, 'a postgres:// connection string')({
    default: undefined,
    desc: 'PostgreSQL connection string; unset runs embedded PGlite',
  }),
  DATABASE_CONNECT_TIMEOUT_SECONDS: integer(0, 86_400)({
    default: 60,
    desc: 'How long to wait at start for an unreachable PostgreSQL before exiting (0: fail at once)',
  }),
  PGLITE_DIR: str({ default: undefined, desc: 'Directory for embedded PGlite data; unset keeps it in memory' }),
  ARTIFACTS_DIR: str({ default: undefined, desc: 'Directory for uploaded artifacts (default: a temporary directory)' }),
  BOOTSTRAP_ACCOUNT_ID: pattern(UUID, 'a uuid')({
    default: undefined,
    desc: 'Account id made sure to exist at start (with BOOTSTRAP_API_KEY)',
  }),
  BOOTSTRAP_API_KEY: pattern(/^\S{16,256}$/, '16 to 256 characters without spaces')({
    default: undefined,
    desc: 'API key made sure to exist for BOOTSTRAP_ACCOUNT_ID',
  }),
  BOOTSTRAP_PRIVATE_LOCATION: pattern(SLUG, 'a lower-case slug (a-z, 0-9 and -, at most 50)')({
    default: undefined,
    desc: 'Private location of BOOTSTRAP_ACCOUNT_ID made sure to exist at start (with BOOTSTRAP_PRIVATE_LOCATION_KEY)',
  }),
  BOOTSTRAP_PRIVATE_LOCATION_KEY: pattern(new RegExp(PRIVATE_LOCATION_KEY_PATTERN), 'a private location key (pl_ and at least 32 characters)')({
    default: undefined,
    desc: 'Key made sure to exist for BOOTSTRAP_PRIVATE_LOCATION: an agent started with it as API_KEY needs no setup step',
  }),
  LOG_LEVEL: upperChoice(LOG_LEVELS)({ default: 'INFO', desc: 'DEBUG, LOG, INFO, WARN or ERROR' }),
  RATE_LIMIT_MAX: integer(0, 1_000_000)({
    default: 600,
    desc: 'User API calls allowed per API key per window (0: no limit); analytics get a fifth of it',
  }),
  MAX_LOCATIONS_PER_CHECK: integer(1, 100)({
    default: 10,
    desc: 'Locations (private and data-center) one check may run at; entitlements locations.maxPerCheck',
  }),
  SMTP_URL: pattern(/^smtps?:\/\/[^\s]+$/, 'an smtp:// or smtps:// URL (smtp://user:password@host:587)')({
    default: undefined,
    desc: 'Mail server for status page subscriber e-mail; unset writes each e-mail to the log instead',
  }),
  MAIL_FROM: str({ default: 'Outpost <outpost@localhost>', desc: 'From address of the e-mail the service sends' }),
  RCA_PROVIDER_URL: httpUrl({
    default: undefined,
    desc: 'External model for root cause analyses: POST {model, input}, answered by an analysis; unset uses the built-in analyser',
  }),
  RCA_PROVIDER_MODEL: str({ default: 'default', desc: 'Model name sent to RCA_PROVIDER_URL and shown in each analysis' }),
  RCA_PROVIDER_TOKEN: str({ default: undefined, desc: 'Bearer token for RCA_PROVIDER_URL' }),
  SMS_WEBHOOK_URL: httpUrl({
    default: undefined,
    desc: 'SMS provider webhook: SMS alert channels POST {to, name, message} there; unset fails SMS alerts',
  }),
  WEBHOOK_ALLOWED_DESTINATIONS: cidrList({
    default: [],
    desc: 'Address ranges (CIDR, comma-separated) webhook and Slack alerts may reach although denied by default (loopback, link-local, metadata); the most specific range wins',
  }),
  WEBHOOK_DENIED_DESTINATIONS: cidrList({
    default: [],
    desc: 'Address ranges (CIDR, comma-separated) webhook and Slack alerts may not reach, e.g. the private ranges; the most specific range wins',
  }),
  LEASE_SECONDS: integer(10, 3600)({
    default: 30,
    desc: 'How long a job stays an agent\'s without its heartbeat (agents renew every third of it); a crashed agent\'s jobs are offered again after this',
  }),
  RATE_LIMIT_WINDOW_SECONDS: integer(1, 86_400)({ default: 60, desc: 'Length of the rate-limit window, in seconds' }),
  ARTIFACT_LINK_SECRET: pattern(/^\S{32,512}$/, '32 to 512 characters without spaces')({
    default: undefined,
    desc: 'Key that signs artifact download links; every service instance must share it. Unset: a random key made once and kept in the database',
  }),
  ARTIFACT_LINK_TTL_SECONDS: integer(60, 604_800)({
    default: 900,
    desc: 'How long a signed artifact download link works, in seconds',
  }),
  METRICS_TOKEN: pattern(/^\S{16,256}$/, '16 to 256 characters without spaces')({
    default: undefined,
    desc: 'Bearer token GET /metrics asks for; unset: /metrics is open (counts, location slugs, check ids and names)',
  }),
  METRICS_PER_CHECK: bool({
    default: true,
    desc: 'false: GET /metrics has no per-check series (status, results, response time), for accounts with many checks',
  }),
  METRICS_PER_CHECK_LIMIT: integer(1, 1_000_000)({
    default: DEFAULT_PER_CHECK_LIMIT,
    desc: 'Most check/location pairs given per-check series in GET /metrics, the oldest checks first (about 15 series each)',
  }),
};

export interface ServiceConfig {
  port: number;
  host: string;
  publicUrl: string | undefined;
  databaseUrl: string | undefined;
  /** How long start-up waits for an unreachable PostgreSQL, in seconds; 0: not at all. */
  databaseConnectTimeoutSeconds: number;
  pgliteDir: string | undefined;
  artifactsDir: string | undefined;
  bootstrap: { accountId: string; apiKey: Secret } | undefined;
  /** A private location of the bootstrap account and a key of it, made sure to exist at start. */
  bootstrapLocation: { slugName: string; key: Secret } | undefined;
  logLevel: LogLevel;
  /** Scheduler and lease sweep period; tests shorten it. */
  tickMs: number;
  /** Length of a job's lease, renewed by the agent's heartbeat. */
  leaseSeconds: number;
  /** Per API key, on the user API; undefined when switched off. */
  rateLimit: RateLimit | undefined;
  maxLocationsPerCheck: number;
  mail: MailConfig;
  /**
   * The operator's changes to where webhook and Slack alerts may connect; the
   * loopback, link-local and metadata ranges are denied unless allowed here.
   */
  webhookDestinations: { allowed: Cidr[]; denied: Cidr[] };
  /** Where SMS alerts are handed to a provider; undefined: SMS alerts fail, and say why. */
  smsWebhookUrl: string | undefined;
  /** Undefined: the built-in analyser writes root cause analyses. */
  analysisProvider: { url: string; model: string; token: Secret | undefined } | undefined;
  /** Bearer token of GET /metrics; undefined: the endpoint is open. */
  metricsToken: Secret | undefined;
  /** Check/location pairs GET /metrics gives series of their own; 0: none (METRICS_PER_CHECK=false). */
  metricsPerCheckLimit: number;
  artifactLinks: ArtifactLinkConfig;
}

export interface ArtifactLinkConfig {
  /** Undefined: the key kept in the database (made at first start) signs the links. */
  secret: Secret | undefined;
  ttlSeconds: number;
}

export interface MailConfig {
  /** Holds credentials: never logged. Undefined: e-mail goes to the log. */
  smtpUrl: Secret | undefined;
  from: string;
}

export interface RateLimit {
  max: number;
  windowSeconds: number;
}

export function loadServiceConfig(env: Record<string, string | undefined> = process.env): ServiceConfig {
  const parsed = parseEnv(serviceEnvSpecs, env, 'outpost service');
  if ((parsed.BOOTSTRAP_ACCOUNT_ID === undefined) !== (parsed.BOOTSTRAP_API_KEY === undefined)) {
    throw new ConfigError(
      'outpost service: invalid configuration\n  BOOTSTRAP_ACCOUNT_ID and BOOTSTRAP_API_KEY must be set together',
    );
  }
  if ((parsed.BOOTSTRAP_PRIVATE_LOCATION === undefined) !== (parsed.BOOTSTRAP_PRIVATE_LOCATION_KEY === undefined)) {
    throw new ConfigError(
      'outpost service: invalid configuration\n  BOOTSTRAP_PRIVATE_LOCATION and BOOTSTRAP_PRIVATE_LOCATION_KEY must be set together',
    );
  }
  if (parsed.BOOTSTRAP_PRIVATE_LOCATION !== undefined && parsed.BOOTSTRAP_ACCOUNT_ID === undefined) {
    throw new ConfigError(
      'outpost service: invalid configuration\n  BOOTSTRAP_PRIVATE_LOCATION needs BOOTSTRAP_ACCOUNT_ID and BOOTSTRAP_API_KEY: the location is made in that account',
    );
  }
  return {
    port: parsed.PORT,
    host: parsed.HOST,
    publicUrl: parsed.PUBLIC_URL,
    databaseUrl: parsed.DATABASE_URL,
    databaseConnectTimeoutSeconds: parsed.DATABASE_CONNECT_TIMEOUT_SECONDS,
    pgliteDir: parsed.PGLITE_DIR,
    artifactsDir: parsed.ARTIFACTS_DIR,
    bootstrap:
      parsed.BOOTSTRAP_ACCOUNT_ID && parsed.BOOTSTRAP_API_KEY
        ? { accountId: parsed.BOOTSTRAP_ACCOUNT_ID.toLowerCase(), apiKey: new Secret(parsed.BOOTSTRAP_API_KEY) }
        : undefined,
    bootstrapLocation:
      parsed.BOOTSTRAP_PRIVATE_LOCATION && parsed.BOOTSTRAP_PRIVATE_LOCATION_KEY
        ? { slugName: parsed.BOOTSTRAP_PRIVATE_LOCATION, key: new Secret(parsed.BOOTSTRAP_PRIVATE_LOCATION_KEY) }
        : undefined,
    logLevel: parsed.LOG_LEVEL,
    tickMs: 1000,
    leaseSeconds: parsed.LEASE_SECONDS,
    maxLocationsPerCheck: parsed.MAX_LOCATIONS_PER_CHECK,
    analysisProvider: parsed.RCA_PROVIDER_URL
      ? {
          url: parsed.RCA_PROVIDER_URL,
          model: parsed.RCA_PROVIDER_MODEL,
          token: parsed.RCA_PROVIDER_TOKEN ? new Secret(parsed.RCA_PROVIDER_TOKEN) : undefined,
        }
      : undefined,
    smsWebhookUrl: parsed.SMS_WEBHOOK_URL,
    webhookDestinations: { allowed: parsed.WEBHOOK_ALLOWED_DESTINATIONS, denied: parsed.WEBHOOK_DENIED_DESTINATIONS },
    metricsToken: parsed.METRICS_TOKEN ? new Secret(parsed.METRICS_TOKEN) : undefined,
    metricsPerCheckLimit: parsed.METRICS_PER_CHECK ? parsed.METRICS_PER_CHECK_LIMIT : 0,
    artifactLinks: {
      secret: parsed.ARTIFACT_LINK_SECRET ? new Secret(parsed.ARTIFACT_LINK_SECRET) : undefined,
      ttlSeconds: parsed.ARTIFACT_LINK_TTL_SECONDS,
    },
    mail: { smtpUrl: parsed.SMTP_URL ? new Secret(parsed.SMTP_URL) : undefined, from: parsed.MAIL_FROM },
    rateLimit:
      parsed.RATE_LIMIT_MAX === 0 ? undefined : { max: parsed.RATE_LIMIT_MAX, windowSeconds: parsed.RATE_LIMIT_WINDOW_SECONDS },
  };
}

export const serviceEnvHelp = (): string => describeEnv(serviceEnvSpecs);
