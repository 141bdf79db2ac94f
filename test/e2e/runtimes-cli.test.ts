import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

// From the sources through tsx, so these run without a build: the runtimes
// directory the CLI reads is the same one (runtimes/ beside src/ and dist/).
function outpost(args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

const INSTALLABLE = 'Installable runtimes: 2026.04, 2025.04, 2024.09';

describe('outpost runtimes', () => {
  it('install refuses an unknown id: exit code 2, naming it and the installable runtimes, no stack', () => {
    const result = outpost(['runtimes', 'install', 'nope']);
    expect(result.status).toBe(2);
    expect(result.stderr.trim()).toBe(`Unknown runtime "nope". ${INSTALLABLE}`);
    expect(result.stdout).toBe('');
  });

  it('install refuses a runtime that is a record only', () => {
    const result = outpost(['runtimes', 'install', '2026.04', '2022.10']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('Runtime 2022.10 (REMOVED) cannot be installed');
    expect(result.stderr).toContain(INSTALLABLE);
  });

  it('install with no ids makes sure of 2026.04 and 2025.04, plain lines when not on a terminal', () => {
    // The global setup installed both: this is the quick path.
    const result = outpost(['runtimes', 'install']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toBe('runtime 2026.04: already installed\nruntime 2025.04: already installed\n');
  });

  it('list shows every runtime with its stage, Node.js, multi-step support and whether it is installed', () => {
    const result = outpost(['runtimes', 'list']);
    expect(result.status).toBe(0);
    const rows = result.stdout.trimEnd().split('\n').map((line) => line.split(/\s{2,}/));
    expect(rows[0]).toEqual(['id', 'stage', 'Node.js', 'multi-step', 'installed']);
    expect(rows.slice(1).map((row) => row[0])).toEqual(['2026.04', '2025.04', '2024.09', '2024.02', '2023.09', '2023.02', '2022.10']);
    expect(rows[1]).toEqual(['2026.04', 'CURRENT', '24.13.1', 'yes', 'yes']);
    expect(rows[2]).toEqual(['2025.04', 'STABLE', '22.11.0', 'yes', 'yes']);
    expect(rows[7]).toEqual(['2022.10', 'REMOVED', '16.17.1', 'no', 'no']);
  });
});
