import { startAgent, type RunningAgent } from '../../src/agent/agent.js';
import { defaultHousekeepingConfig, defaultSandboxConfig, type AgentConfig } from '../../src/agent/config.js';
import { Secret } from '../../src/config/secret.js';
import { captureLogger } from './logs.js';

export interface TestAgent extends RunningAgent {
  logs: string[];
  health(path: string): Promise<{ status: number; body: any; text: string }>;
}

/** A real agent with its health server on a free loopback port and its log captured. */
export async function startTestAgent(
  config: Omit<Partial<AgentConfig>, 'apiKey'> & { apiKey: string; apiUrl: string },
  /** The agent's own environment: SERVICE_SECRET_* and proxies; nothing by default. */
  env: NodeJS.ProcessEnv = {},
): Promise<TestAgent> {
  const { logger, logs } = captureLogger('test-agent');
  const agent = await startAgent(
    {
      redisUrl: undefined,
      jobConcurrency: 1,
      uptimeConcurrency: 20,
      uptimeThreads: 0,
      uptimeQueue: 'memory',
      healthPort: 0,
      logLevel: 'DEBUG',
      shutdownGraceMs: 5000,
      useOsDnsResolver: false,
      sandbox: defaultSandboxConfig(),
      errorReporting: undefined,
      housekeeping: defaultHousekeepingConfig(),
      ...config,
      mode: config.mode ?? 'full',
      // As loadAgentConfig: a backlog as large as the lane unless the test says otherwise.
      uptimePrefetch: config.uptimePrefetch ?? config.uptimeConcurrency ?? 20,
      apiKey: new Secret(config.apiKey),
    },
    { logger, healthHost: '127.0.0.1', env },
  );
  return {
    ...agent,
    logs,
    async health(path: string) {
      const response = await fetch(`http://127.0.0.1:${agent.healthPort}${path}`);
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      return { status: response.status, body, text };
    },
  };
}

/** Polls `probe` until it returns a value other than undefined, or fails after `ms`. */
export async function eventually<T>(probe: () => Promise<T | undefined> | T | undefined, ms = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
