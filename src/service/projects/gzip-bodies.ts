import { PassThrough, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { FastifyRequest } from 'fastify';

/**
 * preParsing hook: a body sent with `Content-Encoding: gzip` (as `checkly
 * deploy` sends its project) is inflated before it is parsed. The route's
 * bodyLimit then bounds the inflated size, so a small bomb cannot grow
 * without limit; the compressed bytes are what Content-Length is matched to.
 */
export async function gunzipBodies(request: FastifyRequest, _reply: unknown, payload: Readable): Promise<Readable> {
  const encoding = (request.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  if (encoding === 'identity') return payload;
  if (encoding !== 'gzip') {
    throw Object.assign(new Error(`Unsupported Content-Encoding "${encoding}": send the body as gzip or unencoded`), { statusCode: 415 });
  }
  let received = 0;
  payload.on('data', (chunk: Buffer) => (received += chunk.length));
  const inflated = new PassThrough();
  const gunzip = createGunzip();
  gunzip.on('error', () => inflated.destroy(Object.assign(new Error('The request body is not valid gzip'), { statusCode: 400 })));
  payload.on('error', (error) => inflated.destroy(error));
  payload.pipe(gunzip).pipe(inflated);
  Object.defineProperty(inflated, 'receivedEncodedLength', { get: () => received });
  return inflated;
}
