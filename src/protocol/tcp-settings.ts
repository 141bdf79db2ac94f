import Type from 'typebox';
import { AssertionSchema } from './assertion.js';

export const TCP_RESPONSE_TIME_CAP_MS = 5000;

export const TcpAssertionSchema = Type.Object({
  ...AssertionSchema.properties,
  source: Type.Enum(['RESPONSE_DATA', 'RESPONSE_TIME']),
});

export const TcpRequestSchema = Type.Object({
  hostname: Type.String({ minLength: 1, maxLength: 253 }),
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  /** Sent once connected; the answer is read (capped) for RESPONSE_DATA assertions. */
  data: Type.Optional(Type.String({ maxLength: 4096, default: '' })),
  ipFamily: Type.Optional(Type.Enum(['IPv4', 'IPv6'], { default: 'IPv4' })),
  assertions: Type.Optional(Type.Array(TcpAssertionSchema, { maxItems: 50, default: [] })),
});

export const TcpSettingsSchema = Type.Object({
  request: TcpRequestSchema,
  degradedResponseTime: Type.Optional(Type.Integer({ minimum: 0, maximum: TCP_RESPONSE_TIME_CAP_MS, default: 4000 })),
  maxResponseTime: Type.Optional(Type.Integer({ minimum: 0, maximum: TCP_RESPONSE_TIME_CAP_MS, default: 5000 })),
});
export type TcpSettings = Type.Static<typeof TcpSettingsSchema>;
