/**
 * API checks with setup and teardown scripts, through the script harness
 * (the job's sandbox, the runtime's Node.js, the harness's scrubber) against
 * a real JSON API on loopback: a setup script that adds a token, a teardown
 * that reads (and reshapes) the response, assertions evaluated after
 * teardown, console output in the logs, secrets never in the result, and one
 * error code per way a script can fail.
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IsolationKind } from '../../src/agent/isolation/isolation.js';
import type { Job } from '../../src/protocol/agent-api.js';
import { SCRUB_MARKER } from '../../src/scrub/marker.js';
import { apiSettings, startApiTarget, TARGET_TOKEN, type ApiTarget } from '../support/api-target.js';
import { isolationProblem, startTestHarness, type TestHarness } from '../support/script-harness.js';

const UID_BASE = 63700;

// The strongest isolation this machine has.
const probeRoot = await mkdtemp(join(tmpdir(), 'outpost-api-probe-'));
await chmod(probeRoot, 0o711);
let isolated: IsolationKind | undefined;
const problems: string[] = [];
for (const kind of ['namespaces', 'users'] as const) {
  const problem = await isolationProblem(kind, join(probeRoot, kind));
  if (problem === undefined) {
    isolated = kind;
    break;
  }
  problems.push(`${kind}: ${problem}`);
}
await rm(probeRoot, { recursive: true, force: true });

let work: string;
let target: ApiTarget;
let t: TestHarness;

beforeAll(async () => {
  target = await startApiTarget();
  if (isolated === undefined) return;
  work = await mkdtemp(join(tmpdir(), 'outpost-api-scripts-'));
  await chmod(work, 0o711);
  t = await startTestHarness({ isolation: isolated, sandboxRoot: join(work, 'sandboxes'), uidBase: UID_BASE, uidCount: 10 });
});

afterAll(async () => {
  await t?.stop();
  await target?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const script = (code: string, origin = 'check') => ({ origin, script: code });
const assertion = (source: string, comparison: string, target: string, property = '') => ({ source, property, comparison, target });

function job(settings: Record<string, unknown>, environmentVariables: Job['environmentVariables'] = []): Job {
  return {
    jobId: randomUUID(),
    checkSessionId: randomUUID(),
    checkId: randomUUID(),
    checkType: 'API',
    name: 'api script test',
    runLocation: 'here',
    runSource: 'TRIGGER_API',
    attempt: 1,
    leaseExpiresAt: new Date(Date.now() + 60_000).toISOString(),
    timeoutSeconds: 30,
    runtimeId: null,
    environmentVariables,
    settings,
  };
}

const SECRET_VARIABLES = [
  { key: 'API_TOKEN', value: TARGET_TOKEN, secret: true },
  { key: 'GREETING', value: 'hello-plain', secret: false },
];

const isolatedName = isolated ? `under ${isolated} isolation` : `(cannot run here: ${problems.join('; ')})`;

describe.skipIf(isolated === undefined)(`API checks with scripts, ${isolatedName}`, { timeout: 30_000 }, () => {
  it('is offered by the harness', () => {
    expect(t.harness.checkTypes).toContain('API');
  });

  it('runs a setup script that adds a token, and a teardown that reads the response; assertions see the teardown', async () => {
    const settings = apiSettings(
      `${target.url}/private`,
      { assertions: [assertion('STATUS_CODE', 'EQUALS', '200'), assertion('JSON_BODY', 'EQUALS', 'yes', '$.checkedByTeardown')] },
      {
        setupScripts: [
          script("request.headers['X-From-Group'] = 'group';", 'group'),
          script(`
            const crypto = require('node:crypto');
            request.headers.Authorization = 'Bearer ' + process.env.API_TOKEN;
            request.queryParameters.nonce = crypto.randomUUID();
            console.log('setup saw', process.env.GREETING, 'and token', process.env.API_TOKEN);
            await new Promise((resolve) => setTimeout(resolve, 10));
          `),
        ],
        tearDownScripts: [
          script(`
            const body = JSON.parse(response.body);
            console.info('teardown got status', response.statusCode, 'ok:', body.ok, 'timings total > 0:', response.timings.total > 0);
            console.warn('token in body', body.token);
            body.checkedByTeardown = 'yes';
            response.body = JSON.stringify(body);
          `),
        ],
      },
    );
    const result = await t.run(job(settings, SECRET_VARIABLES));
    expect(result.error, JSON.stringify(result.logs)).toBeNull();
    expect(result).toMatchObject({ hasErrors: false, hasFailures: false, statusCode: 200 });
    expect(result.assertions.map((entry) => entry.passed)).toEqual([true, true]);
    // The agent sent the request the setup scripts left.
    const received = target.received.at(-1)!;
    expect(received.headers.authorization).toBe(`Bearer ${TARGET_TOKEN}`);
    expect(received.headers['x-from-group']).toBe('group');
    expect(received.url).toMatch(/^\/private\?nonce=[0-9a-f-]{36}$/);
    const messages = result.logs.map((line) => `${line.level} ${line.message}`);
    expect(messages).toContain(`INFO setup saw hello-plain and token ${SCRUB_MARKER}`);
    expect(messages).toContain('INFO teardown got status 200 ok: true timings total > 0: true');
    expect(messages).toContain(`WARN token in body ${SCRUB_MARKER}`);
    expect(result.timings!.firstByte).toBeGreaterThan(0);
    const details = result.details as { request: { headers: Record<string, string> }; response: { body: string } };
    expect(details.request.headers.Authorization).toBe(SCRUB_MARKER);
    expect(details.response.body).toContain('checkedByTeardown');
    expect(JSON.stringify(result)).not.toContain(TARGET_TOKEN);
  });

  it('fails on assertions a teardown made false, and shouldFail inverts that', async () => {
    const settings = apiSettings(
      `${target.url}/users`,
      { assertions: [assertion('STATUS_CODE', 'EQUALS', '200'), assertion('HEADERS', 'EQUALS', 'added', 'x-teardown')] },
      { tearDownScripts: [script("response.statusCode = 503; response.headers['X-Teardown'] = 'added';")] },
    );
    const result = await t.run(job(settings));
    expect(result).toMatchObject({ hasErrors: false, hasFailures: true, statusCode: 503 });
    expect(result.assertions.map((entry) => [entry.passed, entry.actual])).toEqual([[false, 503], [true, 'added']]);
    const inverted = await t.run(job({ ...settings, shouldFail: true }));
    expect(inverted).toMatchObject({ hasFailures: false, error: null });
  });

  it('fails with API_SETUP_SCRIPT_FAILED when a setup script throws, and sends nothing', async () => {
    const before = target.received.length;
    const result = await t.run(
      job(apiSettings(`${target.url}/users`, {}, { setupScripts: [script("console.log('about to fail'); throw new Error('no token for ' + process.env.API_TOKEN);")] }), SECRET_VARIABLES),
    );
    expect(result).toMatchObject({ hasErrors: true, hasFailures: true, error: { code: 'API_SETUP_SCRIPT_FAILED' } });
    expect(result.error!.message).toContain("Setup script 1 of 1 (the check's) failed: no token for");
    expect(result.error!.message).toContain(SCRUB_MARKER);
    expect(result.logs.map((line) => line.message)).toContain('about to fail');
    expect(target.received.length).toBe(before);
    expect(JSON.stringify(result)).not.toContain(TARGET_TOKEN);
  });

  it('fails with API_TEARDOWN_SCRIPT_FAILED when a teardown throws', async () => {
    const result = await t.run(job(apiSettings(`${target.url}/users`, {}, { tearDownScripts: [script("throw new TypeError('bad teardown')")] })));
    expect(result).toMatchObject({ hasErrors: true, error: { code: 'API_TEARDOWN_SCRIPT_FAILED' } });
    expect(result.error!.message).toContain('TypeError: bad teardown');
  });

  it('fails with API_SCRIPT_TIMEOUT for a script that never settles, and for one that blocks its thread', async () => {
    const hanging = await t.run(job(apiSettings(`${target.url}/users`, {}, { setupScripts: [script('await new Promise(() => {});')] })));
    expect(hanging).toMatchObject({ hasErrors: true, error: { code: 'API_SCRIPT_TIMEOUT' } });
    expect(hanging.error!.message).toContain('Setup script 1 of 1');
    const blocking = await t.run(job(apiSettings(`${target.url}/users`, {}, { tearDownScripts: [script('for (;;) {}')] })));
    expect(blocking).toMatchObject({ hasErrors: true, error: { code: 'API_SCRIPT_TIMEOUT' } });
    expect(blocking.error!.message).toContain('Teardown script 1 of 1');
  }, 45_000);

  it('fails with API_REQUEST_INVALID when a setup script breaks the request', async () => {
    const result = await t.run(job(apiSettings(`${target.url}/users`, {}, { setupScripts: [script("request.method = 'BREW'")] })));
    expect(result).toMatchObject({ hasErrors: true, error: { code: 'API_REQUEST_INVALID' } });
  });

  it('fails a script that is not valid JavaScript as a setup failure', async () => {
    const result = await t.run(job(apiSettings(`${target.url}/users`, {}, { setupScripts: [script('this is not javascript')] })));
    expect(result).toMatchObject({ hasErrors: true, error: { code: 'API_SETUP_SCRIPT_FAILED' } });
    expect(result.error!.message).toContain('SyntaxError');
  });
});
