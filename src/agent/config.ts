import { bool, makeValidator } from 'envalid';
import { describeEnv, httpUrl, integer, parseEnv, pattern, upperChoice } from '../config/env.js';
import { Secret } from '../config/secret.js';
import { LOG_LEVELS, type LogLevel } from '../logging.js';
import { PRIVATE_LOCATION_KEY_PATTERN } from '../protocol/agent-api.js';

const redisUrl = makeValidator<string>((raw) => {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new Error('must be a redis:// or rediss:// URL');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new Error('must be a redis:// or rediss:// URL');
  return raw;
});

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
  AGENT_HEALTH_PORT: integer(0, 65535)({ default: 8081, desc: 'Port of /-/readiness, /-/liveness, /health, /metrics' }),
  LOG_LEVEL: upperChoice(LOG_LEVELS)({ default: 'INFO', desc: 'DEBUG, LOG, INFO, WARN or ERROR' }),
  USE_OS_DNS_RESOLVER: bool({
    default: false,
    desc: 'true: TCP monitors resolve names through the OS resolver (getaddrinfo, /etc/hosts) instead of DNS',
  }),
  SHUTDOWN_GRACE_SECONDS: integer(0, 3600)({
    default: 280,
    desc: 'On SIGTERM, how long running jobs may finish before they are released',
  }),
};

export interface AgentConfig {
  apiKey: Secret;
  apiUrl: string;
  redisUrl: string | undefined;
  jobConcurrency: number;
  uptimeConcurrency: number;
  healthPort: number;
  logLevel: LogLevel;
  shutdownGraceMs: number;
  useOsDnsResolver: boolean;
}

export function loadAgentConfig(env: Record<string, string | undefined> = process.env): AgentConfig {
  const parsed = parseEnv(agentEnvSpecs, env, 'outpost agent');
  return {
    apiKey: new Secret(parsed.API_KEY),
    apiUrl: parsed.API_URL,
    redisUrl: parsed.REDIS_URL,
    jobConcurrency: parsed.JOB_CONCURRENCY,
    uptimeConcurrency: parsed.UPTIME_CONCURRENCY,
    healthPort: parsed.AGENT_HEALTH_PORT,
    logLevel: parsed.LOG_LEVEL,
    shutdownGraceMs: parsed.SHUTDOWN_GRACE_SECONDS * 1000,
    useOsDnsResolver: parsed.USE_OS_DNS_RESOLVER,
  };
}

export const agentEnvHelp = (): string => describeEnv(agentEnvSpecs);
