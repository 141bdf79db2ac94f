/**
 * The agent's script side as tests use it: a real isolation backend, the
 * real runners and scrubber, and an uploader whose "service" records what
 * reached it (name, content type, bytes).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { ArtifactUploader } from '../../src/agent/artifact-uploader.js';
import { defaultSandboxConfig, type AgentConfig } from '../../src/agent/config.js';
import { chooseIsolation } from '../../src/agent/isolation/choose-isolation.js';
import type { IsolationBackend, IsolationKind, JobLimits } from '../../src/agent/isolation/isolation.js';
import { prepareSandboxRoot } from '../../src/agent/multistep/job-directory.js';
import type { MultiStepRunner } from '../../src/agent/multistep/multistep-runner.js';
import type { EngineCache } from '../../src/agent/playwright-suite/engines.js';
import { PlaywrightSuiteRunner } from '../../src/agent/playwright-suite/suite-runner.js';
import { allProcesses, type ProcessInfo } from '../../src/agent/sandbox/process-tree.js';
import { scriptRunners } from '../../src/agent/script-harness/runners.js';
import { ScriptHarness } from '../../src/agent/script-harness/script-harness.js';
import type { ScrubberFactory } from '../../src/agent/script-harness/scrubbers.js';
import { createJobScrubber } from '../../src/agent/script-scrubber.js';
import type { ServiceClient } from '../../src/agent/service-client.js';
import type { Job, Result } from '../../src/protocol/agent-api.js';
import { captureLogger } from './logs.js';

export const AGENT_KEY = 'pl_test_agent_key_0123456789abcdefghijklmnop';

export interface UploadedArtifact {
  jobId: string;
  name: string;
  contentType: string;
  bytes: Buffer;
}

export interface TestHarnessOptions {
  isolation: IsolationKind;
  allowUnsafe?: boolean;
  sandboxRoot: string;
  uidBase: number;
  uidCount?: number;
  memoryLimitBytes?: number;
  diskLimitBytes?: number;
  maxProcesses?: number;
  warm?: boolean;
  concurrency?: number;
  serviceSecrets?: Record<string, string>;
  chromiumPath?: string;
  scrubbers?: ScrubberFactory;
  client?: Pick<ServiceClient, 'downloadCodeBundle'>;
  sandbox?: Partial<AgentConfig['sandbox']>;
  /** What the agent's own environment passes on to jobs (a CA bundle, a registry mirror); none when left out. */
  agentEnv?: NodeJS.ProcessEnv;
  /** An engine cache shared between harnesses (engines are installed once per machine); the runner's own when left out. */
  engines?: Pick<EngineCache, 'resolve'>;
}

export interface TestHarness {
  harness: ScriptHarness;
  backend: IsolationBackend;
  multiStep: MultiStepRunner;
  uploads: UploadedArtifact[];
  logs: string[];
  run(job: Job, signal?: AbortSignal): Promise<Result>;
  stop(): Promise<void>;
}

/** Whether this machine can run `kind` at all, and why not. */
export async function isolationProblem(kind: IsolationKind, sandboxRoot: string): Promise<string | undefined> {
  await prepareSandboxRoot(sandboxRoot);
  try {
    const { backend } = await chooseIsolation({ mode: kind, allowUnsafe: true, uidBase: 64000, uidCount: 4, limits: LIMITS, directory: sandboxRoot });
    return backend.kind === kind ? undefined : `${kind} is not available`;
  } catch (error) {
    return (error as Error).message;
  }
}

const LIMITS: JobLimits = { processes: 512, openFiles: 4096, memoryBytes: 1024 ** 3, diskBytes: 1024 ** 3 };

