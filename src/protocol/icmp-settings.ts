import Type from 'typebox';
import { AssertionSchema } from './assertion.js';

export const IcmpAssertionSchema = Type.Object({
  ...AssertionSchema.properties,
  /** LATENCY takes property avg, min, max or stdDev; JSON_RESPONSE a JSON path into the ping statistics. */
  source: Type.Enum(['LATENCY', 'JSON_RESPONSE']),
});

export const IcmpRequestSchema = Type.Object({
  hostname: Type.String({ minLength: 1, maxLength: 253 }),
  ipFamily: Type.Optional(Type.Enum(['IPv4', 'IPv6'], { default: 'IPv4' })),
  pingCount: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
  assertions: Type.Optional(Type.Array(IcmpAssertionSchema, { maxItems: 50, default: [] })),
});

export const IcmpSettingsSchema = Type.Object({
  request: IcmpRequestSchema,
  /** Packet loss, in percent, over which a run is degraded, and failed. */
  degradedPacketLossThreshold: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 10 })),
  maxPacketLossThreshold: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 20 })),
});
export type IcmpSettings = Type.Static<typeof IcmpSettingsSchema>;
