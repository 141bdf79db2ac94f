import type { FastifyInstance } from 'fastify';

/**
 * The public `checkly` CLI (axios) posts a call that takes no input with
 * `content-type: application/x-www-form-urlencoded` and an empty body. In the
 * scope of `app`, such a request reads as one without a body; a form with
 * content is still refused (415): the API takes JSON.
 */
export function acceptEmptyFormBodies(app: FastifyInstance): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(null, undefined);
    done(Object.assign(new Error('Send the body as application/json'), { statusCode: 415 }), undefined);
  });
}
