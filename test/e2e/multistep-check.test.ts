/**
 * A multi-step check the whole way: created through the API, run by a real
 * agent in a sandbox of runtime 2026.04 against a loopback site that echoes
 * what it is sent, its trace scrubbed and uploaded. The stored trace is then
 * opened and searched for every spelling of every secret.
 */
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSandboxConfig } from '../../src/agent/config.js';
import { listProcesses } from '../../src/agent/sandbox/process-tree.js';
import { SCRUB_MARKER } from '../../src/scrub/index.js';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { DB_KINDS } from '../support/databases.js';
import { secretSpellings, spellingsFound } from '../support/secret-spellings.js';
import { startTestService, type TestService } from '../support/service.js';
import { startTarget, type Target } from '../support/target.js';
import { readZip } from '../support/zip.js';
import { sitsInUsedJobDirectory } from '../support/script-harness.js';
import { runToFinal } from '../support/sessions.js';

const CHECK_SECRET = 's3cr3t:"quoted" & ü+plus';
const OPERATOR_SECRET = 'db-Pa55-x9q7-operator';

const SCRIPT = `
import { test, expect } from '@playwright/test';

test('sends its secrets every way a script might', async ({ request }) => {
  const secret = process.env.LOGIN_PASSWORD;
  const operator = process.env.SERVICE_SECRET_DB_PASSWORD;
  await test.step('log in as ' + secret, async () => {
    const response = await request.post(process.env.TARGET_URL + '/echo?token=' + encodeURIComponent(secret), {
      headers: {
        authorization: 'Basic ' + Buffer.from('user:' + secret).toString('base64'),
        'x-signature': Buffer.from(operator).toString('hex'),
        'x-db': operator,
        // Not declared secret: on runtime 2025.04 and later such headers are hidden from traces anyway.
        'x-api-key': 'undeclared-api-key-5521',
        cookie: 'session=undeclared-cookie-7730',
      },
      data: { password: secret, nested: { again: secret } },
    });
    expect(response.status()).toBe(200);
  });
  await test.step('read it back', async () => {
    console.log('logged in with', secret, 'and', operator);
    expect(process.env.CI).toBeUndefined();
    expect(process.env.SERVICE).toBe('true');
  });
});
`;

