import { TcpRequestSchema, TcpSettingsSchema } from '../../protocol/tcp-settings.js';
import { createSchemaFor, thresholdProblems, updateSchemaFor, type CheckTypeDefinition } from './common.js';

const createSchema = createSchemaFor('TCP', TcpRequestSchema, {
  degradedResponseTime: TcpSettingsSchema.properties.degradedResponseTime,
  maxResponseTime: TcpSettingsSchema.properties.maxResponseTime,
});

export const tcpCheck: CheckTypeDefinition = {
  checkType: 'TCP',
  path: 'tcp',
  summary: 'TCP monitor: a connection, optional data sent, the answer read',
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
