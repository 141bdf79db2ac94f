import Type from 'typebox';
import { AssertionSchema } from './assertion.js';

export const DNS_RESPONSE_TIME_CAP_MS = 5000;
export const DNS_RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'SOA', 'NS', 'HTTPS'] as const;

export const DnsAssertionSchema = Type.Object({
  ...AssertionSchema.properties,
  source: Type.Enum(['RESPONSE_TIME', 'RESPONSE_CODE', 'TEXT_ANSWER', 'JSON_ANSWER']),
});

export const DnsRequestSchema = Type.Object({
  query: Type.String({ minLength: 1, maxLength: 100 }),
  recordType: Type.Optional(Type.Enum(DNS_RECORD_TYPES, { default: 'A' })),
  /** Unset: the first name server of the agent's own resolver configuration. */
  nameServer: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 253 }), Type.Null()])),
  port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, default: 53 })),
  protocol: Type.Optional(Type.Enum(['UDP', 'TCP'], { default: 'UDP' })),
  assertions: Type.Optional(Type.Array(DnsAssertionSchema, { maxItems: 50, default: [] })),
});

export const DnsSettingsSchema = Type.Object({
  request: DnsRequestSchema,
  degradedResponseTime: Type.Optional(Type.Integer({ minimum: 0, maximum: DNS_RESPONSE_TIME_CAP_MS, default: 500 })),
  maxResponseTime: Type.Optional(Type.Integer({ minimum: 0, maximum: DNS_RESPONSE_TIME_CAP_MS, default: 1000 })),
});
export type DnsSettings = Type.Static<typeof DnsSettingsSchema>;