export async function startTestHarness(options: TestHarnessOptions): Promise<TestHarness> {
  await prepareSandboxRoot(options.sandboxRoot);
  const limits: JobLimits = {
    processes: options.maxProcesses ?? 512,
    openFiles: 4096,
    memoryBytes: options.memoryLimitBytes ?? 1024 ** 3,
    diskBytes: options.diskLimitBytes ?? 1024 ** 3,
  };
  const { backend } = await chooseIsolation({
    mode: options.isolation,
    allowUnsafe: options.allowUnsafe ?? false,
    uidBase: options.uidBase,
    uidCount: options.uidCount ?? 20,
    limits,
    directory: options.sandboxRoot,
  });
  const uploads: UploadedArtifact[] = [];
  const uploader = new ArtifactUploader({
    uploadArtifact: async (jobId: string, name: string, body: Readable, contentType: string) => {
      const chunks: Buffer[] = [];
      for await (const chunk of body) chunks.push(chunk as Buffer);
      uploads.push({ jobId, name, contentType, bytes: Buffer.concat(chunks) });
    },
  });
  const sandbox: AgentConfig['sandbox'] = {
    ...defaultSandboxConfig(),
    directory: options.sandboxRoot,
    memoryLimitBytes: limits.memoryBytes,
    diskLimitBytes: limits.diskBytes,
    warm: options.warm ?? false,
    chromiumPath: options.chromiumPath ?? '/nonexistent/chromium',
    ...options.sandbox,
  };
  const agentEnv = options.agentEnv ?? {};
  const client = options.client ?? { downloadCodeBundle: () => Promise.reject(new Error('no service in this test')) };
  const runners = scriptRunners({ sandbox, isolation: backend, client, agentEnv });
  if (options.engines) {
    // As runners.ts builds it, with the engine cache given.
    runners.PLAYWRIGHT = new PlaywrightSuiteRunner({
      enginesDirectory: sandbox.enginesDirectory,
      dependencyCache: sandbox.dependencyCache,
      chromiumPath: sandbox.chromiumPath,
      memoryLimitBytes: sandbox.memoryLimitBytes,
      client,
      agentEnv,
      engines: options.engines,
    });
  }
  const harness = new ScriptHarness({
    settings: {
      sandboxRoot: options.sandboxRoot,
      limits,
      serviceSecrets: options.serviceSecrets ?? {},
      agentEnv,
      chromiumPath: sandbox.chromiumPath,
      dependencyCache: sandbox.dependencyCache,
      ...(backend.privateTemp ? { privateTemp: backend.privateTemp } : {}),
    },
    isolation: backend,
    runners,
    seats: options.concurrency ?? 1,
    uploader,
    scrubbers: options.scrubbers ?? createJobScrubber,
    agentKey: AGENT_KEY,
  });
  const { logger, logs } = captureLogger('script-harness');
  await harness.start(logger);
  return {
    harness,
    backend,
    multiStep: runners.MULTI_STEP as MultiStepRunner,
    uploads,
    logs,
    run: (job, signal = new AbortController().signal) => harness.run(job, 'test-agent', signal),
    stop: () => harness.stop(),
  };
}

/**
 * Every live process whose user id is in [base, base + count): what is left
 * of the jobs that had those ids. One pass over the process table, not one a uid.
 */
export async function processesOfUids(base: number, count: number): Promise<ProcessInfo[]> {
  return (await allProcesses()).filter((info) => info.uid >= base && info.uid < base + count);
}

/**
 * Whether a process sits in a directory a job has used (one with the job's `check/` in it). The directory is
 * read through /proc's link, as a sandbox's cwd may be a path only its own mount namespace knows; bwrap's
 * supervisor stays in the host's root, which is no job's directory whatever the host keeps there.
 */
export async function sitsInUsedJobDirectory(pid: number): Promise<boolean> {
  const [cwd, hostRoot] = await Promise.all([stat(`/proc/${pid}/cwd`).catch(() => undefined), stat('/')]);
  if (cwd === undefined || (cwd.dev === hostRoot.dev && cwd.ino === hostRoot.ino)) return false;
  return (await readdir(`/proc/${pid}/cwd`).catch((): string[] => [])).includes('check');
}

export function fixtureScript(name: string): Promise<string> {
  return readFile(new URL(`../fixtures/scripts/${name}`, import.meta.url), 'utf8');
}
