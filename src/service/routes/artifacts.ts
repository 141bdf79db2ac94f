/**
 * GET /v1/artifacts/{id}?expires=…&signature=…: an artifact's bytes through
 * the signed link a result gave out (see artifact-links.ts). No API key: the
 * link is the credential, so `npx playwright show-trace <link>` and
 * trace.playwright.dev can open a trace. Not in /openapi.json: it is a link
 * to follow, not an operation to call.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ServiceContext } from '../context.js';
import { sendErrorA } from '../http-errors.js';
import { getArtifact } from '../store/artifacts.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Types a browser may show in place; anything else is a download, never rendered on the service's origin. */
const SHOWN_IN_PLACE = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'video/webm',
  'video/mp4',
  'text/plain',
  'application/json',
]);

/** A trace must reach `playwright show-trace` and trace.playwright.dev as a zip, whatever the upload declared. */
function contentTypeOf(name: string, stored: string): string {
  return /\.zip$/i.test(name) ? 'application/zip' : stored;
}

export const artifactRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/v1/artifacts/:id',
      {
        schema: {
          hide: true,
          params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
          querystring: Type.Object({
            expires: Type.Optional(Type.String({ maxLength: 20 })),
            signature: Type.Optional(Type.String({ maxLength: 200 })),
          }),
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        const { expires, signature } = request.query;
        // The signature first: a forged or stale link learns nothing, not even whether the artifact exists.
        const verdict =
          expires === undefined || signature === undefined || !/^\d{1,15}$/.test(expires)
            ? 'invalid'
            : ctx.artifactLinks.verify(id, Number(expires), signature);
        if (verdict === 'invalid') return sendErrorA(reply, 403, 'This artifact link is not valid: take the link from the check result');
        if (verdict === 'expired') {
          return sendErrorA(reply, 403, 'This artifact link has expired: read the check result again for a fresh link');
        }
        const artifact = UUID.test(id) ? await getArtifact(ctx.db, id) : undefined;
        const size = artifact ? await stat(artifact.path).then((found) => (found.isFile() ? found.size : undefined), () => undefined) : undefined;
        if (!artifact || size === undefined) return sendErrorA(reply, 404, 'Artifact not found: it may have been deleted with its check');

        const contentType = contentTypeOf(artifact.name, artifact.content_type);
        const disposition = SHOWN_IN_PLACE.has(contentType) ? 'inline' : 'attachment';
        const secondsLeft = Math.max(0, Number(expires) - Math.floor(Date.now() / 1000));
        void reply
          .header('content-type', contentType)
          .header('content-length', String(size))
          // Names follow ^[A-Za-z0-9][A-Za-z0-9._-]*$ (the upload route's rule): nothing to quote or escape.
          .header('content-disposition', `${disposition}; filename="${artifact.name}"`)
          .header('x-content-type-options', 'nosniff')
          .header('content-security-policy', "default-src 'none'; sandbox")
          .header('cache-control', `private, max-age=${secondsLeft}`)
          // The link is the credential and no cookie is involved: any page holding it may read it
          // (trace.playwright.dev fetches the trace from the browser).
          .header('access-control-allow-origin', '*')
          .header('cross-origin-resource-policy', 'cross-origin');
        return reply.send(createReadStream(artifact.path));
      },
    );
  };
