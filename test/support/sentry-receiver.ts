import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface ReceivedEnvelope {
  path: string;
  headers: IncomingHttpHeaders;
  /** The body as it arrived, decompressed: what a test searches for anything that must not be there. */
  raw: string;
  header: Record<string, unknown>;
  items: { header: Record<string, unknown>; payload: any }[];
}

export interface SentryReceiver {
  /** A DSN whose envelopes come here. */
  dsn: string;
  envelopes: ReceivedEnvelope[];
  /** Every event item received so far. */
  events(): any[];
  close(): Promise<void>;
}

/**
 * A receiver of Sentry's envelope protocol on loopback: POST
 * `/api/<project>/envelope/`, a body of newline-separated JSON: the envelope
 * header, then for each item its header and its payload.
 */
export async function startSentryReceiver(): Promise<SentryReceiver> {
  const envelopes: ReceivedEnvelope[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let body = Buffer.concat(chunks);
      if (request.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      const raw = body.toString('utf8');
      if (request.method === 'POST' && /\/api\/\d+\/envelope\/?$/.test(new URL(request.url ?? '/', 'http://x').pathname)) {
        envelopes.push({ path: request.url ?? '', headers: request.headers, raw, ...parseEnvelope(raw) });
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{}');
      } else {
        response.writeHead(404);
        response.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    dsn: `http://testkey@127.0.0.1:${port}/1`,
    envelopes,
    events: () => envelopes.flatMap((envelope) => envelope.items.filter((item) => item.header.type === 'event').map((item) => item.payload)),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function parseEnvelope(raw: string): Pick<ReceivedEnvelope, 'header' | 'items'> {
  const lines = raw.split('\n');
  const header = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
  const items: ReceivedEnvelope['items'] = [];
  for (let index = 1; index + 1 < lines.length; index += 2) {
    if (!lines[index]) continue;
    const itemHeader = JSON.parse(lines[index]!) as Record<string, unknown>;
    const payload = lines[index + 1] ?? '';
    let parsed: unknown = payload;
    try {
      parsed = JSON.parse(payload);
    } catch {
      // An attachment: kept as text.
    }
    items.push({ header: itemHeader, payload: parsed });
  }
  return { header, items };
}
