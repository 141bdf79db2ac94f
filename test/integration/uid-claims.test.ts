/**
 * Sandbox user ids claimed host-wide: an id another live agent holds is not
 * handed out, one whose agent died is taken over, and two pools over the same
 * range in two processes never give out the same id.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UidClaims } from '../../src/agent/isolation/uid-claims.js';
import { UidPool } from '../../src/agent/isolation/uid-pool.js';
import { eachOutputLine } from '../support/output-lines.js';

const HOLDER = join(import.meta.dirname, '../fixtures/uid-claims/hold.ts');

describe('user id claims shared by the agents of a host', () => {
  let directory: string;
  const holders: ChildProcess[] = [];

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'outpost-uid-claims-'));
  });
  afterEach(async () => {
    for (const holder of holders.splice(0)) holder.kill('SIGKILL');
    await rm(directory, { recursive: true, force: true });
  });

  /** Another agent process claiming `uids`; resolves with the ids it got. */
  async function otherAgent(uids: number[]): Promise<{ process: ChildProcess; got: number[] }> {
    // Node itself, with tsx as a loader: the tsx command would run it in a child a kill would not reach.
    const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, directory, ...uids.map(String)], { stdio: ['ignore', 'pipe', 'inherit'] });
    holders.push(child);
    const line = await new Promise<string>((resolve, reject) => {
      eachOutputLine(child.stdout as NodeJS.ReadableStream, resolve);
      child.once('exit', (code) => reject(new Error(`the other agent exited with ${code} before it said anything`)));
    });
    return { process: child, got: JSON.parse(line) as number[] };
  }

  it('refuses an id a live agent holds, and takes over the id of one that was killed', async () => {
    const other = await otherAgent([70001, 70002]);
    expect(other.got).toEqual([70001, 70002]);
    const claims = new UidClaims(directory);
    expect(await claims.claim(70001)).toBe(false);
    expect(await claims.claim(70003)).toBe(true);
    other.process.kill('SIGKILL');
    await new Promise((resolve) => other.process.once('exit', resolve));
    expect(await claims.claim(70001)).toBe(true);
    // Released, the id is free for the next agent.
    await claims.release(70001);
    expect((await otherAgent([70001])).got).toEqual([70001]);
  });

  it('gives two agents over the same range different ids', async () => {
    const other = await otherAgent([70010, 70011, 70012]);
    expect(other.got).toEqual([70010, 70011, 70012]);
    const pool = new UidPool(70010, 5, new UidClaims(directory));
    const mine = [await pool.acquire(), await pool.acquire()].map((user) => user.uid);
    expect(mine).toEqual([70013, 70014]);
  });
});
