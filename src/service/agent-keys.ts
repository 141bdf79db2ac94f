import type { Database } from './db/database.js';
import { hashKey } from './keys.js';
import {
  locationForKeyHash,
  recordKeyUse,
  type PrivateLocationRow,
} from './store/private-locations.js';

/** How long a key's answer is reused; a key removed through another service instance works at most this long. */
const CACHE_MS = 5000;
/** lastSeen and a key's last use are written at most this often: every call writing one row would serialise all of them. */
const TOUCH_MS = 5000;

/**
 * Agent keys are checked on every protocol call, hundreds a second under
 * load; a short cache keeps that off the database. Removing a key through
 * this instance forgets it at once, so the next call is refused.
 */
export class AgentKeys {
  readonly #cache = new Map<string, { keyId: string; location: PrivateLocationRow; until: number } | { until: number }>();
  readonly #touched = new Map<string, number>();

  constructor(private readonly db: Database) {}

  async locationFor(rawKey: string): Promise<PrivateLocationRow | undefined> {
    const digest = hashKey(rawKey);
    const now = Date.now();
    let entry = this.#cache.get(digest);
    if (!entry || entry.until < now) {
      const found = await locationForKeyHash(this.db, digest);
      entry = found ? { ...found, until: now + CACHE_MS } : { until: now + CACHE_MS };
      this.#cache.set(digest, entry);
    }
    if (!('location' in entry)) return undefined;
    if ((this.#touched.get(entry.keyId) ?? 0) + TOUCH_MS < now) {
      this.#touched.set(entry.keyId, now);
      await recordKeyUse(this.db, entry.keyId, entry.location.id);
    }
    return entry.location;
  }

  /** After a key is removed or added: nothing cached may outlive the change. */
  forget(): void {
    this.#cache.clear();
  }
}
