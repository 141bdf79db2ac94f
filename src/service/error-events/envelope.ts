/**
 * Sentry's envelope format, as agents send error events: newline-separated
 * JSON, first the envelope's header, then each item's header and payload. An
 * item header may give the payload's `length` in bytes; without it the
 * payload runs to the end of its line.
 */
import { EnvelopeInvalidError } from '../../errors/index.js';

export interface EnvelopeItem {
  type: string;
  payload: unknown;
}

export function parseEnvelope(body: Buffer): EnvelopeItem[] {
  let offset = body.indexOf(0x0a);
  if (offset < 0) return [];
  parseJson(body.subarray(0, offset), 'envelope header');
  offset += 1;
  const items: EnvelopeItem[] = [];
  while (offset < body.length) {
    const headerEnd = lineEnd(body, offset);
    const headerBytes = body.subarray(offset, headerEnd);
    offset = headerEnd + 1;
    if (headerBytes.length === 0) continue;
    const header = parseJson(headerBytes, 'item header') as { type?: unknown; length?: unknown };
    const length = typeof header.length === 'number' && header.length >= 0 ? header.length : undefined;
    const payloadEnd = length !== undefined ? offset + length : lineEnd(body, offset);
    if (payloadEnd > body.length) throw new EnvelopeInvalidError('An envelope item is shorter than its header says');
    const payload = body.subarray(offset, payloadEnd);
    offset = payloadEnd + 1;
    const type = typeof header.type === 'string' ? header.type : '';
    // Only events are read; attachments and other items are skipped unread.
    items.push({ type, payload: type === 'event' ? parseJson(payload, 'event') : undefined });
  }
  return items;
}

function lineEnd(body: Buffer, from: number): number {
  const end = body.indexOf(0x0a, from);
  return end < 0 ? body.length : end;
}

function parseJson(bytes: Buffer, what: string): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new EnvelopeInvalidError(`The envelope's ${what} is not JSON`);
  }
}
