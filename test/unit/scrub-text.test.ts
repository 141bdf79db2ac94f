import { describe, expect, it } from 'vitest';
import { errorCode } from '../../src/errors/index.js';
import { MAX_SECRET_BYTES, SCRUB_MARKER, Scrubber } from '../../src/scrub/index.js';
import { secretSpellings, spellingsFound, stableBase64 } from '../support/secret-spellings.js';

const M = SCRUB_MARKER;
const SECRET = 'hunter2 s3cr&t/ü+';
const scrubber = new Scrubber([SECRET]);

describe('scrubText', () => {
  it('replaces the plain value, every occurrence', () => {
    expect(scrubber.scrubText(`password=${SECRET}; again ${SECRET}${SECRET}`)).toBe(`password=${M}; again ${M}${M}`);
    expect(scrubber.active).toBe(true);
  });

  it('replaces URL encodings: encodeURIComponent, lower-case hex, form encoding with +', () => {
    const component = encodeURIComponent(SECRET);
    expect(component).toBe('hunter2%20s3cr%26t%2F%C3%BC%2B');
    expect(scrubber.scrubText(`https://x.test/?q=${component}&n=1`)).toBe(`https://x.test/?q=${M}&n=1`);
    expect(scrubber.scrubText(`?q=${component.toLowerCase()}`)).toBe(`?q=${M}`);
    const form = new URLSearchParams({ q: SECRET }).toString();
    expect(form).toBe('q=hunter2+s3cr%26t%2F%C3%BC%2B');
    expect(scrubber.scrubText(form)).toBe(`q=${M}`);
    expect(scrubber.scrubText(form.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()))).toBe(`q=${M}`);
    const formSpecials = new Scrubber(["it's (ok)!~"]);
    expect(formSpecials.scrubText(new URLSearchParams({ q: "it's (ok)!~" }).toString())).toBe(`q=${M}`);
  });

  it('replaces hex, lower and upper case', () => {
    const hex = Buffer.from(SECRET).toString('hex');
    expect(scrubber.scrubText(`digest ${hex}.`)).toBe(`digest ${M}.`);
    expect(scrubber.scrubText(`DIGEST ${hex.toUpperCase()}.`)).toBe(`DIGEST ${M}.`);
  });

  it('replaces base64 and base64url encodings of the value on its own, padding included', () => {
    for (const secret of ['abcdefgh', 'abcdefghi', 'abcdefghij', '>>>???>>>???']) {
      const own = new Scrubber([secret]);
      const base64 = Buffer.from(secret).toString('base64');
      expect(own.scrubText(`"${base64}"`)).toBe(`"${M}"`);
      expect(own.scrubText(`"${base64.replace(/=+$/, '')}"`)).toBe(`"${M}"`);
      expect(own.scrubText(`"${Buffer.from(secret).toString('base64url')}"`)).toBe(`"${M}"`);
    }
  });

  it('replaces the stable middle of base64 when the value is inside a longer encoded string, at all 3 offsets', () => {
    const secret = 'Sup3r?S3cret>>~';
    const own = new Scrubber([secret]);
    for (let prefix = 0; prefix < 6; prefix++) {
      for (const encoding of ['base64', 'base64url'] as const) {
        const before = Buffer.alloc(prefix, 0x41 + prefix);
        const encoded = Buffer.concat([before, Buffer.from(secret), Buffer.from([0xfe, 0xfd])]).toString(encoding);
        const stable = stableBase64(Buffer.from(secret), prefix % 3, encoding);
        expect(stable.length).toBeGreaterThanOrEqual(Math.floor((secret.length * 8) / 6) - 2);
        expect(encoded).toContain(stable);
        expect(own.scrubText(`token ${encoded} end`), `${encoding}, ${prefix} bytes before`).toBe(
          `token ${encoded.replace(stable, M)} end`,
        );
      }
    }
  });

  it('replaces the password in an HTTP Basic credential', () => {
    for (const user of ['a', 'al', 'ali', 'alice']) {
      const header = `Authorization: Basic ${Buffer.from(`${user}:${SECRET}`).toString('base64')}`;
      const scrubbed = scrubber.scrubText(header);
      expect(scrubbed).toContain(M);
      expect(spellingsFound(scrubbed, secretSpellings(SECRET))).toEqual([]);
    }
  });

  it('replaces JSON-escaped values: quotes, backslashes, control characters, non-ASCII and \\u escapes', () => {
    const secret = 'pa"ss\\wörd\n\t✓😀';
    const own = new Scrubber([secret]);
    expect(own.scrubText(JSON.stringify({ password: secret }))).toBe(`{"password":"${M}"}`);
    const asciiOnly = JSON.stringify(secret).replace(
      /[\u0080-\uffff]/g,
      (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
    expect(asciiOnly).toBe('"pa\\"ss\\\\w\\u00f6rd\\n\\t\\u2713\\ud83d\\ude00"');
    expect(own.scrubText(`{"password": ${asciiOnly}}`)).toBe(`{"password": "${M}"}`);
    const asciiUpper = asciiOnly.replace(/\\u[0-9a-f]{4}/g, (escape) => `\\u${escape.slice(2).toUpperCase()}`);
    expect(asciiUpper).toContain('\\u00F6');
    expect(own.scrubText(`{"password": ${asciiUpper}}`)).toBe(`{"password": "${M}"}`);
    // A JSON document logged as a JSON string: escaped twice.
    const twice = JSON.stringify(JSON.stringify({ password: secret }));
    expect(own.scrubText(twice)).toBe(JSON.stringify(`{"password":"${M}"}`));
    const logged = JSON.stringify({ log: `login with ${secret}` });
    expect(JSON.parse(own.scrubText(logged))).toEqual({ log: `login with ${M}` });
  });

  it('skips values that would wreck a trace: /, *, http://, https://, blanks and values under 4 characters', () => {
    const skipped = new Scrubber(['/', '*', 'http://', 'https://', '', '   ', '    ', 'abc', 'é€😀']);
    expect(skipped.active).toBe(false);
    const text = 'GET https://example.test/a*b abc é€😀 http://x';
    expect(skipped.scrubText(text)).toBe(text);
    expect(skipped.scrubValue({ text })).toEqual({ text });
    const four = new Scrubber(['abcd', '/', 'https://']);
    expect(four.active).toBe(true);
    expect(four.scrubText('https://x.test/abcd')).toBe(`https://x.test/${M}`);
  });

  it('scrubs a 128 KB secret in every form, and refuses a larger one without printing it', () => {
    const secret = Buffer.alloc(MAX_SECRET_BYTES, 'Zq7-').toString('latin1');
    const big = new Scrubber([secret, 'short-secret']);
    const basic = Buffer.from(`user:${secret}`).toString('base64');
    const text = `a ${secret} b ${Buffer.from(secret).toString('hex')} c ${basic} d short-secret`;
    const scrubbed = big.scrubText(text);
    expect(scrubbed.length).toBeLessThan(200);
    expect(spellingsFound(scrubbed, secretSpellings(secret))).toEqual([]);
    expect(scrubbed).toMatch(/^a \*{5} b \*{5} c .{0,10}\*{5}.{0,4} d \*{5}$/);

    const tooLarge = `${secret}x`;
    let thrown: unknown;
    try {
      new Scrubber([tooLarge]);
    } catch (error) {
      thrown = error;
    }
    expect(errorCode(thrown)).toBe('SECRET_TOO_LARGE');
    expect(String((thrown as Error).message)).not.toContain('Zq7-');
  });

  it('leaves text without a secret as it is, and scrubs several secrets at once', () => {
    const text = 'nothing to see here: 8f14e45f ZXhhbXBsZQ== %2F';
    expect(scrubber.scrubText(text)).toBe(text);
    const several = new Scrubber(['first-secret', 'second-secret', 'first-secret-longer']);
    expect(several.scrubText('first-secret-longer first-secret second-secret')).toBe(`${M} ${M} ${M}`);
  });
});