describe('multi-step checks end to end', () => {
  let service: TestService;
  let agent: TestAgent;
  let target: Target;
  let slug: string;
  let sandboxDirectory: string;

  beforeAll(async () => {
    sandboxDirectory = await mkdtemp(join(tmpdir(), 'outpost-e2e-sandboxes-'));
    target = await startTarget({
      // Echoes the request, so the secrets come back in the response bodies the trace records too.
      '/echo': (request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ url: request.url, headers: request.headers, body: Buffer.concat(chunks).toString() }));
        });
      },
    });
    service = await startTestService(DB_KINDS[0]!);
    const location = await service.privateLocation();
    slug = location.slugName;
    agent = await startTestAgent(
      // Sandbox users of this file's own, so no other test's clean-up can touch its processes.
      { apiKey: location.rawKey, apiUrl: service.url, sandbox: { ...defaultSandboxConfig(), uidBase: 61200, directory: sandboxDirectory } },
      { SERVICE_SECRET_DB_PASSWORD: OPERATOR_SECRET },
    );
    await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 15_000, 'agent ready');
  });

  afterAll(async () => {
    await agent?.stop();
    await service?.close();
    await target?.close();
    await rm(sandboxDirectory, { recursive: true, force: true });
  });

  async function runCheck(script: string, dependencies: { path: string; content: string }[] = []): Promise<{ session: any; detail: any }> {
    const created = await service.api('POST', '/v1/checks/multistep', {
      name: 'login journey',
      dependencies,
      activated: false,
      privateLocations: [slug],
      runtimeId: '2026.04',
      script,
      environmentVariables: [
        { key: 'TARGET_URL', value: target.url },
        { key: 'LOGIN_PASSWORD', value: CHECK_SECRET, secret: true },
      ],
    });
    expect(created.status).toBe(201);
    return runToFinal(service, created.body.id, 60_000);
  }

  it('runs the script, reports its steps and logs scrubbed, and uploads a trace with no secret left in it', async () => {
    const { session, detail } = await runCheck(SCRIPT);
    expect(session.status).toBe('PASSED');
    const everything = JSON.stringify({ session, detail });
    const spellings = [...secretSpellings(CHECK_SECRET), ...secretSpellings(OPERATOR_SECRET)];
    expect(spellingsFound(everything, spellings)).toEqual([]);

    const steps = detail.details.steps as { name: string; status: string }[];
    expect(steps.map((step) => [step.name, step.status])).toEqual([
      [`log in as ${SCRUB_MARKER}`, 'passed'],
      ['read it back', 'passed'],
    ]);
    expect(detail.logs.map((line: { message: string }) => line.message)).toContain(
      `logged in with ${SCRUB_MARKER} and ${SCRUB_MARKER}`,
    );
    expect(detail.artifacts).toEqual([
      expect.objectContaining({ name: 'trace.zip', contentType: 'application/zip', uploaded: true, error: null }),
    ]);

    // The stored trace: every entry searched for every spelling of both secrets.
    const [jobDirectory] = await readdir(service.artifactsDir);
    const entries = await readZip(join(service.artifactsDir, jobDirectory!, 'trace.zip'));
    expect(entries.length).toBeGreaterThan(1);
    const leaks = entries.flatMap((entry) => spellingsFound(entry.data, spellings).map((found) => `${entry.name}: ${found}`));
    expect(leaks).toEqual([]);
    // Header values: gone from the recorded calls and requests. (The script's own source and the
    // echoed response body still hold them: those are not headers.)
    const recorded = entries.filter((entry) => /\.(trace|network)$/.test(entry.name));
    expect(recorded.length).toBeGreaterThan(0);
    for (const header of ['undeclared-api-key-5521', 'undeclared-cookie-7730']) {
      expect(recorded.filter((entry) => entry.data.includes(header)).map((entry) => entry.name)).toEqual([]);
    }
    // The trace did hold them: the echo and the request were recorded, now with the marker in their place.
    const network = entries.filter((entry) => entry.data.includes(SCRUB_MARKER));
    expect(network.length).toBeGreaterThan(0);
  });

  it('fails the check of a script whose assertion fails, with the assertion in the error and no secret', async () => {
    const script = `
import { test, expect } from '@playwright/test';
test('wrong status', async ({ request }) => {
  await test.step('expects 201', async () => {
    const response = await request.get(process.env.TARGET_URL + '/echo');
    expect(response.status(), 'sent ' + process.env.LOGIN_PASSWORD).toBe(201);
  });
});
`;
    const { session, detail } = await runCheck(script);
    expect(session.status).toBe('FAILED');
    expect(detail).toMatchObject({ hasFailures: true, hasErrors: false });
    expect(detail.error.code).toBe('SCRIPT_FAILED');
    expect(detail.error.message).toContain(`sent ${SCRUB_MARKER}`);
    expect(detail.error.message).toContain('Expected: 201');
    expect(spellingsFound(JSON.stringify({ session, detail }), secretSpellings(CHECK_SECRET))).toEqual([]);
  });

  it('writes the check\'s dependency files beside its script, where its imports find them', async () => {
    const script = `
import { test, expect } from '@playwright/test';
import { greeting } from './lib/greeting.js';
import settings from './data/settings.json' with { type: 'json' };

test('uses its files', async () => {
  await test.step(greeting(settings.name), async () => {
    expect(settings.retries).toBe(3);
  });
});
`;
    const { session, detail } = await runCheck(script, [
      { path: 'lib/greeting.js', content: 'export function greeting(name) { return `hello ${name}`; }\n' },
      { path: 'data/settings.json', content: '{ "name": "outpost", "retries": 3 }\n' },
    ]);
    expect(session.status, JSON.stringify(detail.error)).toBe('PASSED');
    expect(detail.details.steps.map((step: { name: string }) => step.name)).toEqual(['hello outpost']);
  });

  it('leaves a script no way to the agent\'s key or its Redis, by environment, /proc or socket', async () => {
    const script = `
import { test } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';

test('pries', async () => {
  console.log('env ' + Object.keys(process.env).sort().join(','));
  for (const [what, read] of [
    ['environ fs', () => readFileSync('/proc/${process.pid}/environ', 'latin1')],
    ['environ cat', () => execFileSync('cat', ['/proc/${process.pid}/environ']).toString('latin1')],
  ]) {
    try { read(); console.log(what + ' READ'); } catch (error) { console.log(what + ' denied'); }
  }
  const sockets = execFileSync('sh', ['-c', 'ls -d ' + process.env.REDIS_GLOB + ' 2>/dev/null || true']).toString().split('\\n').filter(Boolean);
  console.log('redis dirs ' + sockets.length);
  for (const dir of sockets) {
    const answer = await new Promise((resolve) => {
      const socket = net.connect(dir + '/redis.sock');
      socket.once('connect', () => { socket.end(); resolve('CONNECTED'); });
      socket.once('error', (error) => resolve(error.code));
    });
    console.log('redis ' + answer);
  }
});
`;
    const created = await service.api('POST', '/v1/checks/multistep', {
      name: 'prying',
      activated: false,
      privateLocations: [slug],
      runtimeId: '2026.04',
      script,
      environmentVariables: [{ key: 'REDIS_GLOB', value: join(tmpdir(), 'outpost-redis-*') }],
    });
    expect(created.status).toBe(201);
    const { session, detail } = await runToFinal(service, created.body.id, 60_000);
    const lines: string[] = detail.logs.map((line: { message: string }) => line.message);
    expect(session.status, JSON.stringify(lines)).toBe('PASSED');
    const env = lines.find((line) => line.startsWith('env '))!.slice(4).split(',');
    expect(env.filter((key) => /API_KEY|API_URL|REDIS_URL/.test(key))).toEqual([]);
    expect(lines).toContain('environ fs denied');
    expect(lines).toContain('environ cat denied');
    // In its own mount namespace the script has a /tmp of its own: the agent's embedded
    // redis-server is not there at all; with users isolation it is there, and shut.
    const seen = Number(lines.find((line) => line.startsWith('redis dirs '))!.slice(11));
    const redis = lines.filter((line) => line.startsWith('redis ') && !line.startsWith('redis dirs'));
    expect(redis.length).toBe(seen);
    expect(redis.filter((line) => line.includes('CONNECTED'))).toEqual([]);
  });

  it('stops a fork bomb at the sandbox user\'s process limit and kills what it started', async () => {
    const script = `
import { test } from '@playwright/test';
import { spawn } from 'node:child_process';

test('forks', async () => {
  let started = 0;
  let refused = 0;
  await Promise.all(Array.from({ length: 1500 }, () => new Promise((resolve) => {
    const child = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
    child.once('spawn', () => { started += 1; child.unref(); resolve(); });
    child.once('error', () => { refused += 1; resolve(); });
  })));
  console.log('started ' + started + ' refused ' + refused);
});
`;
    const { detail } = await runCheck(script);
    const line: string = detail.logs.map((entry: { message: string }) => entry.message).find((message: string) => message.startsWith('started '));
    const [, started, refused] = /started (\d+) refused (\d+)/.exec(line)!;
    expect(Number(started)).toBeLessThan(512);
    expect(Number(refused)).toBeGreaterThan(900);
    // What the user has left is at most the slot's next warm sandbox, waiting in a directory no job has used;
    // anything of the job's would be in its removed directory.
    for (const { pid } of await listProcesses({ uid: 61200 })) {
      expect(await sitsInUsedJobDirectory(pid)).toBe(false);
    }
  });

  it('uploads no file of the agent\'s that a script names as an attachment, directly or through a link', async () => {
    const privateDirectory = await mkdtemp(join(tmpdir(), 'outpost-agent-private-'));
    const privateFile = join(privateDirectory, 'agent-only.txt');
    await writeFile(privateFile, 'AGENT-ONLY-CONTENT-4471');
    await chmod(privateFile, 0o600);
    const script = `
import { test } from '@playwright/test';
import { execFileSync } from 'node:child_process';

test('attaches what is not its own', async ({}, testInfo) => {
  // Through ln: Node's permission model refuses symlink() to the script itself.
  execFileSync('ln', ['-s', ${JSON.stringify(privateFile)}, testInfo.outputPath('link.txt')]);
  await testInfo.attach('direct', { path: ${JSON.stringify(privateFile)}, contentType: 'text/plain' }).catch(() => undefined);
  testInfo.attachments.push({ name: 'forged', path: ${JSON.stringify(privateFile)}, contentType: 'text/plain' });
  testInfo.attachments.push({ name: 'linked', path: testInfo.outputPath('link.txt'), contentType: 'text/plain' });
});
`;
    try {
      const { session, detail } = await runCheck(script);
      expect(session.status, JSON.stringify(detail.error)).toBe('PASSED');
      const refused = detail.artifacts.filter((artifact: { name: string }) => /^(forged|linked)/.test(artifact.name));
      expect(refused.length).toBe(2);
      for (const artifact of refused) expect(artifact).toMatchObject({ uploaded: false, error: expect.stringMatching(/out of the job's directory/) });
      const stored: string[] = [];
      for (const job of await readdir(service.artifactsDir)) {
        for (const name of await readdir(join(service.artifactsDir, job))) stored.push((await readFile(join(service.artifactsDir, job, name))).toString('latin1'));
      }
      expect(stored.filter((content) => content.includes('AGENT-ONLY-CONTENT-4471'))).toEqual([]);
    } finally {
      await rm(privateDirectory, { recursive: true, force: true });
    }
  });

  it('leaves no job directory behind once the runs are over', async () => {
    // A directory made ready for the next job may wait there; none that a job used.
    const used: string[] = [];
    for (const name of await readdir(sandboxDirectory)) {
      const entries: string[] = await readdir(join(sandboxDirectory, name)).catch(() => []);
      if (entries.includes('check')) used.push(name);
    }
    expect(used).toEqual([]);
  });
});
