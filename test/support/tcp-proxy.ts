/**
 * A loopback TCP proxy in front of a real server (PostgreSQL, Redis, the
 * service), for faults a test causes on purpose: every connection through it
 * cut at once, or the port refusing connections for a while.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { closedPort } from './target.js';

export interface TcpProxy {
  /** The proxy's own loopback port. */
  readonly port: number;
  /** Connections it has forwarded since it started. */
  readonly accepted: number;
  /** Destroys every open connection (both sides); new ones are still forwarded. */
  cutConnections(): void;
  /** Stops listening and cuts every connection: the port refuses connections until `open`. */
  refuse(): Promise<void>;
  /** Listens again on the same port. */
  open(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const port = await closedPort();
  const sockets = new Set<Socket>();
  let accepted = 0;
  let server: Server | undefined;

  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const listen = async () => {
    const next = createServer((client) => {
      accepted += 1;
      const upstream = connect(targetPort, targetHost);
      track(client);
      track(upstream);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => resolve());
    });
    server = next;
  };
  const cutConnections = () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };
  const refuse = async () => {
    const current = server;
    server = undefined;
    cutConnections();
    if (current) await new Promise<void>((resolve) => current.close(() => resolve()));
  };

  await listen();
  return {
    port,
    get accepted() {
      return accepted;
    },
    cutConnections,
    refuse,
    open: async () => {
      if (!server) await listen();
    },
    close: refuse,
  };
}
