import { UrlRequestSchema, UrlSettingsSchema } from '../../protocol/url-settings.js';
import { createSchemaFor, thresholdProblems, updateSchemaFor, type CheckTypeDefinition } from './common.js';

const createSchema = createSchemaFor('URL', UrlRequestSchema, {
  degradedResponseTime: UrlSettingsSchema.properties.degradedResponseTime,
  maxResponseTime: UrlSettingsSchema.properties.maxResponseTime,
});

export const urlCheck: CheckTypeDefinition = {
  checkType: 'URL',
  path: 'url',
  summary: 'URL monitor: one HTTP(S) request, its status code and timings',
  createSchema,
  updateSchema: updateSchemaFor(createSchema),
  crossFieldProblems: (definition) => thresholdProblems(definition, 'degradedResponseTime', 'maxResponseTime'),
  jobSpec: (definition) => {
    const maxResponseTime = Number(definition.maxResponseTime);
    return {
      settings: {
        request: definition.request,
        degradedResponseTime: definition.degradedResponseTime,
        maxResponseTime,
        shouldFail: definition.shouldFail,
      },
      // Past maxResponseTime a run has failed anyway; the margin tells "slow" from "hung".
      timeoutSeconds: Math.ceil(maxResponseTime / 1000) + 5,
      runtimeId: null,
    };
  },
};
