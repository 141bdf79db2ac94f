import Type from 'typebox';
import { AlertChannelsSchema, CheckTypeNameSchema, DateTimeSchema } from './common.js';

/** A check as every read answers it: its definition plus what the service sets. */
export const CheckResponseSchema = Type.Object(
  {
    id: Type.String(),
    checkType: CheckTypeNameSchema,
    name: Type.String(),
    activated: Type.Boolean(),
    muted: Type.Boolean(),
    frequency: Type.Integer(),
    locations: Type.Array(Type.String()),
    privateLocations: Type.Array(Type.String()),
    tags: Type.Array(Type.String()),
    alertChannels: AlertChannelsSchema,
    created_at: DateTimeSchema,
    updated_at: Type.Union([DateTimeSchema, Type.Null()]),
  },
  { additionalProperties: true },
);
export type CheckResponse = Type.Static<typeof CheckResponseSchema>;
