import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, Dispatcher as PublicDispatcher, EnvHttpProxyAgent as PublicEnvHttpProxyAgent } from 'undici';
import api from 'undici/lib/api/index.js';
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnvHttpProxyAgent, request } from '../../src/agent/service-http.js';

describe('the parts of undici the service client loads on their own', () => {
  // If undici moves or replaces any of these files, the agent would load something that is not
  // what undici exports: these fail first.
  it('are the very objects undici exports', () => {
    expect(EnvHttpProxyAgent).toBe(PublicEnvHttpProxyAgent);
    expect(Dispatcher).toBe(PublicDispatcher);
  });

  it('give dispatchers every method undici’s index gives them', () => {
    const methods = Object.entries(api);
    expect(methods.map(([name]) => name)).toEqual(expect.arrayContaining(['request', 'connect']));
    for (const [name, method] of methods) {
      expect(Object.getOwnPropertyDescriptor(PublicDispatcher.prototype, name)?.value).toBe(method);
    }
  });
});

describe('request', () => {
  let server: Server;
  let base: string;
  const seen: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const dispatcher = new Agent();

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
        res.writeHead(req.url?.startsWith('/missing') ? 404 : 200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await dispatcher.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends the method, headers and body to the URL’s path and query, through the dispatcher given', async () => {
    let dispatched = 0;
    const counting = dispatcher.compose((dispatch) => (options, handler) => {
      dispatched += 1;
      return dispatch(options, handler);
    });
    const response = await request(`${base}/prefix/v1/agent/results?batch=2&x=%20y`, {
      method: 'POST',
      dispatcher: counting,
      headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
      body: '{"results":[]}',
    });
    expect(response.statusCode).toBe(200);
    expect(await response.body.json()).toEqual({ ok: true });
    expect(dispatched).toBe(1);
    expect(seen.at(-1)).toMatchObject({
      method: 'POST',
      url: '/prefix/v1/agent/results?batch=2&x=%20y',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: '{"results":[]}',
    });
  });

  it('answers with the status the server gave, not an error', async () => {
    const response = await request(`${base}/missing`, { method: 'GET', dispatcher });
    expect(response.statusCode).toBe(404);
    await response.body.dump();
  });

  it('rejects when the call is aborted', async () => {
    await expect(
      request(`${base}/v1/agent/hello`, { method: 'POST', dispatcher, body: '{}', signal: AbortSignal.abort() }),
    ).rejects.toThrow(/abort/i);
  });

  it('rejects an address undici cannot reach, as undici does', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(request(`http://127.0.0.1:${port}/`, { method: 'GET', dispatcher })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
