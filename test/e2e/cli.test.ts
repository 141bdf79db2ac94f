import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentEnvSpecs } from '../../src/agent/config.js';
import { serviceEnvSpecs } from '../../src/service/config.js';

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist/cli.js');
const KEY = `pl_${'z'.repeat(40)}`;

function run(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
}

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first (npm test does)`);
});

describe('outpost CLI', () => {
  it('agent --help and service --help list every variable', () => {
    const agent = run(['agent', '--help']);
    expect(agent.status).toBe(0);
    for (const name of Object.keys(agentEnvSpecs)) expect(agent.stdout).toContain(name);
    const service = run(['service', '--help']);
    expect(service.status).toBe(0);
    for (const name of Object.keys(serviceEnvSpecs)) expect(service.stdout).toContain(name);
  });

  it('agent stops at start naming every bad variable, exit code 2', () => {
    const result = run(['agent'], { JOB_CONCURRENCY: 'lots', AGENT_HEALTH_PORT: '99999' });
    expect(result.status).toBe(2);
    for (const name of ['API_KEY', 'API_URL', 'JOB_CONCURRENCY', 'AGENT_HEALTH_PORT']) {
      expect(result.stderr).toContain(`  ${name} `);
    }
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('service stops at start on a bad variable', () => {
    const result = run(['service'], { PORT: 'eighty' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('PORT must be a whole number');
  });

  describe('without redis-server on PATH and no REDIS_URL', () => {
    let bin: string;
    beforeAll(async () => {
      // A PATH with node and nothing else.
      bin = await mkdtemp(join(tmpdir(), 'outpost-bin-'));
      await symlink(process.execPath, join(bin, 'node'));
    });
    afterAll(() => rm(bin, { recursive: true, force: true }));

    it('says exactly that and how to install it, and exits non-zero', () => {
      const result = run(['agent'], { PATH: bin, API_KEY: KEY, API_URL: 'http://127.0.0.1:9', AGENT_HEALTH_PORT: '0' });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain('no redis-server was found on PATH');
      expect(result.stderr).toContain('apt-get install redis-server');
      expect(result.stderr).toContain('REDIS_URL=redis://');
    });
  });
});

describe('outpost dev (what npm start runs)', () => {
  let child: ChildProcessWithoutNullStreams;
  let stdout = '';

  beforeAll(() => {
    child = spawn(process.execPath, [CLI, 'dev'], {
      env: { PATH: process.env.PATH ?? '', PORT: '0', AGENT_HEALTH_PORT: '0' },
    });
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  });

  afterAll(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });

  it('prints the service address, account and key, then one line per finished session', async () => {
    await until(() => /DEGRADED\s+Demo: slow page\s+at local\s+\d/.test(stdout), 30_000, () => stdout);
    expect(stdout).toMatch(/service\s+http:\/\/127\.0\.0\.1:\d+/);
    expect(stdout).toMatch(/account id\s+[0-9a-f-]{36}/);
    expect(stdout).toMatch(/API key\s+ok_\S{20,}/);
    expect(stdout).toMatch(/PASSED\s+Demo: healthy page\s+at local\s+[\d.]+ ms/);
    expect(stdout).toMatch(/FAILED\s+Demo: broken page\s+at local\s+[\d.]+ ms/);
  }, 40_000);

  it('serves the real API with the printed credentials', async () => {
    const url = /service\s+(http:\/\/\S+)/.exec(stdout)![1]!;
    const account = /account id\s+(\S+)/.exec(stdout)![1]!;
    const key = /API key\s+(\S+)/.exec(stdout)![1]!;
    const checks = await fetch(`${url}/v1/checks`, {
      headers: { authorization: `Bearer ${key}`, 'x-service-account': account },
    });
    expect(checks.status).toBe(200);
    expect(((await checks.json()) as unknown[]).length).toBe(3);
  });

  it('stops everything, children included, within 5 seconds of SIGTERM and exits 0', async () => {
    const children = childPids(child.pid!);
    expect(children.length).toBeGreaterThan(0);
    const started = Date.now();
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
    for (const pid of children) expect(alive(pid), `child ${pid} still running`).toBe(false);
  }, 10_000);
});

function childPids(pid: number): number[] {
  const result = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' });
  return result.stdout.split('\n').filter(Boolean).map(Number);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => boolean, ms: number, show: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out; output so far:\n${show()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
