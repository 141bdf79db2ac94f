import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PIPELINE_RUNS = 1500;
const TIMED_RUNS = 300;

interface Summary {
  bench: 'uptime';
  pipelineRuns: number;
  pipelineResults: number;
  timedRuns: number;
  timedResults: number;
  steadyRuns: number;
  steadyResults: number;
  errorEvents: number;
  peer: { failed: number } | null;
}

/**
 * A small run of the uptime benchmark (bench/uptime/run.ts) on PostgreSQL,
 * so a change that slows the lane shows in the figures it prints. It checks
 * that every run came back and that the error-event phase had its event, and
 * nothing else: speed on a shared machine is noise, and belongs to the full
 * benchmark's record in docs/performance.md.
 */
describe('uptime benchmark, small', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    await database.drop();
  });

  it('records a result for every run it queued, the peer included, and prints its figures', { timeout: 180_000 }, async () => {
    const output = await new Promise<string>((done, fail) => {
      const child = spawn(process.execPath, ['--import', 'tsx', resolve(ROOT, 'bench/uptime/run.ts')], {
        cwd: ROOT,
        env: {
          ...process.env,
          DATABASE_URL: database.url,
          BENCH_BARE_REQUESTS: '1000',
          BENCH_PIPELINE_JOBS: String(PIPELINE_RUNS),
          BENCH_TIMING_JOBS: String(TIMED_RUNS),
          BENCH_REST_TIMING_JOBS: '20',
          BENCH_STEADY_SECONDS: '2',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      let errors = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
      child.on('error', fail);
      child.on('exit', (code) => (code === 0 ? done(text) : fail(new Error(`bench exited with ${code}:\n${text}\n${errors}`))));
    });
    // The service and the agent log JSON lines of their own; the figures are the bench's plain lines.
    console.log(output.split('\n').filter((line) => !line.startsWith('{')).join('\n'));
    const summary = output
      .split('\n')
      .filter((line) => line.startsWith('{"bench":"uptime"'))
      .map((line) => JSON.parse(line) as Summary)[0];
    expect(summary).toBeDefined();
    expect(summary!.pipelineResults).toBeGreaterThanOrEqual(PIPELINE_RUNS);
    expect(summary!.timedResults).toBe(TIMED_RUNS);
    expect(summary!.steadyRuns).toBe(2000);
    expect(summary!.steadyResults).toBeGreaterThanOrEqual(summary!.steadyRuns);
    expect(summary!.errorEvents).toBeGreaterThanOrEqual(1);
    if (summary!.peer) expect(summary!.peer.failed).toBe(0);
  });
});
