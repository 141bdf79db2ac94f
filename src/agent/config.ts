import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { bool, makeValidator, str } from 'envalid';
import { cronSchedule, describeEnv, httpUrl, integer, parseEnv, pattern, sentryDsn, upperChoice, urlOr } from '../config/env.js';
import { UPTIME_ONLY_BUILD } from '../build-info.js';
import { Secret } from '../config/secret.js';
import { LOG_LEVELS, type LogLevel } from '../logging.js';
import { PRIVATE_LOCATION_KEY_PATTERN } from '../protocol/agent-api.js';

const redisUrl = makeValidator<string>((raw) => {
  const expected = 'must be a redis:// or rediss:// URL';
  const parsed = urlOr(raw, expected);
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new Error(expected);
  return raw;
});

/** An absolute path to a directory that exists now (read by sandboxed jobs, so never relative to the agent's cwd). */
const existingDirectory = makeValidator<string>((raw) => {
  if (!isAbsolute(raw)) throw new Error('must be an absolute path');
  let directory = false;
  try {
    directory = statSync(raw).isDirectory();
  } catch {
    throw new Error('must be an existing directory');
  }
  if (!directory) throw new Error('must be a directory');
  return raw;
});

/** One source for the sandbox defaults: the variables' defaults and agents built in code (outpost dev, tests). */
export const SANDBOX_DEFAULTS = {
  directory: join(tmpdir(), 'outpost-sandboxes'),
  memoryMb: 2765,
  isolation: 'auto',
  uidBase: 61000,
  uidCount: 1000,
  maxProcesses: 512,
  maxOpenFiles: 4096,
  diskMb: 4096,
  chromiumPath: '/usr/bin/chromium',
  warm: true,
  enginesDirectory: join(tmpdir(), 'outpost-engines'),
} as const;

export function defaultSandboxConfig(): AgentConfig['sandbox'] {
  return {
    directory: SANDBOX_DEFAULTS.directory,
    memoryLimitBytes: SANDBOX_DEFAULTS.memoryMb * 1024 * 1024,
    isolation: SANDBOX_DEFAULTS.isolation,
    allowUnsafeNoIsolation: false,
    uidBase: SANDBOX_DEFAULTS.uidBase,
    uidCount: SANDBOX_DEFAULTS.uidCount,
    maxProcesses: SANDBOX_DEFAULTS.maxProcesses,
    maxOpenFiles: SANDBOX_DEFAULTS.maxOpenFiles,
    diskLimitBytes: SANDBOX_DEFAULTS.diskMb * 1024 * 1024,
    chromiumPath: SANDBOX_DEFAULTS.chromiumPath,
    warm: SANDBOX_DEFAULTS.warm,
    enginesDirectory: SANDBOX_DEFAULTS.enginesDirectory,
    dependencyCache: undefined,
  };
}

/** One source for the housekeeping defaults: the variables' and those of agents built in code. */
export const HOUSEKEEPING_DEFAULTS = {
  schedule: '*/30 * * * *',
  dependencyCacheMaxAgeDays: 14,
  summarySchedule: '*/10 * * * *',
} as const;

export function defaultHousekeepingConfig(): AgentConfig['housekeeping'] {
  return {
    schedule: HOUSEKEEPING_DEFAULTS.schedule,
    dependencyCacheMaxAgeMs: HOUSEKEEPING_DEFAULTS.dependencyCacheMaxAgeDays * 86_400_000,
    summarySchedule: HOUSEKEEPING_DEFAULTS.summarySchedule,
  };
}

