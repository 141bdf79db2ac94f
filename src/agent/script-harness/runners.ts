/**
 * The script kinds, one JobRunner each, chosen by check type as probes are
 * from theirs: a new kind is a runner file and a line here.
 */
import type { CheckType } from '../../protocol/enums.js';
import type { AgentConfig } from '../config.js';
import type { IsolationBackend } from '../isolation/isolation.js';
import { MultiStepRunner, type InstalledRuntime } from '../multistep/multistep-runner.js';
import { PlaywrightSuiteRunner } from '../playwright-suite/suite-runner.js';
import type { ServiceClient } from '../service-client.js';
import type { JobRunner } from './job-runner.js';

export interface RunnerDependencies {
  sandbox: AgentConfig['sandbox'];
  isolation: IsolationBackend;
  client: Pick<ServiceClient, 'downloadCodeBundle'>;
  agentEnv: NodeJS.ProcessEnv;
  /** The runtimes multi-step checks may use; those installed in runtimes/ when left out. */
  runtimes?: InstalledRuntime[];
}

export function scriptRunners(deps: RunnerDependencies): Partial<Record<CheckType, JobRunner>> {
  return {
    MULTI_STEP: new MultiStepRunner({
      sandboxRoot: deps.sandbox.directory,
      memoryLimitBytes: deps.sandbox.memoryLimitBytes,
      agentEnv: deps.agentEnv,
      chromiumPath: deps.sandbox.chromiumPath,
      isolation: deps.isolation,
      // A backend that refuses every job gets no sandboxes started ahead either.
      warm: deps.sandbox.warm && !deps.isolation.refusal,
      ...(deps.runtimes ? { runtimes: deps.runtimes } : {}),
    }),
    PLAYWRIGHT: new PlaywrightSuiteRunner({
      enginesDirectory: deps.sandbox.enginesDirectory,
      dependencyCache: deps.sandbox.dependencyCache,
      chromiumPath: deps.sandbox.chromiumPath,
      memoryLimitBytes: deps.sandbox.memoryLimitBytes,
      client: deps.client,
      agentEnv: deps.agentEnv,
    }),
  };
}
