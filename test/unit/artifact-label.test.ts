import { describe, expect, it } from 'vitest';
import { safeArtifactLabel, safeArtifactName, safeContentType } from '../../src/agent/artifact-label.js';
import { Scrubber } from '../../src/scrub/index.js';
import { secretSpellings, spellingsFound } from '../support/secret-spellings.js';

const SECRET = 'tok-3f9a-secret-value';
/** Its plain form has characters no name may hold, and its base64 a '+': sanitised first, both would slip by. */
const ODD_SECRET = 'tok?3f9a>secret~value';
const ODD_BASE64 = Buffer.from(ODD_SECRET).toString('base64');
const RULE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

function textScrubber(...secrets: string[]): { text(text: string): string } {
  const scrubber = new Scrubber(secrets);
  return { text: (text) => scrubber.scrubText(text) };
}

const scrub = textScrubber(SECRET);
const none = textScrubber();

describe('safeArtifactName', () => {
  it('leaves a name already safe as it is', () => {
    for (const name of ['trace.zip', 'trace-2.zip', 'report.json', '01-chromium-login-screenshot.png']) {
      expect(safeArtifactName(scrub, { name })).toBe(name);
    }
  });

  it('scrubs a secret out of the name and the extension', () => {
    const name = safeArtifactName(scrub, { name: `screenshot ${SECRET}`, extension: `.${SECRET}` }, { suffix: '-3' });
    expect(name).toBe('screenshot-3.bin');
    expect(spellingsFound(name, secretSpellings(SECRET))).toEqual([]);
  });

  it('scrubs before sanitising, so neither the secret nor its base64 survives in a sanitised spelling', () => {
    const odd = textScrubber(ODD_SECRET);
    const plain = safeArtifactName(odd, { name: `a ${ODD_SECRET} b` });
    const encoded = safeArtifactName(odd, { name: `a ${ODD_BASE64} b` });
    // Sanitised first they would have been a-tok-3f9a-secret-value-b and a-dG9rPzNmOWE-c2VjcmV0fnZhbHVl-b.
    expect(plain).toBe('a-b');
    expect(encoded).toBe('a-b');
    expect(`${plain} ${encoded}`).not.toMatch(/3f9a|secret|c2VjcmV0|dG9r/);
  });

  it('scrubs again what sanitising spells anew', () => {
    // "tok 3f9a secret value" holds no secret; with its spaces made dashes it is one.
    const name = safeArtifactName(scrub, { name: 'x tok 3f9a secret value y', extension: 'png' });
    expect(name).not.toContain(SECRET);
    expect(name).toMatch(RULE);
  });

  it('keeps to the service\'s rule: allowed characters, a letter or digit first, at most 200 long', () => {
    const long = safeArtifactName(none, { name: `../../${'ü'.repeat(50)}${'a'.repeat(500)}`, extension: '.p/n g' }, { prefix: '07-' });
    expect(long).toMatch(RULE);
    expect(long.startsWith('07-')).toBe(true);
    expect(long.endsWith('.png')).toBe(true);
    expect(safeArtifactName(none, { name: '.hidden' })).toBe('hidden');
    expect(safeArtifactName(none, { name: '../..', extension: '' })).toBe('artifact.bin');
    expect(safeArtifactName(none, { name: '' })).toBe('artifact');
    expect(safeArtifactName(none, { name: 'x', extension: '.abcdefghijklmnop' })).toBe('x.abcdefghij');
  });
});

describe('safeContentType', () => {
  it('keeps a plain type, lower-cased and without parameters', () => {
    expect(safeContentType(none, 'image/png')).toBe('image/png');
    expect(safeContentType(none, 'Image/PNG')).toBe('image/png');
    expect(safeContentType(none, 'image/svg+xml')).toBe('image/svg+xml');
    expect(safeContentType(none, 'application/vnd.ms-excel')).toBe('application/vnd.ms-excel');
    expect(safeContentType(none, 'text/plain; charset=utf-8')).toBe('text/plain');
  });

  it('makes anything else application/octet-stream', () => {
    for (const declared of ['', 'png', 'text/', '/plain', 'a/b/c', 'text/plain\r\nX-Injected: 1', 'text/pl ain', `image/${'x'.repeat(200)}`]) {
      expect(safeContentType(none, declared), JSON.stringify(declared)).toBe('application/octet-stream');
    }
  });

  it('drops a type that holds a secret, in the type, its parameters, or once lower-cased', () => {
    expect(safeContentType(scrub, `image/${SECRET}`)).toBe('application/octet-stream');
    expect(safeContentType(scrub, `text/plain; token=${SECRET}`)).toBe('text/plain');
    expect(safeContentType(scrub, `text/${SECRET.toUpperCase()}`)).toBe('application/octet-stream');
  });
});

describe('safeArtifactLabel', () => {
  it('makes an attachment\'s name, extension and type safe together', () => {
    const label = safeArtifactLabel(
      scrub,
      { name: `chromium-login ${SECRET}-screenshot`, extension: '.png', contentType: `image/${SECRET}` },
      { prefix: '01-' },
    );
    expect(label).toEqual({ name: '01-chromium-login-screenshot.png', contentType: 'application/octet-stream' });
  });
});
