import { IcmpRequestSchema, IcmpSettingsSchema } from '../../protocol/icmp-settings.js';
import { createSchemaFor, thresholdProblems, updateSchemaFor, type CheckTypeDefinition } from './common.js';

const createSchema = createSchemaFor('ICMP', IcmpRequestSchema, {
  degradedPacketLossThreshold: IcmpSettingsSchema.properties.degradedPacketLossThreshold,
  maxPacketLossThreshold: IcmpSettingsSchema.properties.maxPacketLossThreshold,
});

/** Time ping may take per echo request, at most: a reply wait of 1 s plus the interval. */
const SECONDS_PER_PING = 1.2;

export const icmpCheck: CheckTypeDefinition = {
  checkType: 'ICMP',
  path: 'icmp',
  summary: 'ICMP monitor: echo requests, packet loss and latency',
  createSchema,
  updateSchema: updateSchemaFor(createSchema),
  crossFieldProblems: (definition) =>
    thresholdProblems(definition, 'degradedPacketLossThreshold', 'maxPacketLossThreshold'),
  jobSpec: (definition) => ({
    settings: {
      request: definition.request,
      degradedPacketLossThreshold: definition.degradedPacketLossThreshold,
      maxPacketLossThreshold: definition.maxPacketLossThreshold,
      shouldFail: definition.shouldFail,
    },
    timeoutSeconds: Math.ceil(Number((definition.request as { pingCount?: number }).pingCount ?? 10) * SECONDS_PER_PING) + 5,
    runtimeId: null,
  }),
};
