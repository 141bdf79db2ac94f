import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/config/secret.js';
import { ConfigError } from '../../src/errors/index.js';
import { ArtifactLinks } from '../../src/service/artifact-links.js';
import { loadServiceConfig } from '../../src/service/config.js';

const now = new Date('2026-05-01T12:00:30Z');
const links = new ArtifactLinks(new Secret('k'.repeat(40)), 900);
const parts = (url: string) => {
  const parsed = new URL(url);
  return { id: parsed.pathname.split('/').pop()!, expires: Number(parsed.searchParams.get('expires')), signature: parsed.searchParams.get('signature')! };
};

describe('artifact links', () => {
  it('signs id and expiry, valid to the end of the minute after the TTL', () => {
    const id = randomUUID();
    const link = links.link('https://outpost.example', id, now);
    expect(link.url).toMatch(new RegExp(`^https://outpost\\.example/v1/artifacts/${id}\\?expires=\\d+&signature=[\\w-]{43}$`));
    expect(link.expiresAt).toBe('2026-05-01T12:16:00.000Z');
    // Reads within the minute give the same link.
    expect(links.link('https://outpost.example', id, new Date(now.getTime() + 20_000)).url).toBe(link.url);
    const { expires, signature } = parts(link.url);
    expect(links.verify(id, expires, signature, now)).toBe('valid');
    expect(links.verify(id.toUpperCase(), expires, signature, now)).toBe('valid');
    expect(links.verify(id, expires, signature, new Date('2026-05-01T12:16:00Z'))).toBe('expired');
  });

  it('refuses another id, another expiry, another key, a malformed or far-future signature', () => {
    const id = randomUUID();
    const { expires, signature } = parts(links.link('http://x', id, now).url);
    expect(links.verify(randomUUID(), expires, signature, now)).toBe('invalid');
    expect(links.verify(id, expires + 60, signature, now)).toBe('invalid');
    expect(new ArtifactLinks(new Secret('j'.repeat(40)), 900).verify(id, expires, signature, now)).toBe('invalid');
    expect(links.verify(id, expires, `${signature}=`, now)).toBe('invalid');
    expect(links.verify(id, expires, '', now)).toBe('invalid');
    // Signed with this key, but for longer than links are ever made: not one of ours.
    const longLived = new ArtifactLinks(new Secret('k'.repeat(40)), 604_800);
    const far = parts(longLived.link('http://x', id, now).url);
    expect(links.verify(id, far.expires, far.signature, now)).toBe('invalid');
    expect(longLived.verify(id, far.expires, far.signature, now)).toBe('valid');
  });

  it('is configured by ARTIFACT_LINK_SECRET and ARTIFACT_LINK_TTL_SECONDS, the secret never printed', () => {
    expect(loadServiceConfig({}).artifactLinks).toEqual({ secret: undefined, ttlSeconds: 900 });
    const config = loadServiceConfig({ ARTIFACT_LINK_SECRET: 's'.repeat(32), ARTIFACT_LINK_TTL_SECONDS: '3600' });
    expect(config.artifactLinks.ttlSeconds).toBe(3600);
    expect(config.artifactLinks.secret?.reveal()).toBe('s'.repeat(32));
    expect(JSON.stringify(config)).not.toContain('s'.repeat(32));
    expect(() => loadServiceConfig({ ARTIFACT_LINK_SECRET: 'short' })).toThrow(ConfigError);
    expect(() => loadServiceConfig({ ARTIFACT_LINK_TTL_SECONDS: '30' })).toThrow(/ARTIFACT_LINK_TTL_SECONDS/);
  });
});