export const agentEnvSpecs = {
  API_KEY: pattern(new RegExp(PRIVATE_LOCATION_KEY_PATTERN), 'a private location key (pl_ and at least 32 characters)')({
    desc: 'Private location key the agent authenticates with',
  }),
  API_URL: httpUrl({ desc: 'Base address of the monitoring service, e.g. https://monitoring.example.com' }),
  REDIS_URL: redisUrl({
    default: undefined,
    desc: 'Redis for the job queue; unset starts an embedded redis-server child',
  }),
  JOB_CONCURRENCY: integer(1, 10)({ default: 1, desc: 'Script and browser jobs run at once (1-10)' }),
  UPTIME_CONCURRENCY: integer(1, 1000)({ default: 100, desc: 'URL, TCP, DNS and ICMP probes run at once (1-1000)' }),
  UPTIME_PREFETCH: integer(0, 1000)({
    default: undefined,
    desc: 'Uptime jobs claimed ahead of a free slot, waiting in the queue (0-1000); default: UPTIME_CONCURRENCY',
  }),
  UPTIME_QUEUE: str({
    choices: ['memory', 'redis'],
    default: 'memory',
    desc: 'Where claimed uptime jobs wait: memory (in the agent; no Redis work per probe) or redis (in BullMQ, like script jobs). An uptime-mode agent with memory needs no Redis',
  }),
  UPTIME_THREADS: integer(0, 16)({
    default: 0,
    desc: 'Worker threads the uptime probes run on, apart from the queue and the service calls (0-16; 0: the main thread, which uses less memory)',
  }),
  AGENT_MODE: str({
    choices: UPTIME_ONLY_BUILD ? ['uptime'] : ['full', 'uptime'],
    default: UPTIME_ONLY_BUILD ? 'uptime' : 'full',
    desc: UPTIME_ONLY_BUILD
      ? 'uptime: URL, TCP, DNS and ICMP only; this build of the agent (the uptime image) runs no other mode'
      : 'full: every check type this machine can run; uptime: URL, TCP, DNS and ICMP only, no sandboxes (the uptime image)',
  }),
  AGENT_HEALTH_PORT: integer(0, 65535)({ default: 8081, desc: 'Port of /-/readiness, /-/liveness, /health, /metrics' }),
  LOG_LEVEL: upperChoice(LOG_LEVELS)({ default: 'INFO', desc: 'DEBUG, LOG, INFO, WARN or ERROR' }),
  USE_OS_DNS_RESOLVER: bool({
    default: false,
    desc: 'true: TCP monitors resolve names through the OS resolver (getaddrinfo, /etc/hosts) instead of DNS',
  }),
  SANDBOX_DIR: str({
    default: SANDBOX_DEFAULTS.directory,
    desc: 'Where each script job gets its own directory, removed when the job ends',
  }),
  SANDBOX_MEMORY_MB: integer(256, 65536)({
    default: SANDBOX_DEFAULTS.memoryMb,
    desc: 'Memory one script job may use, all its processes together; over it the job is stopped (MB)',
  }),
  SANDBOX_ISOLATION: str({
    choices: ['auto', 'namespaces', 'users', 'none'],
    default: SANDBOX_DEFAULTS.isolation,
    desc: 'How script jobs are isolated: auto (the strongest this machine allows), namespaces (bubblewrap), users (a fresh user id per job; root only) or none',
  }),
  SANDBOX_ALLOW_UNSAFE_NO_ISOLATION: bool({
    default: false,
    desc: 'true: run script jobs even when no isolation is available; a script can then read the agent\'s key',
  }),
  SANDBOX_UID_BASE: integer(1000, 4_000_000_000)({
    default: SANDBOX_DEFAULTS.uidBase,
    desc: 'First user id a root agent gives script jobs; each job gets a fresh one of SANDBOX_UID_COUNT from here',
  }),
  SANDBOX_UID_COUNT: integer(2, 1_000_000)({
    default: SANDBOX_DEFAULTS.uidCount,
    desc: 'How many user ids, from SANDBOX_UID_BASE, script jobs take in turn (none is reused while a process of it lives)',
  }),
  SANDBOX_MAX_PROCESSES: integer(32, 65536)({
    default: SANDBOX_DEFAULTS.maxProcesses,
    desc: 'Processes and threads one script job may have at once',
  }),
  SANDBOX_MAX_OPEN_FILES: integer(64, 1_048_576)({
    default: SANDBOX_DEFAULTS.maxOpenFiles,
    desc: 'Files one script job process may have open at once',
  }),
  SANDBOX_DISK_MB: integer(16, 1_048_576)({
    default: SANDBOX_DEFAULTS.diskMb,
    desc: 'Disk one script job may write, its directory and temporary files together; over it the job is stopped (MB)',
  }),
  SANDBOX_WARM: bool({
    default: SANDBOX_DEFAULTS.warm,
    desc: 'Keep one sandbox per job slot started ahead (Playwright loaded, never reused), so a script job starts at once',
  }),
  CHROMIUM_PATH: str({
    default: SANDBOX_DEFAULTS.chromiumPath,
    desc: 'Chromium executable that browser scripts launch',
  }),
  ENGINES_DIR: str({
    default: SANDBOX_DEFAULTS.enginesDirectory,
    desc: 'Where the Node.js and Bun engines of Playwright check suites are installed on first use and kept',
  }),
  DEPENDENCY_CACHE: str({
    default: undefined,
    desc: 'Cache for Playwright check suite dependency installs (npm, bun), kept between runs; unset: none',
  }),
  PLAYWRIGHT_BROWSERS_PATH: existingDirectory({
    default: undefined,
    desc: "Where `npx playwright install firefox webkit` put Playwright's own browsers, for the Firefox and WebKit projects of Playwright check suites; unset: those projects fail",
  }),
  SHUTDOWN_GRACE_SECONDS: integer(0, 3600)({
    default: 280,
    desc: 'On SIGTERM, how long running jobs may finish before they are released',
  }),
  EXTERNAL_OBSERVABILITY: str({
    choices: ['on', 'off'],
    default: 'on',
    desc: 'off: report no error events at all; on: error events (message, stack, version, platform, Node.js) go to SENTRY_DSN',
  }),
  SENTRY_DSN: sentryDsn({
    default: undefined,
    desc: "Where error events go (Sentry's envelope protocol); unset: the monitoring service at API_URL",
  }),
  HOUSEKEEPING_SCHEDULE: cronSchedule({
    default: HOUSEKEEPING_DEFAULTS.schedule,
    desc: 'When stale sandbox directories, unfinished engine installs and old cached dependencies are removed (cron)',
  }),
  DEPENDENCY_CACHE_MAX_AGE_DAYS: integer(0, 3650)({
    default: HOUSEKEEPING_DEFAULTS.dependencyCacheMaxAgeDays,
    desc: 'Files in DEPENDENCY_CACHE older than this are removed by housekeeping (days; 0: never)',
  }),
  AGENT_METRICS_PER_CHECK: bool({
    default: false,
    desc: 'true: /metrics also has series per check and location, named as blackbox_exporter names them (probe_success, probe_duration_seconds, …)',
  }),
  STATE_SUMMARY_SCHEDULE: cronSchedule({
    default: HOUSEKEEPING_DEFAULTS.summarySchedule,
    desc: 'When the agent logs a summary of its state: jobs run, in flight and queued, errors, memory (cron)',
  }),
};

