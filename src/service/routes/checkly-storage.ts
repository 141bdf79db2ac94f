/**
 * Where the public `checkly` CLI uploads a project's code bundle before
 * `test` (and `deploy`): the bytes become a code bundle of the account, and
 * the key answered is its id, which Playwright check suites name.
 */
import { randomUUID } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { MAX_CODE_BUNDLE_BYTES } from '../../protocol/playwright-settings.js';
import { ArtifactTooLargeError, storeArtifact } from '../artifacts.js';
import type { ServiceContext } from '../context.js';
import { sendError } from '../http-errors.js';
import { acceptRawBodies } from '../raw-bodies.js';
import { ErrorA, ErrorB } from '../schemas/common.js';
import { insertCodeBundle } from '../store/code-bundles.js';

const UPLOAD_PATH = '/next/checkly-storage/upload-code-bundle';
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);
// The CLI reads the limit out of this sentence to say how much too large a bundle is.
const TOO_LARGE = `Payload content length greater than maximum allowed: ${MAX_CODE_BUNDLE_BYTES}`;

async function isGzip(path: string): Promise<boolean> {
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(GZIP_MAGIC.length);
    const { bytesRead } = await file.read(head, 0, head.length, 0);
    return bytesRead === head.length && head.equals(GZIP_MAGIC);
  } finally {
    await file.close();
  }
}

export const checklyStorageRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    // Deploys upload the same way; whichever feature registers the route first serves both.
    if (app.hasRoute({ method: 'POST', url: UPLOAD_PATH })) return;
    await app.register(async (scope) => {
      const raw = scope.withTypeProvider<TypeBoxTypeProvider>();
      acceptRawBodies(raw);
      raw.post(
        UPLOAD_PATH,
        {
          bodyLimit: MAX_CODE_BUNDLE_BYTES,
          schema: {
            tags: ['Checkly CLI'],
            summary: "Upload the CLI's code bundle",
            description: `A gzipped tar of at most ${MAX_CODE_BUNDLE_BYTES} bytes, stored as a code bundle; key is its id.`,
            response: { 200: Type.Object({ key: Type.String({ format: 'uuid' }) }), 400: ErrorB, 413: ErrorA },
          },
        },
        async (request, reply) => {
          if (Number(request.headers['content-length'] ?? NaN) > MAX_CODE_BUNDLE_BYTES) {
            reply.header('connection', 'close');
            return sendError(reply, 413, TOO_LARGE);
          }
          const id = randomUUID();
          let stored: Awaited<ReturnType<typeof storeArtifact>>;
          try {
            stored = await storeArtifact(
              (request.body as Readable | undefined) ?? Readable.from([]),
              join(ctx.artifactsDir, 'code-bundles', request.accountId),
              `${id}.tar.gz`,
              MAX_CODE_BUNDLE_BYTES,
            );
          } catch (error) {
            if (!(error instanceof ArtifactTooLargeError)) throw error;
            reply.header('connection', 'close');
            return sendError(reply, 413, TOO_LARGE);
          }
          if (!(await isGzip(stored.path))) {
            await rm(stored.path, { force: true });
            return sendError(reply, 400, 'Invalid body: a code bundle must be a gzipped tar (.tar.gz)', { body: 'must be a gzipped tar archive' });
          }
          const row = await insertCodeBundle(ctx.db, { id, accountId: request.accountId, ...stored });
          return { key: row.id };
        },
      );
    });
  };
