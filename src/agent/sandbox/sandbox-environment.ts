/**
 * The whole environment a script sees, built from nothing: never a copy of
 * the agent's, which holds its API key and Redis address.
 */
import type { Job } from '../../protocol/agent-api.js';

export const SERVICE_SECRET_PREFIX = 'SERVICE_SECRET_';

/** The operator's SERVICE_SECRET_* variables, set on the agent itself, passed under the same names. */
export function serviceSecrets(agentEnv: NodeJS.ProcessEnv): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const [key, value] of Object.entries(agentEnv)) {
    if (key.startsWith(SERVICE_SECRET_PREFIX) && value !== undefined) secrets[key] = value;
  }
  return secrets;
}

export interface SandboxEnvironmentInput {
  job: Pick<Job, 'environmentVariables' | 'runSource'>;
  serviceSecrets: Record<string, string>;
  /** The job's own directory: HOME, and TMPDIR unless `temp` says otherwise, so nothing lands in shared places. */
  home: string;
  /**
   * TMPDIR when the job has a private /tmp (namespaces): short paths there keep
   * Chromium's socket paths within the kernel's 107 bytes however deep the
   * sandbox directory is.
   */
  temp?: string;
  /** Directory of the runtime's node binary, first on PATH so `node` is the pinned one. */
  nodeBinDirectory: string;
  /** The agent's proxy settings, which the script's traffic needs inside the customer's network. */
  agentEnv: NodeJS.ProcessEnv;
}

const PROXIES = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy'];
const LOCALE = ['TZ', 'LANG'];

/**
 * What a sandbox process starts with before its job is known (a warm
 * sandbox): nothing secret, nothing of the check's. Proxy settings may carry
 * credentials, so they wait for the job too.
 */
export function startEnvironment(input: Pick<SandboxEnvironmentInput, 'home' | 'temp' | 'nodeBinDirectory' | 'agentEnv'>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of LOCALE) {
    const value = input.agentEnv[key];
    if (value !== undefined) env[key] = value;
  }
  return Object.assign(env, fixedEnvironment(input));
}

/** Set last, whatever the check's variables say. */
function fixedEnvironment(input: Pick<SandboxEnvironmentInput, 'home' | 'temp' | 'nodeBinDirectory'>): Record<string, string> {
  return {
    PATH: `${input.nodeBinDirectory}:/usr/local/bin:/usr/bin:/bin`,
    HOME: input.home,
    TMPDIR: input.temp ?? input.home,
    // Playwright's own progress output would only fill the logs with terminal codes.
    FORCE_COLOR: '0',
  };
}

export function sandboxEnvironment(input: SandboxEnvironmentInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of [...PROXIES, ...LOCALE]) {
    const value = input.agentEnv[key];
    if (value !== undefined) env[key] = value;
  }
  for (const variable of input.job.environmentVariables) env[variable.key] = variable.value;
  Object.assign(env, input.serviceSecrets);
  // Set last: a check's variable may not pose as the service or a CI run.
  env.SERVICE = 'true';
  if (input.job.runSource.startsWith('TEST_')) env.CI = 'true';
  else delete env.CI;
  return Object.assign(env, fixedEnvironment(input));
}

/**
 * Variables Node.js, its libraries or Playwright read while a process starts
 * or a module loads. A process started before the job cannot honour the
 * job's values of them, so a job that sets one differently runs cold.
 */
const READ_AT_START = /^(NODE_|UV_|OPENSSL_|SSL_CERT_|DEBUG|PW|PLAYWRIGHT|CI$|FORCE_COLOR$|NO_COLOR$|TZ$|LANG$|LC_)/;

export function startsWarm(jobEnv: Record<string, string>, startEnv: Record<string, string>): boolean {
  const keys = new Set([...Object.keys(jobEnv), ...Object.keys(startEnv)]);
  return [...keys].every((key) => !READ_AT_START.test(key) || jobEnv[key] === startEnv[key]);
}

/** The values the scrubber must hide: every SERVICE_SECRET_* and every secret variable of the check. */
export function secretValues(job: Pick<Job, 'environmentVariables'>, secrets: Record<string, string>): string[] {
  return [
    ...Object.values(secrets),
    ...job.environmentVariables.filter((variable) => variable.secret).map((variable) => variable.value),
  ];
}
