import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { HeaderScrubStream } from '../../src/scrub/header-scrub-stream.js';
import { SCRUB_MARKER } from '../../src/scrub/index.js';
import { isSensitiveHeader, scrubHeadersInLine } from '../../src/scrub/sensitive-headers.js';

const M = SCRUB_MARKER;

const snapshot = {
  type: 'resource-snapshot',
  snapshot: {
    request: {
      method: 'GET',
      url: 'https://app.test/',
      headers: [
        { name: 'authorization', value: 'Bearer eyJhbGciOi' },
        { name: 'Cookie', value: 'session=abc123' },
        { name: 'Accept', value: 'text/html' },
        { name: 'X-API-KEY', value: 'k-1' },
      ],
    },
    response: {
      status: 200,
      headers: [
        { name: 'Set-Cookie', value: 'session=def456; HttpOnly' },
        { name: 'Content-Type', value: 'text/html' },
      ],
    },
  },
};
const apiCall = {
  type: 'before',
  callId: 'call@12',
  method: 'fetch',
  params: {
    url: 'https://api.test/items',
    headers: [
      { name: 'X-Auth-Token', value: 't-2' },
      { name: 'Proxy-Authorization', value: 'Basic cDpx' },
    ],
  },
};

describe('sensitive headers', () => {
  it('names the credential headers, whatever their case', () => {
    for (const name of ['Authorization', 'proxy-authorization', 'COOKIE', 'Set-Cookie', 'x-api-key', 'X-Auth-Token']) {
      expect(isSensitiveHeader(name)).toBe(true);
    }
    expect(isSensitiveHeader('Accept')).toBe(false);
    expect(isSensitiveHeader('X-Authorization-Hint')).toBe(false);
  });

  it('replaces their values in {name, value} arrays of resource snapshots and API call params', () => {
    const scrubbed = JSON.parse(scrubHeadersInLine(JSON.stringify(snapshot), M));
    expect(scrubbed.snapshot.request.headers).toEqual([
      { name: 'authorization', value: M },
      { name: 'Cookie', value: M },
      { name: 'Accept', value: 'text/html' },
      { name: 'X-API-KEY', value: M },
    ]);
    expect(scrubbed.snapshot.response.headers).toEqual([
      { name: 'Set-Cookie', value: M },
      { name: 'Content-Type', value: 'text/html' },
    ]);
    expect(JSON.parse(scrubHeadersInLine(JSON.stringify(apiCall), M)).params.headers).toEqual([
      { name: 'X-Auth-Token', value: M },
      { name: 'Proxy-Authorization', value: M },
    ]);
  });

  it('replaces them in plain header objects a script passed to a request, and only there', () => {
    const call = {
      type: 'before',
      method: 'fetch',
      params: {
        url: 'http://127.0.0.1/echo',
        headers: { 'x-api-key': 'k-1', Cookie: 'c-2', accept: 'application/json' },
        extraHTTPHeaders: { Authorization: 'Bearer t-3' },
        data: { cookie: 'a body field, not a header' },
      },
    };
    const scrubbed = JSON.parse(scrubHeadersInLine(JSON.stringify(call), M));
    expect(scrubbed.params.headers).toEqual({ 'x-api-key': M, Cookie: M, accept: 'application/json' });
    expect(scrubbed.params.extraHTTPHeaders).toEqual({ Authorization: M });
    expect(scrubbed.params.data).toEqual({ cookie: 'a body field, not a header' });
  });

  it('replaces them in an API call\'s logged request lines and in network entries\' cookie lists', () => {
    const logged = { type: 'log', callId: 'call@5', message: '  x-api-key: k-1' };
    expect(JSON.parse(scrubHeadersInLine(JSON.stringify(logged), M)).message).toBe(`  x-api-key: ${M}`);
    const other = { type: 'log', callId: 'call@5', message: '  accept: */*' };
    expect(scrubHeadersInLine(JSON.stringify(other), M)).toBe(JSON.stringify(other));
    const entry = { type: 'resource-snapshot', snapshot: { request: { cookies: [{ name: 'session', value: 's-9' }], headers: [{ name: 'Cookie', value: 'session=s-9' }] } } };
    const scrubbed = JSON.parse(scrubHeadersInLine(JSON.stringify(entry), M));
    expect(scrubbed.snapshot.request.cookies).toEqual([{ name: 'session', value: M }]);
  });

  it('leaves lines without such headers, and lines that are not JSON, exactly as they were', () => {
    const plain = '{"type":"log","text":"no headers here",  "n": 1.50}';
    expect(scrubHeadersInLine(plain, M)).toBe(plain);
    const mentions = '{"type":"log","text":"the cookie banner was closed"}';
    expect(scrubHeadersInLine(mentions, M)).toBe(mentions);
    const broken = '{"headers":[{"name":"Cookie","value":"a"}';
    expect(scrubHeadersInLine(broken, M)).toBe(broken);
  });

  it('streams NDJSON line by line across chunk boundaries, keeping untouched lines byte for byte', async () => {
    const long = { type: 'frame-snapshot', html: 'é'.repeat(300_000), headers: [{ name: 'Cookie', value: 'c=1' }] };
    const lines = [
      JSON.stringify({ type: 'context-options', version: 8 }),
      JSON.stringify(snapshot),
      '{"type":"log",  "text":"spacing kept"}',
      JSON.stringify(long),
      JSON.stringify(apiCall),
    ];
    const last = JSON.stringify(snapshot);
    const input = Buffer.from(`${lines.join('\n')}\r\n${last}`);
    const scrubbedLines = lines.map((line) => scrubHeadersInLine(line, M));
    const expected = Buffer.from(`${scrubbedLines.join('\n')}\r\n${scrubHeadersInLine(last, M)}`);
    for (const size of [1, 7, 64, 4096, 65536, input.length]) {
      const chunks: Buffer[] = [];
      for (let start = 0; start < input.length; start += size) chunks.push(input.subarray(start, start + size));
      const output = await buffer(Readable.from(chunks).pipe(new HeaderScrubStream(M)));
      expect(output.equals(expected), `chunks of ${size} bytes`).toBe(true);
    }
    const text = expected.toString();
    expect(text).toContain('{"type":"log",  "text":"spacing kept"}');
    expect(text).not.toMatch(/eyJhbGciOi|abc123|def456|c=1|k-1|t-2/);
  });
});
