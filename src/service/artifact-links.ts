/**
 * Short-lived download links for artifacts: the link itself is the
 * credential, so a trace can be opened by `npx playwright show-trace <url>`
 * or trace.playwright.dev, neither of which can send an API key.
 *
 * A link is `/v1/artifacts/{id}?expires=<unix seconds>&signature=<base64url>`,
 * the signature an HMAC-SHA256 over the artifact id and the expiry with a key
 * every service instance shares. Nothing else is in it: no key, no account.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Secret } from '../config/secret.js';

export type LinkVerdict = 'valid' | 'expired' | 'invalid';

export interface SignedLink {
  url: string;
  expiresAt: string;
}

/** Links are valid to the end of a minute, so reads within that minute give the same link (and caches can keep it). */
const EXPIRY_GRANULARITY_SECONDS = 60;
/** An HMAC-SHA256, base64url without padding. */
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;

export class ArtifactLinks {
  readonly #key: Buffer;

  constructor(
    key: Secret,
    readonly ttlSeconds: number,
  ) {
    this.#key = Buffer.from(key.reveal(), 'utf8');
  }

  /** A key good enough to sign links with, for when none is configured. */
  static generateKey(): string {
    return randomBytes(32).toString('base64url');
  }

  /** The link to one artifact, valid for `ttlSeconds` from `now` (rounded up to the minute). */
  link(baseUrl: string, artifactId: string, now: Date = new Date()): SignedLink {
    const expires =
      Math.ceil((Math.floor(now.getTime() / 1000) + this.ttlSeconds) / EXPIRY_GRANULARITY_SECONDS) * EXPIRY_GRANULARITY_SECONDS;
    const query = new URLSearchParams({ expires: String(expires), signature: this.#sign(artifactId, expires) });
    return { url: `${baseUrl}/v1/artifacts/${artifactId}?${query.toString()}`, expiresAt: new Date(expires * 1000).toISOString() };
  }

  /**
   * Whether a link's signature is this service's for this artifact and expiry,
   * compared in constant time, and if so whether it is still valid. A link
   * whose expiry lies further ahead than links are ever made for was not made
   * here, whatever its signature says.
   */
  verify(artifactId: string, expires: number, signature: string, now: Date = new Date()): LinkVerdict {
    if (!SIGNATURE.test(signature) || !Number.isSafeInteger(expires)) return 'invalid';
    const expected = Buffer.from(this.#sign(artifactId, expires), 'utf8');
    if (!timingSafeEqual(expected, Buffer.from(signature, 'utf8'))) return 'invalid';
    const nowSeconds = now.getTime() / 1000;
    if (expires > nowSeconds + this.ttlSeconds + EXPIRY_GRANULARITY_SECONDS) return 'invalid';
    return expires <= nowSeconds ? 'expired' : 'valid';
  }

  #sign(artifactId: string, expires: number): string {
    return createHmac('sha256', this.#key).update(`artifact:${artifactId.toLowerCase()}:${expires}`).digest('base64url');
  }
}
