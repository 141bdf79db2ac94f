import type { TObject, TSchema } from 'typebox';
import type { CheckType } from '../../protocol/enums.js';
import {
  createSchemaFor,
  mergeWithRequest,
  requestOf,
  thresholdProblems,
  updateSchemaFor,
  type CheckTypeDefinition,
} from './common.js';

interface ResponseTimeCheckSpec {
  checkType: CheckType;
  path: string;
  summary: string;
  request: TObject;
  /** The protocol's settings schema, whose thresholds the API takes as they are. */
  settings: TObject<{ degradedResponseTime: TSchema; maxResponseTime: TSchema } & Record<string, TSchema>>;
}

/**
 * A check judged by its response time against degraded and maximum
 * thresholds (URL, TCP, DNS): the same fields, rules and job budget, over a
 * request of its own.
 */
export function responseTimeCheck(spec: ResponseTimeCheckSpec): CheckTypeDefinition {
  const createSchema = createSchemaFor(spec.checkType, spec.request, {
    degradedResponseTime: spec.settings.properties.degradedResponseTime,
    maxResponseTime: spec.settings.properties.maxResponseTime,
  });
  return {
    checkType: spec.checkType,
    path: spec.path,
    summary: spec.summary,
    createSchema,
    updateSchema: updateSchemaFor(createSchema),
    requestOnlyFields: [],
    mergeUpdate: mergeWithRequest,
    crossFieldProblems: (definition) => thresholdProblems(definition, 'degradedResponseTime', 'maxResponseTime'),
    jobSpec: (definition) => {
      const maxResponseTime = Number(definition.maxResponseTime);
      return {
        settings: {
          request: requestOf(definition),
          degradedResponseTime: definition.degradedResponseTime,
          maxResponseTime,
          shouldFail: definition.shouldFail,
        },
        // Past maxResponseTime a run has failed anyway; the margin tells "slow" from "hung".
        timeoutSeconds: Math.ceil(maxResponseTime / 1000) + 5,
        runtimeId: null,
        environmentVariables: [],
      };
    },
  };
}
