import type { FastifyInstance } from 'fastify';

/**
 * Raw bodies of any content type, or none: the scope's routes read the body
 * stream themselves (uploads streamed to disk, envelopes read with a limit);
 * nothing is parsed or buffered by Fastify.
 */
export function acceptRawBodies(scope: Pick<FastifyInstance, 'removeAllContentTypeParsers' | 'addContentTypeParser'>): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
}
