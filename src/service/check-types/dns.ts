import { DnsRequestSchema, DnsSettingsSchema } from '../../protocol/dns-settings.js';
import { createSchemaFor, thresholdProblems, updateSchemaFor, type CheckTypeDefinition } from './common.js';

const createSchema = createSchemaFor('DNS', DnsRequestSchema, {
  degradedResponseTime: DnsSettingsSchema.properties.degradedResponseTime,
  maxResponseTime: DnsSettingsSchema.properties.maxResponseTime,
});

export const dnsCheck: CheckTypeDefinition = {
  checkType: 'DNS',
  path: 'dns',
  summary: 'DNS monitor: one query to a name server, its answer and response code',
  createSchema,
  updateSchema: updateSchemaFor(createSchema),
  crossFieldProblems: (definition) => thresholdProblems(definition, 'degradedResponseTime', 'maxResponseTime'),
  jobSpec: (definition) => ({
    settings: {
      request: definition.request,
      degradedResponseTime: definition.degradedResponseTime,
      maxResponseTime: definition.maxResponseTime,
      shouldFail: definition.shouldFail,
    },
    timeoutSeconds: Math.ceil(Number(definition.maxResponseTime) / 1000) + 5,
    runtimeId: null,
  }),
};
