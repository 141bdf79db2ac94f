import Type from 'typebox';
import { UrlRequestSchema, URL_MAX_RESPONSE_TIME_CAP_MS } from '../../protocol/url-settings.js';
import { AlertChannelsSchema, frequencySchema, LocationSchema } from './common.js';

/** Fields every check type shares. */
export const CheckCommonSchema = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  activated: Type.Optional(Type.Boolean({ default: true })),
  muted: Type.Optional(Type.Boolean({ default: false })),
  shouldFail: Type.Optional(Type.Boolean({ default: false, description: 'Invert the failure criterion' })),
  locations: Type.Optional(Type.Array(LocationSchema, { uniqueItems: true, default: [] })),
  privateLocations: Type.Optional(Type.Array(Type.String({ maxLength: 50 }), { uniqueItems: true, default: [] })),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50, default: [] })),
  frequency: Type.Optional(frequencySchema(10)),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
  runParallel: Type.Optional(Type.Boolean({ default: false })),
};

export const UrlCheckCreateSchema = Type.Object(
  {
    ...CheckCommonSchema,
    checkType: Type.Optional(Type.Literal('URL')),
    request: UrlRequestSchema,
    degradedResponseTime: Type.Optional(
      Type.Integer({ minimum: 0, maximum: URL_MAX_RESPONSE_TIME_CAP_MS, default: 3000 }),
    ),
    maxResponseTime: Type.Optional(Type.Integer({ minimum: 0, maximum: URL_MAX_RESPONSE_TIME_CAP_MS, default: 5000 })),
  },
);
export type UrlCheckCreate = Type.Static<typeof UrlCheckCreateSchema>;

export const CheckResponseSchema = Type.Object(
  {
    id: Type.String(),
    checkType: Type.String(),
    name: Type.String(),
    activated: Type.Boolean(),
    muted: Type.Boolean(),
    frequency: Type.Integer(),
    locations: Type.Array(Type.String()),
    privateLocations: Type.Array(Type.String()),
    tags: Type.Array(Type.String()),
    alertChannels: AlertChannelsSchema,
    created_at: Type.String(),
    updated_at: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: true },
);
