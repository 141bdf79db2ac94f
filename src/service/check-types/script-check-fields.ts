/**
 * The fields multi-step checks and Playwright check suites share beyond every
 * check's own: where they run, how they alert, retry and open incidents, and
 * their environment variables. Lists and objects the spec types "or null"
 * accept null and store it as [] or null, so every field is in each answer.
 */
import Type, { type TSchema } from 'typebox';
import { LocationSchema } from '../schemas/common.js';
import { AlertChannelSubscriptionSchema, AlertSettingsSchema, RetryStrategySchema, TriggerIncidentSchema } from './alert-fields.js';
import { EnvironmentVariableSchema, MAX_ENVIRONMENT_VARIABLES } from './environment-variables.js';

/**
 * A list the spec lets be null. A type array rather than anyOf, because ajv
 * fills no defaults under anyOf, and the items have defaults of their own.
 */
export const listOrNull = (items: TSchema, options: Record<string, unknown>) =>
  Type.Optional(Type.Unsafe({ ...Type.Array(items, options), type: ['array', 'null'], default: [] }));

export const orNull = (schema: TSchema, options: Record<string, unknown> = {}) =>
  Type.Optional(Type.Union([schema, Type.Null()], { default: null, ...options }));

export const ScriptCheckFields = {
  locations: listOrNull(LocationSchema, { uniqueItems: true }),
  privateLocations: listOrNull(Type.String({ maxLength: 50 }), { uniqueItems: true }),
  description: orNull(Type.String({ maxLength: 500 })),
  alertSettings: orNull(AlertSettingsSchema),
  useGlobalAlertSettings: Type.Optional(Type.Boolean({ default: true })),
  groupId: orNull(Type.Integer({ minimum: 1 })),
  groupOrder: orNull(Type.Number({ minimum: 0 })),
  alertChannelSubscriptions: Type.Optional(Type.Array(AlertChannelSubscriptionSchema, { maxItems: 100, default: [] })),
  retryStrategy: orNull(RetryStrategySchema),
  triggerIncident: orNull(TriggerIncidentSchema),
  environmentVariables: listOrNull(EnvironmentVariableSchema, { maxItems: MAX_ENVIRONMENT_VARIABLES }),
};
