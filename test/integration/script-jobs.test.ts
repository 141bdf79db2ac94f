/**
 * What the script side answers for jobs it must not or cannot run: each a
 * failed check with its reason, never a thrown error that would leave the
 * session waiting for a lease to expire.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArtifactUploader } from '../../src/agent/artifact-uploader.js';
import { defaultSandboxConfig } from '../../src/agent/config.js';
import { ScriptJobs } from '../../src/agent/script-jobs.js';
import { createJobScrubber } from '../../src/agent/script-scrubber.js';
import type { Job } from '../../src/protocol/agent-api.js';
import { captureLogger } from '../support/logs.js';

let directory: string;
let scripts: ScriptJobs;
const uploads: string[] = [];

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'outpost-script-jobs-'));
  const uploader = new ArtifactUploader({
    uploadArtifact: async (_jobId, name) => {
      uploads.push(name);
    },
  });
  scripts = new ScriptJobs({ ...defaultSandboxConfig(), directory, uidBase: 61300 }, 1, uploader, createJobScrubber, {});
  await scripts.start(captureLogger('script-jobs').logger);
});

afterAll(async () => {
  // Its warm sandboxes live in the directory: stopped first, or they write into it as it goes.
  await scripts.stop();
  await rm(directory, { recursive: true, force: true });
});

function job(overrides: Partial<Job>): Job {
  return {
    jobId: randomUUID(),
    checkSessionId: randomUUID(),
    checkId: randomUUID(),
    checkType: 'MULTI_STEP',
    name: 'script jobs test',
    runLocation: 'here',
    runSource: 'TRIGGER_API',
    attempt: 1,
    leaseExpiresAt: new Date(Date.now() + 300_000).toISOString(),
    timeoutSeconds: 60,
    runtimeId: '2026.04',
    environmentVariables: [],
    settings: { script: "import { test } from '@playwright/test';\ntest('t', () => {});\n", dependencies: [] },
    ...overrides,
  };
}

describe('script jobs that cannot run', () => {
  it('knows the installed runtimes', () => {
    expect([...scripts.runtimes.keys()]).toEqual(expect.arrayContaining(['2026.04', '2025.04']));
  });

  it('fails a job for a runtime this agent has not installed, naming what it has', async () => {
    const result = await scripts.run(job({ runtimeId: '2023.09' }), randomUUID(), new AbortController().signal);
    expect(result).toMatchObject({ hasErrors: true, hasFailures: true });
    expect(result.error?.code).toBe('RUNTIME_NOT_INSTALLED');
    expect(result.error?.message).toMatch(/2023\.09 is not installed on this agent \(installed: .*2026\.04/);
  });

  it('does not run a script whose secret is too large to scrub, and does not repeat the secret', async () => {
    const secret = 'x'.repeat(200 * 1024);
    const result = await scripts.run(
      job({ environmentVariables: [{ key: 'HUGE', value: secret, secret: true }] }),
      randomUUID(),
      new AbortController().signal,
    );
    expect(result.error?.code).toBe('SECRET_TOO_LARGE');
    expect(result.hasErrors).toBe(true);
    expect(JSON.stringify(result)).not.toContain('x'.repeat(1000));
    expect(uploads).toEqual([]);
  });

  it('runs a plain script on the same instance afterwards', async () => {
    const result = await scripts.run(job({}), randomUUID(), new AbortController().signal);
    expect(result.error).toBeNull();
    expect(uploads).toEqual(['trace.zip']);
  });
});
