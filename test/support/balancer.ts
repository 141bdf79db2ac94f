/**
 * A loopback HTTP load balancer in front of several service instances, as a
 * deployment puts one in front of its replicas: each request goes to the
 * next instance in turn. A request an instance refused to connect (it is
 * down) goes to the next one; one an instance took and then lost (it died
 * mid-request) is answered 502, as a real balancer answers it: the client
 * cannot know whether it was done.
 */
import { Agent, createServer, request as forward, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Balancer {
  readonly url: string;
  /** Requests each backend answered, by its port, in the order the ports were given. */
  answeredBy(): number[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

export async function startBalancer(ports: readonly number[]): Promise<Balancer> {
  const answered = ports.map(() => 0);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  let next = 0;

  const headersOf = (incoming: IncomingMessage, length: number) => {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(incoming.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    }
    headers['content-length'] = String(length);
    return headers;
  };

  const attempt = (incoming: IncomingMessage, outgoing: ServerResponse, body: Buffer, tried: number) => {
    if (tried >= ports.length) {
      outgoing.writeHead(503, { 'content-type': 'text/plain' }).end('no backend answers');
      return;
    }
    const index = next;
    next = (next + 1) % ports.length;
    const upstream = forward(
      { host: '127.0.0.1', port: ports[index], method: incoming.method, path: incoming.url, headers: headersOf(incoming, body.length), agent },
      (answer) => {
        const headers: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(answer.headers)) {
          if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
        }
        outgoing.writeHead(answer.statusCode ?? 502, headers);
        answer.pipe(outgoing);
        answer.once('end', () => (answered[index]! += 1));
        answer.once('error', () => outgoing.destroy());
      },
    );
    upstream.once('error', (error: NodeJS.ErrnoException) => {
      if (outgoing.headersSent) return outgoing.destroy();
      // Never reached the instance: nothing was done there, so another may take it.
      if (error.code === 'ECONNREFUSED') return attempt(incoming, outgoing, body, tried + 1);
      outgoing.writeHead(502, { 'content-type': 'text/plain' }).end(`backend failed: ${error.code ?? error.message}`);
    });
    // A client that leaves (an agent giving up its long poll) leaves the instance too.
    outgoing.once('close', () => {
      if (!outgoing.writableFinished) upstream.destroy();
    });
    upstream.end(body);
  };

  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.once('end', () => attempt(incoming, outgoing, Buffer.concat(chunks), 0));
    incoming.once('error', () => outgoing.destroy());
  });
  // Long polls are held for up to a minute.
  server.requestTimeout = 0;
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    answeredBy: () => [...answered],
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
    },
  };
}
