/**
 * The script kinds, one JobRunner each, chosen by check type as probes are
 * from theirs: a new kind is a runner file and a line here.
 */
import type { CheckType } from '../../protocol/enums.js';
import { ApiScriptRunner } from '../api-check/api-script-runner.js';
import type { AgentConfig } from '../config.js';
import { browserRunner } from '../browser/browser-runner.js';
import type { IsolationBackend } from '../isolation/isolation.js';
import { installedRuntimeList, MultiStepRunner, type InstalledRuntime } from '../multistep/multistep-runner.js';
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
  // Looked for once (each runtime's Node.js is run to check it): multi-step and API scripts share them.
  const runtimes = deps.runtimes ?? installedRuntimeList();
  const multiStep = new MultiStepRunner({
    sandboxRoot: deps.sandbox.directory,
    memoryLimitBytes: deps.sandbox.memoryLimitBytes,
    agentEnv: deps.agentEnv,
    chromiumPath: deps.sandbox.chromiumPath,
    isolation: deps.isolation,
    // A backend that refuses every job gets no sandboxes started ahead either.
    warm: deps.sandbox.warm && !deps.isolation.refusal,
    runtimes,
  });
  return {
    MULTI_STEP: multiStep,
    // Multi-step's runtimes and warm sandboxes, Chromium driven through `page`.
    BROWSER: browserRunner(multiStep, { chromiumPath: deps.sandbox.chromiumPath }),
    API: new ApiScriptRunner({ sandboxRoot: deps.sandbox.directory, memoryLimitBytes: deps.sandbox.memoryLimitBytes, isolation: deps.isolation, runtimes }),
    PLAYWRIGHT: new PlaywrightSuiteRunner({
      enginesDirectory: deps.sandbox.enginesDirectory,
      dependencyCache: deps.sandbox.dependencyCache,
      playwrightBrowsersPath: deps.sandbox.playwrightBrowsersPath,
      chromiumPath: deps.sandbox.chromiumPath,
      memoryLimitBytes: deps.sandbox.memoryLimitBytes,
      client: deps.client,
      agentEnv: deps.agentEnv,
    }),
  };
}
