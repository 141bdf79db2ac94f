import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runtimePaths } from '../../src/runtimes/installed.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** A node that applies the agent's V8 settings, then prints what V8 says of each flag it was given. */
function tuneOn(node: string) {
  const script = [
    "const { tuneV8ForLongRunningAgent, AGENT_RUNTIME_V8_FLAGS } = await import('./src/agent/v8-tuning.ts');",
    'tuneV8ForLongRunningAgent();',
    'console.log(JSON.stringify({ v8: process.versions.v8, runtimeFlags: AGENT_RUNTIME_V8_FLAGS }));',
  ].join('\n');
  return spawnSync(node, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 20_000 });
}

// This machine's Node.js and the test runtimes' (22 and 24, installed before any test starts).
const NODES = [process.execPath, runtimePaths('2025.04').node, runtimePaths('2026.04').node];

describe.each(NODES)('the agent’s V8 settings on %s', (node) => {
  it('are taken without a word on stderr, Maglev’s only where V8 has Maglev', () => {
    expect(existsSync(node)).toBe(true);
    const run = tuneOn(node);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const { v8, runtimeFlags } = JSON.parse(run.stdout) as { v8: string; runtimeFlags: string[] };
    const knows = spawnSync(node, ['--v8-options'], { encoding: 'utf8' }).stdout.includes('--maglev-destroy-on-background');
    expect(runtimeFlags.includes('--no-maglev-destroy-on-background'), `V8 ${v8}`).toBe(knows);
  });
});
