import type { Logger } from '../logging.js';
import type { ArtifactUploader } from './artifact-uploader.js';
import type { AgentConfig } from './config.js';
import { chooseIsolation } from './isolation/choose-isolation.js';
import { prepareSandboxRoot } from './multistep/job-directory.js';
import { serviceSecrets } from './sandbox/sandbox-environment.js';
import { scriptRunners } from './script-harness/runners.js';
import { ScriptHarness } from './script-harness/script-harness.js';
import type { ScrubberFactory } from './script-harness/scrubbers.js';
import { createJobScrubber } from './script-scrubber.js';
import type { ServiceClient } from './service-client.js';

// Loaded only by an agent that runs scripts: an uptime agent never pays for this module's tree in memory.
/** The script side: the isolation backend chosen and said, and every script kind behind the harness. */
export async function startScriptSide(
  config: AgentConfig,
  client: ServiceClient,
  uploader: ArtifactUploader,
  logger: Logger,
  options: { env: NodeJS.ProcessEnv; scrubbers?: ScrubberFactory | undefined },
): Promise<ScriptHarness> {
  const env = options.env;
  const sandbox = config.sandbox;
  const limits = {
    processes: sandbox.maxProcesses,
    openFiles: sandbox.maxOpenFiles,
    memoryBytes: sandbox.memoryLimitBytes,
    diskBytes: sandbox.diskLimitBytes,
  };
  await prepareSandboxRoot(sandbox.directory);
  const { backend, refused } = await chooseIsolation({
    mode: sandbox.isolation,
    allowUnsafe: sandbox.allowUnsafeNoIsolation,
    uidBase: sandbox.uidBase,
    uidCount: sandbox.uidCount,
    limits,
    directory: sandbox.directory,
  });
  const said = { isolation: backend.kind, ...(Object.keys(refused).length > 0 ? { refused } : {}) };
  if (backend.kind === 'none') logger.warn(said, `script isolation: ${backend.description}`);
  else logger.info(said, `script isolation: ${backend.description}`);
  const harness = new ScriptHarness({
    settings: {
      sandboxRoot: sandbox.directory,
      limits,
      serviceSecrets: serviceSecrets(env),
      agentEnv: env,
      chromiumPath: sandbox.chromiumPath,
      dependencyCache: sandbox.dependencyCache,
      ...(backend.privateTemp ? { privateTemp: backend.privateTemp } : {}),
    },
    isolation: backend,
    runners: scriptRunners({ sandbox, isolation: backend, client, agentEnv: env }),
    seats: config.jobConcurrency,
    uploader,
    scrubbers: options.scrubbers ?? createJobScrubber,
    agentKey: config.apiKey.reveal(),
  });
  await harness.start(logger);
  return harness;
}
