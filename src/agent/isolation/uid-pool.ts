/**
 * Fresh user ids for jobs: each job gets one that no running process has,
 * taken round the range, so a process a job left behind can never find
 * itself sharing a user with the next job; an id goes back only once the
 * job's release has seen nothing of it left. Ids are also claimed host-wide
 * (uid-claims.ts), so agents sharing a host and a range never share an id.
 */
import { liveUids } from '../sandbox/process-tree.js';
import type { SandboxUser } from './isolation.js';
import { UidClaims } from './uid-claims.js';

const RETRY_MS = 250;

export class UidPool {
  readonly #inUse = new Set<number>();
  #next = 0;

  constructor(
    private readonly base: number,
    private readonly count: number,
    private readonly claims: UidClaims = new UidClaims(),
  ) {}

  async acquire(signal?: AbortSignal): Promise<SandboxUser> {
    for (;;) {
      const live = await liveUids();
      for (let step = 0; step < this.count; step += 1) {
        const offset = (this.#next + step) % this.count;
        const uid = this.base + offset;
        if (this.#inUse.has(uid) || live.has(uid)) continue;
        this.#inUse.add(uid);
        if (!(await this.claims.claim(uid))) {
          this.#inUse.delete(uid);
          continue;
        }
        this.#next = (offset + 1) % this.count;
        return { uid, gid: uid };
      }
      // Every id is taken or still has processes (left behind and being killed): wait for one.
      signal?.throwIfAborted();
      await new Promise((done) => setTimeout(done, RETRY_MS));
    }
  }

  async release(user: SandboxUser): Promise<void> {
    await this.claims.release(user.uid);
    this.#inUse.delete(user.uid);
  }
}
