import Type from 'typebox';
import { AssertionSchema } from './assertion.js';

export const URL_MAX_RESPONSE_TIME_CAP_MS = 30_000;

/** URL monitors judge the status code only; richer assertions belong to API checks. */
export const UrlAssertionSchema = Type.Object({
  ...AssertionSchema.properties,
  source: Type.Enum(['STATUS_CODE']),
});

export const UrlRequestSchema = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2048, pattern: '^[hH][tT][tT][pP][sS]?://' }),
  method: Type.Optional(Type.Enum(['GET', 'HEAD'], { default: 'GET' })),
  followRedirects: Type.Optional(Type.Boolean({ default: true })),
  skipSSL: Type.Optional(Type.Boolean({ default: false })),
  ipFamily: Type.Optional(Type.Enum(['IPv4', 'IPv6'], { default: 'IPv4' })),
  assertions: Type.Optional(Type.Array(UrlAssertionSchema, { maxItems: 50, default: [] })),
});
export type UrlRequest = Type.Static<typeof UrlRequestSchema>;

/** The URL monitor settings that travel in a job: what the probe needs, nothing else. */
export const UrlSettingsSchema = Type.Object({
  request: UrlRequestSchema,
  degradedResponseTime: Type.Optional(
    Type.Integer({ minimum: 0, maximum: URL_MAX_RESPONSE_TIME_CAP_MS, default: 3000 }),
  ),
  maxResponseTime: Type.Optional(
    Type.Integer({ minimum: 0, maximum: URL_MAX_RESPONSE_TIME_CAP_MS, default: 5000 }),
  ),
});
export type UrlSettings = Type.Static<typeof UrlSettingsSchema>;
