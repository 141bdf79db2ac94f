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
  /** The job's own directory: HOME and TMPDIR, so nothing lands in shared places. */
  home: string;
  /** Directory of the runtime's node binary, first on PATH so `node` is the pinned one. */
  nodeBinDirectory: string;
  /** The agent's proxy settings, which the script's traffic needs inside the customer's network. */
  agentEnv: NodeJS.ProcessEnv;
}

const PASSED_THROUGH = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy', 'TZ', 'LANG'];

export function sandboxEnvironment(input: SandboxEnvironmentInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of PASSED_THROUGH) {
    const value = input.agentEnv[key];
    if (value !== undefined) env[key] = value;
  }
  for (const variable of input.job.environmentVariables) env[variable.key] = variable.value;
  Object.assign(env, input.serviceSecrets);
  // Set last: a check's variable may not pose as the service or a CI run.
  env.SERVICE = 'true';
  if (input.job.runSource.startsWith('TEST_')) env.CI = 'true';
  else delete env.CI;
  env.PATH = `${input.nodeBinDirectory}:/usr/local/bin:/usr/bin:/bin`;
  env.HOME = input.home;
  env.TMPDIR = input.home;
  // Playwright's own progress output would only fill the logs with terminal codes.
  env.FORCE_COLOR = '0';
  return env;
}

/** The values the scrubber must hide: every SERVICE_SECRET_* and every secret variable of the check. */
export function secretValues(job: Pick<Job, 'environmentVariables'>, secrets: Record<string, string>): string[] {
  return [
    ...Object.values(secrets),
    ...job.environmentVariables.filter((variable) => variable.secret).map((variable) => variable.value),
  ];
}
