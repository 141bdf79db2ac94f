import { IcmpRequestSchema, IcmpSettingsSchema } from '../../protocol/icmp-settings.js';
import {
  createSchemaFor,
  mergeWithRequest,
  requestOf,
  thresholdProblems,
  updateSchemaFor,
  type CheckTypeDefinition,
} from './common.js';

const createSchema = createSchemaFor('ICMP', IcmpRequestSchema, {
  degradedPacketLossThreshold: IcmpSettingsSchema.properties.degradedPacketLossThreshold,
  maxPacketLossThreshold: IcmpSettingsSchema.properties.maxPacketLossThreshold,
});

/**
 * Budget per echo request: the agent sends one every 0.2 s and waits up to 2 s
 * for the last reply; a second each leaves room for a slow, lossy path.
 */
const SECONDS_PER_PING = 1;
const LATENCY_PROPERTIES = new Set(['avg', 'min', 'max', 'stdDev']);

export const icmpCheck: CheckTypeDefinition = {
  checkType: 'ICMP',
  path: 'icmp',
  summary: 'ICMP monitor: echo requests, packet loss and latency',
  createSchema,
  updateSchema: updateSchemaFor(createSchema),
  requestOnlyFields: [],
  mergeUpdate: mergeWithRequest,
  crossFieldProblems: (definition) => {
    const problems = thresholdProblems(definition, 'degradedPacketLossThreshold', 'maxPacketLossThreshold');
    const assertions = (requestOf(definition).assertions ?? []) as { source: string; property?: string }[];
    assertions.forEach((assertion, index) => {
      if (assertion.source === 'LATENCY' && !LATENCY_PROPERTIES.has(assertion.property ?? '')) {
        problems[`request.assertions.${index}.property`] = 'must be avg, min, max or stdDev for LATENCY';
      }
    });
    return problems;
  },
  jobSpec: (definition) => ({
    settings: {
      request: requestOf(definition),
      degradedPacketLossThreshold: definition.degradedPacketLossThreshold,
      maxPacketLossThreshold: definition.maxPacketLossThreshold,
      shouldFail: definition.shouldFail,
    },
    timeoutSeconds: Math.ceil(Number(requestOf(definition).pingCount ?? 10) * SECONDS_PER_PING) + 5,
    runtimeId: null,
    environmentVariables: [],
  }),
};
