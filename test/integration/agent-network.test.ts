import { execFile } from 'node:child_process';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect, type AddressInfo } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createErrorReporter } from '../../src/agent/error-reporting/error-reporter.js';
import { ServiceClient } from '../../src/agent/service-client.js';
import { Secret } from '../../src/config/secret.js';
import { selfSignedCertificate, type Certificate } from '../support/certificate.js';
import { startSentryReceiver } from '../support/sentry-receiver.js';

const KEY = new Secret(`pl_${'n'.repeat(40)}`);
const HELLO = {
  agentId: '6f1c7a52-3b7e-4d2a-9a4b-0c1d2e3f4a5b',
  version: 'test',
  hostname: 'h',
  mode: 'uptime' as const,
  checkTypes: ['URL' as const],
  runtimes: [],
  capacity: { uptime: 1, script: 0 },
};
const ANSWER = JSON.stringify({ privateLocation: { id: 'l', slugName: 'office', name: 'Office' }, leaseSeconds: 300, maxWaitSeconds: 1 });

/** A fake service answering hello, on plain HTTP or HTTPS. */
function fakeService(handler = (_request: IncomingMessage, response: ServerResponse) => response.end(ANSWER)): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    request.resume();
    request.on('end', () => {
      response.setHeader('content-type', 'application/json');
      handler(request, response);
    });
  };
}

const servers: Server[] = [];
async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return (server.address() as AddressInfo).port;
}
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
});

describe('the agent\'s calls to the service through a proxy', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const name of ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy']) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  /** A forward proxy on loopback that tunnels CONNECT and forwards absolute-form requests, counting both. */
  async function startProxy(): Promise<{ url: string; seen: string[] }> {
    const seen: string[] = [];
    const proxy = createServer((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      const target = new URL(request.url ?? '');
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: request.method, headers: request.headers },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      request.pipe(upstream);
    });
    proxy.on('connect', (request: IncomingMessage, socket, head: Buffer) => {
      seen.push(`CONNECT ${request.url}`);
      const [host, port] = (request.url ?? '').split(':');
      const upstream = connect(Number(port), host, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(socket);
        socket.pipe(upstream);
      });
      upstream.on('error', () => socket.destroy());
    });
    return { url: `http://127.0.0.1:${await listen(proxy)}`, seen };
  }

  it('goes through HTTP_PROXY', async () => {
    const servicePort = await listen(createServer(fakeService()));
    const proxy = await startProxy();
    process.env.HTTP_PROXY = proxy.url;
    delete process.env.NO_PROXY;
    delete process.env.no_proxy;
    const client = new ServiceClient(`http://127.0.0.1:${servicePort}`, KEY);
    const answer = await client.hello(HELLO);
    await client.close();
    expect(answer.privateLocation.slugName).toBe('office');
    expect(proxy.seen.join('\n')).toContain(`127.0.0.1:${servicePort}`);
  });

  it('goes straight to a host named in NO_PROXY', async () => {
    const servicePort = await listen(createServer(fakeService()));
    const proxy = await startProxy();
    process.env.HTTP_PROXY = proxy.url;
    process.env.NO_PROXY = '127.0.0.1';
    const client = new ServiceClient(`http://127.0.0.1:${servicePort}`, KEY);
    await client.hello(HELLO);
    await client.close();
    expect(proxy.seen).toEqual([]);
  });

  it('sends error events through HTTP_PROXY as well', async () => {
    const receiver = await startSentryReceiver();
    const proxy = await startProxy();
    process.env.HTTP_PROXY = proxy.url;
    delete process.env.NO_PROXY;
    delete process.env.no_proxy;
    const reporter = createErrorReporter({ dsn: receiver.dsn, sendsKey: false }, { apiKey: KEY, secrets: [] });
    reporter.capture('the error line', new Error('through the proxy'));
    await reporter.close(5000);
    await receiver.close();
    expect(receiver.events().map((event: { exception?: { values: { value: string }[] } }) => event.exception?.values[0]?.value)).toEqual(['through the proxy']);
    expect(proxy.seen.join('\n')).toContain(new URL(receiver.dsn).host);
  });
});

describe('NODE_EXTRA_CA_CERTS', () => {
  let certificate: Certificate;
  let port: number;
  const run = promisify(execFile);
  const distClient = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist/agent/service-client.js');
  const distSecret = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist/config/secret.js');

  beforeAll(async () => {
    certificate = selfSignedCertificate();
    const server = createHttpsServer({ key: certificate.key, cert: certificate.cert }, fakeService());
    servers.push(server);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => certificate?.remove());

  /** Node reads NODE_EXTRA_CA_CERTS at start only, so each case is a fresh process. */
  const helloFrom = (env: Record<string, string>) =>
    run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { ServiceClient } = await import(${JSON.stringify(distClient)});
         const { Secret } = await import(${JSON.stringify(distSecret)});
         const client = new ServiceClient('https://localhost:${port}', new Secret('${KEY.reveal()}'));
         try { const answer = await client.hello(${JSON.stringify(HELLO)}); console.log('ok', answer.privateLocation.slugName); }
         catch (error) { console.log('failed', error.code, error.message); }
         finally { await client.close(); }`,
      ],
      { env: { PATH: process.env.PATH ?? '', ...env } },
    );

  it('trusts the service\'s private CA when the agent is given it', async () => {
    const { stdout } = await helloFrom({ NODE_EXTRA_CA_CERTS: certificate.certPath });
    expect(stdout.trim()).toBe('ok office');
  });

  it('refuses the same certificate without it, and says why', async () => {
    const { stdout } = await helloFrom({});
    expect(stdout).toMatch(/^failed SERVICE_UNREACHABLE Cannot reach the service at https:\/\/localhost:\d+: .*certificate/);
  });
});
