/**
 * Error events from agents, in Sentry's envelope protocol (the agent's
 * default error reporting target), and their listing per private location.
 */
import type { Readable } from 'node:stream';
import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { EnvelopeInvalidError } from '../../errors/index.js';
import type { ServiceContext } from '../context.js';
import { eventFields } from '../error-events/event-fields.js';
import { parseEnvelope } from '../error-events/envelope.js';
import { sendError, sendErrorA, sendErrorB } from '../http-errors.js';
import { ErrorA, ErrorB } from '../schemas/common.js';
import { KEPT_ERROR_EVENTS, listErrorEvents, recordErrorEvent } from '../store/agent-error-events.js';
import { getPrivateLocation } from '../store/private-locations.js';
import { acceptRawBodies } from '../raw-bodies.js';

const gunzipAsync = promisify(gunzip);
/** Sentry's own limit for an event envelope, compressed or not. */
const MAX_ENVELOPE_BYTES = 1024 * 1024;

/** For the agents: `POST …/api/<project>/envelope/`, the path Sentry's SDK derives from the DSN. */
export const agentErrorEventRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    const raw = app.withTypeProvider<TypeBoxTypeProvider>();
    // Sentry's transport sends the envelope with no content type, often chunked.
    acceptRawBodies(raw);
    raw.post(
      '/v1/agent/error-events/api/:projectId/envelope/',
      {
        schema: {
          tags: ['Agent protocol'],
          security: [{ privateLocationKey: [] }],
          description:
            "Error events of the location's agents, in Sentry's envelope format (gzip allowed). " +
            'Only the message, exception types and values, stack frames, release, platform and runtime are kept.',
          params: Type.Object({ projectId: Type.String({ pattern: '^[0-9]+$' }) }),
          response: { 200: Type.Object({ id: Type.Union([Type.String(), Type.Null()]) }), 400: ErrorB, 401: ErrorA, 413: ErrorA },
        },
      },
      async (request, reply) => {
        let body: Buffer;
        try {
          body = await readLimited(request.body as Readable | undefined, MAX_ENVELOPE_BYTES);
          if (request.headers['content-encoding'] === 'gzip') {
            body = await gunzipAsync(body, { maxOutputLength: MAX_ENVELOPE_BYTES });
          }
        } catch (error) {
          if (error instanceof EnvelopeTooLarge || (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
            return sendErrorA(reply, 413, `Envelopes are limited to ${MAX_ENVELOPE_BYTES} bytes`);
          }
          return sendErrorB(reply, 400, 'The envelope could not be read (gzip data is corrupt)', { body: 'corrupt gzip' });
        }
        let stored: string | null = null;
        try {
          for (const item of parseEnvelope(body)) {
            const fields = item.type === 'event' ? eventFields(item.payload, new Date()) : undefined;
            if (!fields) continue;
            await recordErrorEvent(ctx.db, request.privateLocation.id, fields);
            stored = fields.eventId;
          }
        } catch (error) {
          if (error instanceof EnvelopeInvalidError) return sendErrorB(reply, 400, error.message, { body: 'not an envelope' });
          throw error;
        }
        return { id: stored };
      },
    );
  };

const ErrorEvent = Type.Object({
  id: Type.String(),
  eventId: Type.String(),
  occurredAt: Type.String(),
  receivedAt: Type.String(),
  release: Type.Union([Type.String(), Type.Null()]),
  platform: Type.Union([Type.String(), Type.Null()]),
  runtime: Type.Union([Type.String(), Type.Null()]),
  message: Type.Union([Type.String(), Type.Null()]),
  exceptions: Type.Array(
    Type.Object({
      type: Type.Union([Type.String(), Type.Null()]),
      value: Type.Union([Type.String(), Type.Null()]),
      frames: Type.Array(
        Type.Object({
          filename: Type.Optional(Type.String()),
          function: Type.Optional(Type.String()),
          lineno: Type.Optional(Type.Integer()),
          colno: Type.Optional(Type.Integer()),
        }),
      ),
    }),
  ),
});

/** For users: the newest error events of a private location's agents. */
export const errorEventReadRoutes =
  (ctx: ServiceContext): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/v1/private-locations/:id/error-events',
      {
        schema: {
          tags: ['Private locations'],
          description: `Error events the location's agents reported, newest first; the newest ${KEPT_ERROR_EVENTS} are kept.`,
          params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
          querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 100, default: 10 }) }),
          response: { 200: Type.Array(ErrorEvent), 404: ErrorA },
        },
      },
      async (request, reply) => {
        const location = await getPrivateLocation(ctx.db, request.accountId, request.params.id);
        if (!location) return sendError(reply, 404, 'Private location not found');
        return listErrorEvents(ctx.db, location.id, request.query.limit);
      },
    );
  };

class EnvelopeTooLarge extends Error {}

async function readLimited(stream: Readable | undefined, limit: number): Promise<Buffer> {
  if (!stream) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new EnvelopeTooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
