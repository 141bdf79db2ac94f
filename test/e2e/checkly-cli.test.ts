import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checklyCli, type CheckCli } from '../support/checkly-cli.js';
import { startTestService, type TestService } from '../support/service.js';

/** The public `checkly` CLI against a real Outpost service: account, runtimes, variables and members. */
describe('the public checkly CLI against Outpost', () => {
  let service: TestService;
  let home: string;
  let work: string;
  let ownerId: string;

  let checkly: CheckCli['run'];
  let ok: (args: string[], cwd?: string) => Promise<string>;

  beforeAll(async () => {
    service = await startTestService('pglite');
    home = await mkdtemp(join(tmpdir(), 'outpost-checkly-home-'));
    work = join(home, 'project');
    await mkdir(work);
    const runner = checklyCli(() => service, home, work);
    checkly = runner.run;
    ok = (args, cwd) => runner.ok(args, { cwd });
    const owner = await service.api('POST', '/v1/accounts/me/members', { email: 'olive@example.test', name: 'Olive Owner', role: 'OWNER' });
    expect(owner.status).toBe(201);
    ownerId = owner.body.id;
  }, 30_000);

  afterAll(async () => {
    await service?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('whoami, switch, runtimes and account plan answer for the self-hosted account', async () => {
    const [whoami, switched, runtimes, plan] = await Promise.all([
      ok(['whoami']),
      ok(['switch', '--account-id', service.accountId]),
      ok(['runtimes']),
      ok(['account', 'plan']),
    ]);
    expect(whoami).toContain(`You are currently on account "Bootstrap account" (${service.accountId}) as service key "bootstrap"`);
    expect(whoami).toContain('Plan: Self-hosted');
    expect(switched).toContain(`Account switched to ${service.accountId}`);

    const listed = JSON.parse(runtimes) as { name: string; stage: string; nodeVersion: string; dependencies: Record<string, string> }[];
    expect(listed[0]).toMatchObject({ name: '2026.04', stage: 'CURRENT', nodeVersion: '24.13.1' });
    expect(listed[0]!.dependencies).not.toHaveProperty('node');
    expect(listed[0]!.dependencies['@playwright/test']).toBe('1.58.2');

    expect(plan).toContain('Plan: Self-hosted');
    expect(plan).toMatch(/Locations: 0 of 22 available \(max 10 per check\)/);
    // No limit on private locations; the enforced ones with their numbers; nothing to upgrade to.
    expect(plan).toMatch(/Private locations\s+-\s+-\s+PRIVATE_LOCATIONS/);
    expect(plan).toMatch(/Environment variables\s+100\s+-\s+ENVIRONMENT_VARIABLES/);
    expect(plan).toMatch(/Data-center locations\s+-\s+Unavailable\s+DATA_CENTER_LOCATIONS/);
    expect(plan).not.toContain('Self-hosted plan');
  }, 45_000);

  it('env add, ls, update, pull and rm round-trip a variable', async () => {
    expect(await ok(['env', 'add', 'GREETING', 'hello world'])).toContain('Environment variable "GREETING" added.');
    expect(await ok(['env', 'add', 'TOKEN', 's3cr3t', '--secret'])).toContain('Secret environment variable "TOKEN" added.');

    const again = await checkly(['env', 'add', 'GREETING', 'other']);
    expect(again.code).toBe(1);
    expect(again.stdout).toContain('An environment variable with key GREETING already exists');

    expect(await ok(['env', 'ls'])).toBe('Environment variables:\nGREETING=hello world\nTOKEN=*****\n');
    expect(await ok(['env', 'update', 'GREETING', 'bonjour'])).toContain('Environment variable "GREETING" updated.');
    expect((await service.api('GET', '/v1/variables/GREETING')).body).toEqual({ key: 'GREETING', value: 'bonjour', locked: false, secret: false });

    const pulled = join(home, 'pulled');
    await mkdir(pulled);
    expect(await ok(['env', 'pull'], pulled)).toContain('Success! Environment variables written to .env.');
    expect(await readFile(join(pulled, '.env'), 'utf8')).toBe(
      '# Created by Checkly CLI\n# Environment variables\nGREETING=bonjour\n# Secret variables\nTOKEN=*****\n',
    );

    expect(await ok(['env', 'rm', 'GREETING', '--force'])).toContain('Environment variable "GREETING" deleted.');
    expect(await ok(['env', 'ls'])).toBe('Environment variables:\nTOKEN=*****\n');
    const gone = await checkly(['env', 'rm', 'GREETING', '--force']);
    expect(gone.code).toBe(1);
    expect(gone.stdout).toContain('Environment variable "GREETING" does not exist.');
  }, 45_000);

  it('members lists, updates and deletes members', async () => {
    const added = await service.api('POST', '/v1/accounts/me/members', { email: 'ada@example.test', name: 'Ada', role: 'READ_ONLY' });
    expect(added.status).toBe(201);

    const listed = await ok(['members']);
    expect(listed).toMatch(new RegExp(`member\\s+olive@example\\.test\\s+Olive Owner\\s+OWNER\\s+ACTIVE.*${ownerId}`));
    expect(listed).toMatch(/member\s+ada@example\.test\s+Ada\s+READ_ONLY\s+ACTIVE/);

    const updated = await ok(['members', 'update', 'ada@example.test', '--role', 'read_write', '--force']);
    expect(updated).toContain('Account member "ada@example.test" updated.');
    expect(updated).toMatch(/ada@example\.test\s+Ada\s+READ_WRITE/);

    // Outpost has no READ_RUN role, and the last owner stays one: said, not a stack trace.
    const readRun = await checkly(['members', 'update', 'ada@example.test', '--role', 'read_run', '--force']);
    expect(readRun.stdout).toContain('role must be one of OWNER, ADMIN, READ_WRITE, READ_ONLY');
    const lastOwner = await checkly(['members', 'update', 'olive@example.test', '--role', 'admin', '--force']);
    expect(lastOwner.stdout).toContain('The last owner of an account stays one');
    for (const outcome of [readRun, lastOwner]) {
      expect(outcome.code).toBe(1);
      expect(outcome.stderr).not.toMatch(/\n\s+at /);
    }

    expect(await ok(['members', 'delete', 'ada@example.test', '--force'])).toContain(`Account member "ada@example.test (${added.body.id})" deleted.`);
    expect(await ok(['members', '--output', 'json'])).toContain('"email": "olive@example.test"');
    expect((await service.api('GET', '/v1/accounts/me/members')).body.map((m: { email: string }) => m.email)).toEqual(['olive@example.test']);
  }, 45_000);

  it('login, with the key in the environment, says so and changes nothing', async () => {
    const login = await checkly(['login']);
    expect(login.code).toBe(0);
    // oclif wraps warnings: join the lines back.
    expect(login.stderr.replace(/\s*\n\s*›\s*/g, ' ')).toContain('You must delete them to use `npx checkly login`');
  }, 30_000);
});
