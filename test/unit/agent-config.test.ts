import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { agentEnvHelp, agentEnvSpecs, loadAgentConfig } from '../../src/agent/config.js';
import { ConfigError } from '../../src/errors/index.js';

const KEY = `pl_${'k'.repeat(36)}`;
const valid = { API_KEY: KEY, API_URL: 'https://monitoring.example.test/' };

function configError(env: Record<string, string>): ConfigError {
  try {
    loadAgentConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('agent configuration', () => {
  it('fills every default and keeps the key behind a Secret', () => {
    const config = loadAgentConfig(valid);
    expect(config).toMatchObject({
      apiUrl: 'https://monitoring.example.test',
      redisUrl: undefined,
      jobConcurrency: 1,
      uptimeConcurrency: 100,
      uptimePrefetch: 100,
      uptimeThreads: 0,
      uptimeQueue: 'memory',
      healthPort: 8081,
      logLevel: 'INFO',
      shutdownGraceMs: 280_000,
      useOsDnsResolver: false,
      mode: 'full',
      // Error events go to the service's own receiver, under its base path.
      errorReporting: { dsn: 'https://outpost@monitoring.example.test/v1/agent/error-events/1', sendsKey: true },
      housekeeping: { schedule: '*/30 * * * *', dependencyCacheMaxAgeMs: 14 * 86_400_000, summarySchedule: '*/10 * * * *' },
    });
    expect(config.apiKey.reveal()).toBe(KEY);
    expect(JSON.stringify(config)).not.toContain(KEY);
    expect(inspect(config)).not.toContain(KEY);
    expect(String(config.apiKey)).toBe("<redacted>");
  });

  it('reads every variable it documents', () => {
    const config = loadAgentConfig({
      ...valid,
      REDIS_URL: 'rediss://cache:6380/2',
      JOB_CONCURRENCY: '10',
      UPTIME_CONCURRENCY: '250',
      UPTIME_PREFETCH: '0',
      UPTIME_THREADS: '2',
      UPTIME_QUEUE: 'redis',
      AGENT_HEALTH_PORT: '9000',
      LOG_LEVEL: 'debug',
      SHUTDOWN_GRACE_SECONDS: '30',
      USE_OS_DNS_RESOLVER: 'true',
      AGENT_MODE: 'uptime',
      SENTRY_DSN: 'https://public@errors.example.test/42',
      HOUSEKEEPING_SCHEDULE: '15 3 * * *',
      DEPENDENCY_CACHE_MAX_AGE_DAYS: '0',
      STATE_SUMMARY_SCHEDULE: '*/30 * * * * *',
    });
    expect(config).toMatchObject({
      errorReporting: { dsn: 'https://public@errors.example.test/42', sendsKey: false },
      housekeeping: { schedule: '15 3 * * *', dependencyCacheMaxAgeMs: 0, summarySchedule: '*/30 * * * * *' },
      redisUrl: 'rediss://cache:6380/2',
      jobConcurrency: 10,
      uptimeConcurrency: 250,
      uptimePrefetch: 0,
      uptimeThreads: 2,
      uptimeQueue: 'redis',
      healthPort: 9000,
      logLevel: 'DEBUG',
      shutdownGraceMs: 30_000,
      useOsDnsResolver: true,
      mode: 'uptime',
    });
  });

  it('names every bad variable in one error', () => {
    const error = configError({
      API_URL: 'ftp://nope',
      REDIS_URL: 'http://cache',
      JOB_CONCURRENCY: '11',
      UPTIME_CONCURRENCY: '1.5',
      UPTIME_PREFETCH: '-1',
      UPTIME_THREADS: '17',
      UPTIME_QUEUE: 'bullmq',
      AGENT_HEALTH_PORT: 'http',
      LOG_LEVEL: 'LOUD',
      SHUTDOWN_GRACE_SECONDS: '-1',
      USE_OS_DNS_RESOLVER: 'sometimes',
      AGENT_MODE: 'browser-only',
      EXTERNAL_OBSERVABILITY: 'maybe',
      SENTRY_DSN: 'https://errors.example.test/not-a-project',
      HOUSEKEEPING_SCHEDULE: 'hourly',
      DEPENDENCY_CACHE_MAX_AGE_DAYS: 'forever',
      STATE_SUMMARY_SCHEDULE: '61 * * * *',
    });
    expect(error.code).toBe('CONFIG_INVALID');
    const lines = error.message.split('\n');
    expect(lines[0]).toBe('outpost agent: invalid configuration');
    for (const name of [
      'API_KEY',
      'API_URL',
      'REDIS_URL',
      'JOB_CONCURRENCY',
      'UPTIME_CONCURRENCY',
      'UPTIME_PREFETCH',
      'UPTIME_THREADS',
      'UPTIME_QUEUE',
      'AGENT_HEALTH_PORT',
      'LOG_LEVEL',
      'SHUTDOWN_GRACE_SECONDS',
      'USE_OS_DNS_RESOLVER',
      'AGENT_MODE',
      'EXTERNAL_OBSERVABILITY',
      'SENTRY_DSN',
      'HOUSEKEEPING_SCHEDULE',
      'DEPENDENCY_CACHE_MAX_AGE_DAYS',
      'STATE_SUMMARY_SCHEDULE',
    ]) {
      expect(lines.some((line) => line.trim().startsWith(`${name} `)), name).toBe(true);
    }
    expect(error.message).toContain('API_KEY is required and not set');
    expect(error.message).toContain('JOB_CONCURRENCY must be a whole number from 1 to 10');
    expect(error.message).toContain('LOG_LEVEL must be one of DEBUG, LOG, INFO, WARN, ERROR');
  });

  it('takes schedules of five fields, or six with seconds, and no others', () => {
    for (const schedule of ['15 3 * * MON-FRI', '*/30 * * * * *', '0 0 L * *', '@hourly']) {
      expect(loadAgentConfig({ ...valid, HOUSEKEEPING_SCHEDULE: schedule }).housekeeping.schedule).toBe(schedule);
    }
    for (const schedule of ['* * *', '0 0 0 1 1 * 2030', '*/0 * * * *', '0 25 * * *', '0 0 * * FUNDAY']) {
      expect(configError({ ...valid, STATE_SUMMARY_SCHEDULE: schedule }).message, schedule).toContain(
        'STATE_SUMMARY_SCHEDULE must be a cron expression such as "*/10 * * * *"',
      );
    }
  });

  it('reports no error events at all when EXTERNAL_OBSERVABILITY is off, whatever the DSN', () => {
    expect(loadAgentConfig({ ...valid, EXTERNAL_OBSERVABILITY: 'off' }).errorReporting).toBeUndefined();
    expect(loadAgentConfig({ ...valid, EXTERNAL_OBSERVABILITY: 'off', SENTRY_DSN: 'https://k@errors.example.test/1' }).errorReporting).toBeUndefined();
    // A service at the root of its host.
    expect(loadAgentConfig({ ...valid, API_URL: 'http://127.0.0.1:3000' }).errorReporting?.dsn).toBe('http://outpost@127.0.0.1:3000/v1/agent/error-events/1');
  });

  it('never echoes a malformed key back', () => {
    const error = configError({ ...valid, API_KEY: 'sk_live_not_a_location_key_12345' });
    expect(error.message).toContain('API_KEY must be a private location key');
    expect(error.message).not.toContain('sk_live_not_a_location_key_12345');
  });

  it('lists every variable in --help with its default', () => {
    const help = agentEnvHelp();
    for (const name of Object.keys(agentEnvSpecs)) expect(help).toContain(name);
    expect(help).toMatch(/API_KEY\s+.*\(required\)/);
    expect(help).toMatch(/AGENT_HEALTH_PORT\s+.*\(default: 8081\)/);
  });
});
