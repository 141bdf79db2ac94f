/**
 * Ends every process of a user: kill(-1) run as that user. The kernel sends
 * it to all of the user's processes in one pass under its task list lock, so
 * a process that forks and exits every few milliseconds cannot slip between
 * a listing and a kill as it can when the agent kills pid by pid; repeated
 * until /proc shows nothing of the user.
 */
import { spawn } from 'node:child_process';
import { killAll, listProcesses } from '../sandbox/process-tree.js';
import { SETPRIV } from './isolation.js';

const ROUNDS = 50;

function killMinusOne(uid: number): Promise<void> {
  return new Promise((resolve) => {
    // The shell's own kill(-1) spares the shell itself, which then exits.
    const child = spawn(SETPRIV, [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--', '/bin/sh', '-c', 'kill -9 -1'], {
      stdio: 'ignore',
    });
    child.once('error', () => resolve());
    child.once('close', () => resolve());
  });
}

export async function killUser(uid: number): Promise<void> {
  for (let round = 0; round < ROUNDS; round += 1) {
    if ((await listProcesses({ uid })).length === 0) return;
    await killMinusOne(uid);
    await new Promise((done) => setTimeout(done, 10));
  }
  // Still there after that many passes: pid by pid, as a last resort that is logged by the caller's check.
  await killAll({ uid });
}