/** Where error events go: undefined when EXTERNAL_OBSERVABILITY=off. */
export interface ErrorReportingConfig {
  dsn: string;
  /**
   * True when the DSN is the monitoring service's own receiver, which knows the
   * agent by its key; never true for a DSN the operator set, so the key goes
   * nowhere else.
   */
  sendsKey: boolean;
}

/**
 * The service's error-event receiver as a DSN: Sentry's SDK posts to
 * `<path>/api/<project>/envelope/`, so the service's base path and
 * `/v1/agent/error-events` become the DSN's path and the project is 1.
 */
export function serviceErrorDsn(apiUrl: string): string {
  const url = new URL(apiUrl);
  const base = url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//outpost@${url.host}${base}/v1/agent/error-events/1`;
}

export interface AgentConfig {
  apiKey: Secret;
  apiUrl: string;
  redisUrl: string | undefined;
  jobConcurrency: number;
  uptimeConcurrency: number;
  /** Uptime jobs claimed beyond the running ones, so the queue never runs dry while a claim is on its way. */
  uptimePrefetch: number;
  /** Worker threads the probes run on; 0: the main thread. */
  uptimeThreads: number;
  /** Where claimed uptime jobs wait; with `memory`, Redis serves script jobs only. */
  uptimeQueue: 'memory' | 'redis';
  /** `uptime`: probes only, as the uptime image runs; no sandboxes are set up or offered. */
  mode: 'full' | 'uptime';
  healthPort: number;
  logLevel: LogLevel;
  shutdownGraceMs: number;
  useOsDnsResolver: boolean;
  /** AGENT_METRICS_PER_CHECK: per-check series in /metrics; off when left out. */
  metricsPerCheck?: boolean;
  errorReporting: ErrorReportingConfig | undefined;
  housekeeping: {
    schedule: string;
    /** Dependency cache files older than this are removed; 0: never. */
    dependencyCacheMaxAgeMs: number;
    summarySchedule: string;
  };
  sandbox: {
    directory: string;
    memoryLimitBytes: number;
    /** The backend, or auto for the strongest this machine allows. */
    isolation: 'auto' | 'namespaces' | 'users' | 'none';
    /** Run scripts even with no isolation at all. */
    allowUnsafeNoIsolation: boolean;
    uidBase: number;
    uidCount: number;
    maxProcesses: number;
    maxOpenFiles: number;
    diskLimitBytes: number;
    chromiumPath: string;
    /** Start each slot's next sandbox ahead of its job. */
    warm: boolean;
    /** Engines of Playwright suites, installed on first use. */
    enginesDirectory: string;
    /** DEPENDENCY_CACHE; undefined: every suite installs from nothing. */
    dependencyCache: string | undefined;
    /** PLAYWRIGHT_BROWSERS_PATH: Playwright's own Firefox and WebKit builds for suites; undefined: none. */
    playwrightBrowsersPath?: string | undefined;
  };
}

