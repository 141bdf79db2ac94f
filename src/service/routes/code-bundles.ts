/**
 * Code bundles: the tar.gz of a Playwright project that a PLAYWRIGHT check
 * runs. Users upload one (raw bytes, streamed to disk, hashed on the way);
 * agents download the bundles of their location's account.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { MAX_CODE_BUNDLE_BYTES } from '../../protocol/playwright-settings.js';
import { ArtifactTooLargeError, storeArtifact } from '../artifacts.js';
import type { ServiceContext } from '../context.js';
import { sendError } from '../http-errors.js';
import { ErrorA, ErrorB } from '../schemas/common.js';
import { getCodeBundle, insertCodeBundle } from '../store/code-bundles.js';
import { acceptRawBodies } from '../raw-bodies.js';

const CodeBundleSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  sha256: Type.String({ description: 'Hex SHA-256 of the bytes as stored; agents refuse a download that does not match' }),
  size: Type.Integer(),
});
const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

export const codeBundleRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    await app.register(async (scope) => {
      const raw = scope.withTypeProvider<TypeBoxTypeProvider>();
      acceptRawBodies(raw);
      raw.post(
        '/v1/code-bundles',
        {
          bodyLimit: MAX_CODE_BUNDLE_BYTES,
          schema: {
            tags: ['Code bundles'],
            summary: 'Upload a code bundle',
            description:
              `The raw bytes of a gzipped tar of a Playwright project (its sources, config and lockfile; ` +
              `not node_modules), at most ${MAX_CODE_BUNDLE_BYTES} bytes. PLAYWRIGHT checks name it by id. ` +
              'Bundles never change: upload a new one and point the check at it.',
            response: { 201: CodeBundleSchema, 400: ErrorB, 413: ErrorA },
          },
        },
        async (request, reply) => {
          const declared = Number(request.headers['content-length'] ?? NaN);
          if (declared > MAX_CODE_BUNDLE_BYTES) {
            reply.header('connection', 'close');
            return sendError(reply, 413, `Code bundles are limited to ${MAX_CODE_BUNDLE_BYTES} bytes`);
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
            if (error instanceof ArtifactTooLargeError) {
              reply.header('connection', 'close');
              return sendError(reply, 413, `Code bundles are limited to ${MAX_CODE_BUNDLE_BYTES} bytes`);
            }
            throw error;
          }
          // A bundle that is not even gzip would only fail later, on every agent, at every run.
          if (!(await startsWith(stored.path, GZIP_MAGIC))) {
            await rm(stored.path, { force: true });
            return sendError(reply, 400, 'Invalid body: a code bundle must be a gzipped tar (.tar.gz)', {
              body: 'must be a gzipped tar archive',
            });
          }
          const row = await insertCodeBundle(ctx.db, { id, accountId: request.accountId, ...stored });
          return reply.code(201).send({ id: row.id, sha256: row.sha256, size: row.size });
        },
      );
    });
  };

export const agentCodeBundleRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/v1/agent/code-bundles/:id',
      {
        schema: {
          tags: ['Agent protocol'],
          security: [{ privateLocationKey: [] }],
          summary: 'Download a code bundle of the location\'s account',
          description: 'The bytes as uploaded (application/gzip); x-content-sha256 carries their SHA-256.',
          params: IdParams,
          response: {
            200: Type.Unsafe<unknown>({ type: 'string', format: 'binary', description: 'The bundle\'s bytes' }),
            404: ErrorA,
          },
        },
      },
      async (request, reply) => {
        const bundle = await getCodeBundle(ctx.db, request.privateLocation.account_id, request.params.id);
        if (!bundle) return sendError(reply, 404, 'Code bundle not found');
        return reply
          .header('content-type', 'application/gzip')
          .header('content-length', String(bundle.size))
          .header('x-content-sha256', bundle.sha256)
          .send(createReadStream(bundle.path));
      },
    );
  };

async function startsWith(path: string, prefix: Buffer): Promise<boolean> {
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(prefix.length);
    const { bytesRead } = await file.read(head, 0, prefix.length, 0);
    return bytesRead === prefix.length && head.equals(prefix);
  } finally {
    await file.close();
  }
}
