import Type from 'typebox';
import { updateSchemaFor } from '../check-types/common.js';
import { AlertChannelSubscriptionSchema, AlertSettingsSchema, RetryStrategySchema } from '../check-types/alert-fields.js';
import {
  EnvironmentVariableSchema,
  environmentVariableProblems,
  keepMaskedSecrets,
  MAX_ENVIRONMENT_VARIABLES,
  type EnvironmentVariable,
} from '../check-types/environment-variables.js';
import { listOrNull, orNull } from '../check-types/script-check-fields.js';
import { PlaywrightCheckConfigSchema, type PlaywrightCheckConfig } from '../../protocol/playwright-config.js';
import { LocationSchema, RuntimeIdSchema } from '../schemas/common.js';

/** Checks a group run starts at once, at most: the bound the spec shows without naming its field. */
export const MAX_GROUP_CONCURRENCY = 100;
const MAX_SCRIPT_CHARS = 100_000;

const KeyValue = Type.Object({ key: Type.String({ minLength: 1, maxLength: 255 }), value: Type.String({ maxLength: 4096 }) });

const ApiCheckDefaultsSchema = Type.Object(
  {
    url: Type.Optional(Type.String({ maxLength: 2048, default: '', description: 'Base URL of the group\'s API checks' })),
    headers: Type.Optional(Type.Array(KeyValue, { maxItems: 50, default: [] })),
    queryParameters: Type.Optional(Type.Array(KeyValue, { maxItems: 50, default: [] })),
    assertions: Type.Optional(
      Type.Array(
        Type.Object({
          source: Type.String({ minLength: 1, maxLength: 50 }),
          comparison: Type.String({ minLength: 1, maxLength: 50 }),
          target: Type.String({ maxLength: 1024 }),
        }),
        { maxItems: 50, default: [] },
      ),
    ),
    basicAuth: Type.Optional(
      Type.Object(
        { username: Type.String({ maxLength: 255 }), password: Type.String({ maxLength: 255 }) },
        { default: { username: '', password: '' } },
      ),
    ),
  },
  { default: {} },
);

export const GroupCreateSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  activated: Type.Boolean({ description: 'Whether the checks in the group run on their schedule' }),
  concurrency: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_GROUP_CONCURRENCY,
      default: 3,
      description: 'Checks a group run starts at once',
    }),
  ),
  apiCheckDefaults: Type.Optional(ApiCheckDefaultsSchema),
  muted: Type.Optional(Type.Boolean({ default: false })),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50, default: [] })),
  locations: listOrNull(LocationSchema, { uniqueItems: true }),
  browserCheckDefaults: Type.Optional(Type.String({ maxLength: 10_000, default: '' })),
  environmentVariables: listOrNull(EnvironmentVariableSchema, { maxItems: MAX_ENVIRONMENT_VARIABLES }),
  doubleCheck: Type.Optional(Type.Boolean({ default: true, deprecated: true, description: 'Deprecated: retryStrategy replaces it' })),
  useGlobalAlertSettings: Type.Optional(Type.Union([Type.Boolean(), Type.Null()], { default: true })),
  alertSettings: orNull(AlertSettingsSchema),
  alertChannelSubscriptions: Type.Optional(Type.Array(AlertChannelSubscriptionSchema, { maxItems: 100, default: [] })),
  setupSnippetId: orNull(Type.Integer({ minimum: 1 })),
  tearDownSnippetId: orNull(Type.Integer({ minimum: 1 })),
  localSetupScript: orNull(Type.String({ maxLength: MAX_SCRIPT_CHARS })),
  localTearDownScript: orNull(Type.String({ maxLength: MAX_SCRIPT_CHARS })),
  runtimeId: orNull(RuntimeIdSchema, { description: 'Runtime of the group\'s checks that name none' }),
  playwrightConfig: orNull(PlaywrightCheckConfigSchema, {
    description: "Playwright configuration of the group's multi-step and browser checks that set none (a check's own replaces it whole)",
  }),
  privateLocations: listOrNull(Type.String({ maxLength: 50 }), { uniqueItems: true }),
  retryStrategy: Type.Optional(
    Type.Union([RetryStrategySchema, Type.Literal('FALLBACK'), Type.Null()], {
      default: 'FALLBACK',
      description: 'FALLBACK: each check keeps its own retry strategy',
    }),
  ),
  runParallel: Type.Optional(Type.Union([Type.Boolean(), Type.Null()], { default: false })),
});

export const GroupUpdateSchema = updateSchemaFor(GroupCreateSchema);

/** A group after validation, every default filled in. */
export interface GroupDefinition {
  name: string;
  activated: boolean;
  concurrency: number;
  muted: boolean;
  tags: string[];
  locations: string[];
  privateLocations: string[];
  environmentVariables: EnvironmentVariable[];
  runtimeId: string | null;
  /** Absent from groups stored before the field existed. */
  playwrightConfig?: PlaywrightCheckConfig | null;
  [field: string]: unknown;
}

/** An update's fields over the stored group; secrets sent back masked keep their stored value. */
export function mergeGroupUpdate(stored: GroupDefinition, changes: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...stored, ...changes };
  if (Array.isArray(changes.environmentVariables)) {
    merged.environmentVariables = keepMaskedSecrets(
      changes.environmentVariables as Partial<EnvironmentVariable>[],
      stored.environmentVariables,
    );
  }
  return merged;
}

export function groupProblems(group: GroupDefinition): Record<string, string> {
  return environmentVariableProblems(group.environmentVariables);
}