export function loadAgentConfig(env: Record<string, string | undefined> = process.env): AgentConfig {
  const parsed = parseEnv(agentEnvSpecs, env, 'outpost agent');
  return {
    apiKey: new Secret(parsed.API_KEY),
    apiUrl: parsed.API_URL,
    redisUrl: parsed.REDIS_URL,
    jobConcurrency: parsed.JOB_CONCURRENCY,
    uptimeConcurrency: parsed.UPTIME_CONCURRENCY,
    uptimePrefetch: parsed.UPTIME_PREFETCH ?? parsed.UPTIME_CONCURRENCY,
    uptimeThreads: parsed.UPTIME_THREADS,
    uptimeQueue: parsed.UPTIME_QUEUE,
    mode: parsed.AGENT_MODE,
    healthPort: parsed.AGENT_HEALTH_PORT,
    logLevel: parsed.LOG_LEVEL,
    shutdownGraceMs: parsed.SHUTDOWN_GRACE_SECONDS * 1000,
    useOsDnsResolver: parsed.USE_OS_DNS_RESOLVER,
    metricsPerCheck: parsed.AGENT_METRICS_PER_CHECK,
    errorReporting:
      parsed.EXTERNAL_OBSERVABILITY === 'off'
        ? undefined
        : parsed.SENTRY_DSN
          ? { dsn: parsed.SENTRY_DSN, sendsKey: false }
          : { dsn: serviceErrorDsn(parsed.API_URL), sendsKey: true },
    housekeeping: {
      schedule: parsed.HOUSEKEEPING_SCHEDULE,
      dependencyCacheMaxAgeMs: parsed.DEPENDENCY_CACHE_MAX_AGE_DAYS * 86_400_000,
      summarySchedule: parsed.STATE_SUMMARY_SCHEDULE,
    },
    sandbox: {
      directory: parsed.SANDBOX_DIR,
      memoryLimitBytes: parsed.SANDBOX_MEMORY_MB * 1024 * 1024,
      isolation: parsed.SANDBOX_ISOLATION,
      allowUnsafeNoIsolation: parsed.SANDBOX_ALLOW_UNSAFE_NO_ISOLATION,
      uidBase: parsed.SANDBOX_UID_BASE,
      uidCount: parsed.SANDBOX_UID_COUNT,
      maxProcesses: parsed.SANDBOX_MAX_PROCESSES,
      maxOpenFiles: parsed.SANDBOX_MAX_OPEN_FILES,
      diskLimitBytes: parsed.SANDBOX_DISK_MB * 1024 * 1024,
      chromiumPath: parsed.CHROMIUM_PATH,
      warm: parsed.SANDBOX_WARM,
      enginesDirectory: parsed.ENGINES_DIR,
      dependencyCache: parsed.DEPENDENCY_CACHE || undefined,
      playwrightBrowsersPath: parsed.PLAYWRIGHT_BROWSERS_PATH || undefined,
    },
  };
}

export const agentEnvHelp = (): string => describeEnv(agentEnvSpecs);
