import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spellingsFound } from './secret-spellings.js';

/** One request a hostile script made, as the attacker got it. */
export interface StolenRequest {
  /** When it arrived (Date.now()). */
  at: number;
  method: string;
  path: string;
  body: Buffer;
  /** The body as the scripts encode their finds (hex of the bytes reversed), decoded; undefined when it is not such. */
  decoded: Buffer | undefined;
}

export interface Attacker {
  /** Where hostile scripts send what they found: a loopback address. */
  url: string;
  requests: StolenRequest[];
  /** Requests that arrived after `time`. */
  since(time: number): StolenRequest[];
  /** For each request holding one of the secrets (in any of the spellings given): where, and which. */
  leaks(secrets: Record<string, string[]>): string[];
  close(): Promise<void>;
}

const BODY_LIMIT = 64 * 1024 * 1024;

/** Undoes the scripts' encoding: hex of the bytes in reverse order, which no scrubber on the way recognises. */
export function decodeStolen(body: Buffer): Buffer | undefined {
  const text = body.toString('latin1').trim();
  if (text.length === 0 || text.length % 2 !== 0 || !/^[0-9a-f]+$/i.test(text)) return undefined;
  return Buffer.from(text, 'hex').reverse();
}

/** An HTTP server on loopback that takes whatever it is sent and keeps it for the test to search. */
export async function startAttacker(): Promise<Attacker> {
  const requests: StolenRequest[] = [];
  const server = createServer((request, response) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= BODY_LIMIT) chunks.push(chunk);
    });
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ at, method: request.method ?? 'GET', path: request.url ?? '/', body, decoded: decodeStolen(body) });
      response.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
    });
    request.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    since: (time) => requests.filter((request) => request.at > time),
    leaks(secrets) {
      const found: string[] = [];
      for (const request of requests) {
        let path = request.path;
        try {
          path = decodeURIComponent(request.path);
        } catch {
          // kept as sent
        }
        for (const [what, spellings] of Object.entries(secrets)) {
          for (const [part, data] of [
            ['path', Buffer.from(`${request.path} ${path}`)],
            ['body', request.body],
            ['decoded body', request.decoded],
          ] as const) {
            if (data && spellingsFound(data, spellings).length > 0) found.push(`${request.method} ${path} (${part}): ${what}`);
          }
        }
      }
      return found;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
