/** An API check's request before it is sent: placeholders, body encoding, and what a setup script may hand back. */
import { describe, expect, it } from 'vitest';
import { checkScriptRequest, encodeBody, prepareRequest, replacePlaceholders, resolveAssertions } from '../../src/agent/api-check/request.js';
import type { ApiRequest } from '../../src/protocol/api-settings.js';

const base: ApiRequest = {
  method: 'GET',
  url: 'https://api.example.test/v1',
  headers: [],
  queryParameters: [],
  body: '',
  bodyType: 'NONE',
  basicAuth: null,
  followRedirects: true,
  skipSSL: false,
  ipFamily: 'IPv4',
  assertions: [],
};

describe('API check requests', () => {
  it('replaces {{NAME}} and {{ NAME }}, leaving unknown names as written', () => {
    const vars = new Map([['A', '1'], ['B_2', 'two']]);
    expect(replacePlaceholders('{{A}}-{{ B_2 }}-{{C}}-{A}', vars)).toBe('1-two-{{C}}-{A}');
  });

  it('fills url, headers, query, body and basic auth, and adds the implied headers', () => {
    const request = prepareRequest(
      {
        ...base,
        method: 'POST',
        url: '{{BASE}}/orders',
        headers: [{ key: 'X-{{NAME}}', value: '{{VALUE}}' }],
        queryParameters: [{ key: 'q', value: '{{VALUE}}' }],
        bodyType: 'JSON',
        body: '{"v":"{{VALUE}}"}',
        basicAuth: { username: 'u', password: '{{VALUE}}' },
      },
      [
        { key: 'BASE', value: 'http://h', secret: false },
        { key: 'NAME', value: 'Name', secret: false },
        { key: 'VALUE', value: 's3cret', secret: true },
      ],
    );
    expect(request).toEqual({
      method: 'POST',
      url: 'http://h/orders',
      headers: { 'X-Name': 's3cret', 'Content-Type': 'application/json', Authorization: `Basic ${Buffer.from('u:s3cret').toString('base64')}` },
      queryParameters: { q: 's3cret' },
      body: '{"v":"s3cret"}',
    });
  });

  it('encodes bodies by type', () => {
    expect(encodeBody('FORM', '{"a":"x y","b":[1,2],"c":{"d":1}}')).toEqual({
      body: 'a=x+y&b=1&b=2&c=%7B%22d%22%3A1%7D',
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(encodeBody('FORM', 'a=1&b=2').body).toBe('a=1&b=2');
    expect(encodeBody('GRAPHQL', '{ me { id } }').body).toBe('{"query":"{ me { id } }"}');
    expect(encodeBody('GRAPHQL', '{"query":"{ me { id } }"}').body).toBe('{"query":"{ me { id } }"}');
    expect(encodeBody('RAW', 'x')).toEqual({ body: 'x' });
    expect(encodeBody('NONE', 'ignored')).toEqual({ body: '' });
  });

  it('fills assertion targets and properties', () => {
    expect(resolveAssertions([{ source: 'JSON_BODY', property: '$.{{F}}', comparison: 'EQUALS', target: '{{V}}' }], [
      { key: 'F', value: 'id', secret: false },
      { key: 'V', value: '7', secret: false },
    ])).toEqual([{ source: 'JSON_BODY', property: '$.id', comparison: 'EQUALS', target: '7' }]);
  });

  it('takes back a request a setup script changed, and refuses one it broke', () => {
    expect(checkScriptRequest({ method: 'post', url: 'http://h/', headers: { 'X-N': 1 }, queryParameters: {}, body: { a: 1 } })).toEqual({
      method: 'POST',
      url: 'http://h/',
      headers: { 'X-N': '1' },
      queryParameters: {},
      body: '{"a":1}',
    });
    expect(() => checkScriptRequest({ method: 'BREW', url: 'http://h/' })).toThrow(/request.method/);
    expect(() => checkScriptRequest({ method: 'GET', url: 'file:///etc/passwd' })).toThrow(/http: or https:/);
    expect(() => checkScriptRequest({ method: 'GET', url: 'http://h/', headers: { 'Bad Name': 'x' } })).toThrow(/header name/);
    expect(() => checkScriptRequest({ method: 'GET', url: 'http://h/', headers: { X: 'a\r\nInjected: 1' } })).toThrow(/line breaks/);
    expect(() => checkScriptRequest(null)).toThrow(/no request/);
  });
});
