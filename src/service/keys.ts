import { createHash, randomBytes } from 'node:crypto';

/** Keys are stored as SHA-256 digests: a database dump reveals no usable key. */
export function hashKey(raw: string): string {
  return createHash('sha256').update(raw).digest('hex');
}

/** `prefix` plus 40 url-safe random characters (240 bits). */
export function generateKey(prefix: 'pl_' | 'ok_'): string {
  return prefix + randomBytes(30).toString('base64url');
}

export function maskKey(raw: string): string {
  return `${raw.slice(0, 3)}${'*'.repeat(Math.max(4, raw.length - 7))}${raw.slice(-4)}`;
}
