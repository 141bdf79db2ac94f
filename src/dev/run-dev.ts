import { randomUUID } from 'node:crypto';
import { startAgent, type RunningAgent } from '../agent/agent.js';
import { defaultHousekeepingConfig, defaultSandboxConfig, serviceErrorDsn, type AgentConfig } from '../agent/config.js';
import { createAgentLogging } from '../agent/error-reporting/agent-logging.js';
import { Secret } from '../config/secret.js';
import { createLogger, type LogLevel } from '../logging.js';
import { generateKey } from '../service/keys.js';
import { loadServiceConfig } from '../service/config.js';
import { startService, type RunningService } from '../service/service.js';
import { sessionRecord } from '../service/store/sessions.js';
import { ApiClient } from './api-client.js';
import { startDemoTarget, type DemoTarget } from './demo-target.js';
import { portOrAny } from './free-port.js';

export interface DevEnvironment {
  service: RunningService;
  agent: RunningAgent;
  target: DemoTarget;
  accountId: string;
  apiKey: string;
  stop(): Promise<void>;
}

const DEMO_CHECKS = [
  { name: 'Demo: healthy page', path: '/' },
  { name: 'Demo: slow page', path: '/slow' },
  { name: 'Demo: broken page', path: '/broken' },
];

/**
 * Everything on one machine with embedded defaults: the service on PGlite, an
 * agent with its own redis-server, a local site, and URL monitors watching it.
 */
export async function runDev(
  env: Record<string, string | undefined>,
  print: (line: string) => void,
): Promise<DevEnvironment> {
  const logLevel = (env.LOG_LEVEL?.toUpperCase() ?? 'WARN') as LogLevel;
  const accountId = env.BOOTSTRAP_ACCOUNT_ID ?? randomUUID();
  const apiKey = env.BOOTSTRAP_API_KEY ?? generateKey('ok_');
  const port = await portOrAny(Number(env.PORT ?? 3000), '127.0.0.1');
  const config = loadServiceConfig({
    ...env,
    PORT: String(port),
    HOST: env.HOST ?? '127.0.0.1',
    LOG_LEVEL: logLevel,
    BOOTSTRAP_ACCOUNT_ID: accountId,
    BOOTSTRAP_API_KEY: apiKey,
  });
  const service = await startService(config, { logger: createLogger({ level: logLevel, name: 'service' }) });
  const stack: (() => Promise<void>)[] = [() => service.close()];
  const unwind = async () => {
    for (const stop of stack.reverse()) await stop().catch(() => undefined);
  };
  try {
    const target = await startDemoTarget();
    stack.push(() => target.close());

    const api = new ApiClient(service.url, accountId, apiKey);
    const location = await api.call<{ id: string; slugName: string }>('POST', '/v1/private-locations', {
      name: 'Local',
      slugName: 'local',
    });
    const key = await api.call<{ rawKey: string }>('POST', `/v1/private-locations/${location.id}/keys`);

    service.events.on('sessionCompleted', (row) => {
      sessionRecord(service.db, row, service.url)
        .then((record) => {
          for (const result of record.results) {
            const time = new Date().toISOString().slice(11, 19);
            const responseTime = typeof result.responseTime === 'number' ? `${result.responseTime.toFixed(1)} ms` : '-';
            print(
              `${time}  ${record.status.padEnd(9)} ${record.name.padEnd(20)} at ${result.runLocation}  ${responseTime}`,
            );
          }
        })
        .catch(() => undefined);
    });

    const healthPort = await portOrAny(Number(env.AGENT_HEALTH_PORT ?? 8081), '127.0.0.1');
    const agentConfig: AgentConfig = {
      apiKey: new Secret(key.rawKey),
      apiUrl: service.url,
      redisUrl: env.REDIS_URL,
      jobConcurrency: 1,
      uptimeConcurrency: 100,
      uptimePrefetch: 100,
      uptimeThreads: 0,
      uptimeQueue: 'memory',
      mode: 'full',
      healthPort,
      logLevel,
      // Ctrl-C must bring everything down within a few seconds.
      shutdownGraceMs: 2000,
      useOsDnsResolver: false,
      errorReporting: env.EXTERNAL_OBSERVABILITY === 'off' ? undefined : { dsn: serviceErrorDsn(service.url), sendsKey: true },
      housekeeping: defaultHousekeepingConfig(),
      sandbox: defaultSandboxConfig(),
    };
    const logging = createAgentLogging(agentConfig, env, { name: 'agent' });
    const agent = await startAgent(agentConfig, { logger: logging.logger, errorReporter: logging.errors, healthHost: '127.0.0.1' });
    stack.push(() => agent.stop());

    for (const check of DEMO_CHECKS) {
      await api.call('POST', '/v1/checks/url', {
        name: check.name,
        frequency: 1,
        privateLocations: [location.slugName],
        request: { url: `${target.url}${check.path}`, assertions: [{ source: 'STATUS_CODE', comparison: 'EQUALS', target: '200' }] },
      });
    }

    print(`Outpost is running: service, agent and a demo site, all on this machine.`);
    print(`  dashboard      ${service.url}/  (log in with the account and key printed below)`);
    print(`  service        ${service.url}  (API description: ${service.url}/openapi.json)`);
    print(`  account id     ${accountId}`);
    print(`  API key        ${apiKey}`);
    print(`  agent health   http://127.0.0.1:${agent.healthPort}/-/readiness`);
    print(`  demo site      ${target.url}`);
    print(`Three URL monitors run every minute; each finished check session prints a line. Ctrl-C stops everything.`);
    print(`Try: curl -H "Authorization: Bearer ${apiKey}" -H "x-service-account: ${accountId}" ${service.url}/v1/checks`);

    return { service, agent, target, accountId, apiKey, stop: unwind };
  } catch (error) {
    await unwind();
    throw error;
  }
}
