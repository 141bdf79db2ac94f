/**
 * The spellings of a secret a scrubbed output must no longer hold, worked out
 * here independently of src/scrub so the tests do not grade the scrubber
 * against itself.
 */

/** Every spelling, for searching outputs: plain, URL, JSON, hex, and base64 on its own and inside longer strings. */
export function secretSpellings(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const json = JSON.stringify(secret).slice(1, -1);
  const spellings = [
    secret,
    encodeURIComponent(secret),
    encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
    new URLSearchParams({ q: secret }).toString().slice(2),
    json,
    json.replace(/[\u0080-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
    ...[0, 1, 2].map((offset) => stableBase64(bytes, offset, 'base64')),
    ...[0, 1, 2].map((offset) => stableBase64(bytes, offset, 'base64url')),
  ];
  return [...new Set(spellings)];
}

/**
 * The characters of base64(prefix + secret + suffix) that do not depend on the
 * prefix and suffix, for a prefix of `offset` bytes: encode with all-zero and
 * all-one neighbours and keep the run where the two agree. A character that
 * holds any neighbour bit differs between the two.
 */
export function stableBase64(secret: Buffer, offset: number, encoding: 'base64' | 'base64url'): string {
  const around = (fill: number): string =>
    Buffer.concat([Buffer.alloc(offset, fill), secret, Buffer.alloc(3, fill)]).toString(encoding);
  const zeros = around(0x00);
  const ones = around(0xff);
  let best = '';
  let run = '';
  for (let index = 0; index < zeros.length; index++) {
    run = zeros[index] === ones[index] ? run + zeros[index] : '';
    if (run.length > best.length) best = run;
  }
  return best;
}

/** Which of `spellings` occur in `data`. */
export function spellingsFound(data: Buffer | string, spellings: string[]): string[] {
  const buffer = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  return spellings.filter((spelling) => buffer.includes(Buffer.from(spelling, 'utf8')));
}
