/**
 * A secret inside a longer base64 string (HTTP Basic auth is
 * base64("user:" + secret)) is not encoded on its own: base64 turns 3 bytes
 * into 4 characters, so how the secret encodes depends on where it starts
 * modulo 3. For each of the 3 alignments, the characters whose 6 bits all come
 * from the secret are the same whatever surrounds it; those are the fragment
 * to look for. Only the 1 to 2 characters at each end, which mix the secret's
 * bits with its neighbours', are left.
 */

/**
 * Fragments shorter than this are not searched for: they turn up by chance in
 * unrelated base64 data (a 4-character fragment once in every 16 million
 * positions). The fragments of a 4-byte secret are 4 to 5 characters; those of
 * a 5-byte one are 6.
 */
export const MIN_FRAGMENT_LENGTH = 6;

export function base64Fragments(bytes: Buffer, encoding: 'base64' | 'base64url'): string[] {
  const fragments: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    // Zero bytes stand in for whatever precedes the secret; the fragment never includes their bits.
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString(encoding);
    const firstBit = 8 * offset;
    const endBit = 8 * (offset + bytes.length);
    const fragment = encoded.slice(Math.ceil(firstBit / 6), Math.floor(endBit / 6));
    if (fragment.length >= MIN_FRAGMENT_LENGTH) fragments.push(fragment);
  }
  return fragments;
}
