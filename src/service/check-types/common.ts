import Type, { type TObject, type TProperties, type TSchema } from 'typebox';
import type { Job } from '../../protocol/agent-api.js';
import type { CheckType } from '../../protocol/enums.js';
import type { GroupDefinition } from '../check-groups/schema.js';
import type { Queryable } from '../db/database.js';
import { frequencySchema, LocationSchema } from '../schemas/common.js';
import { AlertChannelSubscriptionSchema, AlertSettingsSchema, RetryStrategySchema, TriggerIncidentSchema } from './alert-fields.js';

/** Fields every check type shares. */
export const CheckCommonFields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  activated: Type.Optional(Type.Boolean({ default: true })),
  muted: Type.Optional(Type.Boolean({ default: false })),
  shouldFail: Type.Optional(Type.Boolean({ default: false, description: 'Invert the failure criterion' })),
  locations: Type.Optional(Type.Array(LocationSchema, { uniqueItems: true, default: [] })),
  privateLocations: Type.Optional(Type.Array(Type.String({ maxLength: 50 }), { uniqueItems: true, default: [] })),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50, default: [] })),
  frequency: Type.Optional(frequencySchema(10)),
  description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
  runParallel: Type.Optional(Type.Boolean({ default: false })),
  // How the check alerts; the alerting in src/service/alerts reads them for every type.
  alertSettings: Type.Optional(Type.Union([AlertSettingsSchema, Type.Null()], { default: null })),
  useGlobalAlertSettings: Type.Optional(Type.Boolean({ default: true })),
  alertChannelSubscriptions: Type.Optional(Type.Array(AlertChannelSubscriptionSchema, { maxItems: 100, default: [] })),
  triggerIncident: Type.Optional(Type.Union([TriggerIncidentSchema, Type.Null()], { default: null })),
  // No default: a check stored without one answers without one, as before retries ran.
  retryStrategy: Type.Optional(Type.Union([RetryStrategySchema, Type.Null()])),
};

/**
 * A check definition after validation: every default filled in. What else it
 * holds is the type's own (a `request` and thresholds, a script…).
 */
export interface CheckDefinition {
  name: string;
  activated: boolean;
  muted: boolean;
  shouldFail: boolean;
  locations: string[];
  privateLocations: string[];
  tags: string[];
  frequency: number;
  [field: string]: unknown;
}

export interface JobSpec {
  /** Exactly what the agent's probe or runner needs; nothing of the account. */
  settings: Record<string, unknown>;
  timeoutSeconds: number;
  runtimeId: string | null;
  environmentVariables: Job['environmentVariables'];
}

/** One check type as the API and the scheduler see it. */
export interface CheckTypeDefinition {
  checkType: CheckType;
  /** Path segment in /v1/checks/{path}. */
  path: string;
  summary: string;
  createSchema: TObject;
  updateSchema: TObject;
  /** Largest create or update body, where the server's default is too small. */
  bodyLimit?: number;
  /** Stored and used, but never part of what a read answers. */
  requestOnlyFields: readonly string[];
  /** Fields the service adds to the definition when it stores it (resolveInAccount's findings); reads show them. */
  storedFields?: TProperties;
  /** The stored definition with an update's fields over it, before it is validated whole. */
  mergeUpdate(stored: CheckDefinition, changes: Record<string, unknown>): Record<string, unknown>;
  /** Rules that span fields, after defaults: field → problem. */
  crossFieldProblems(definition: CheckDefinition): Record<string, string>;
  /**
   * Rules that need the account's records (a code bundle that must exist in
   * it), after the others passed; what it finds is stored with the definition.
   */
  resolveInAccount?(
    db: Queryable,
    accountId: string,
    definition: CheckDefinition,
  ): Promise<{ problems: Record<string, string>; definition: CheckDefinition }>;
  /**
   * What the agent gets for one run, and how long the run may take; `group`
   * is the check's group, whose defaults some types apply (API checks).
   */
  jobSpec(definition: CheckDefinition, group?: GroupDefinition): JobSpec;
}

/** The request of a type that has one (URL, TCP, DNS, ICMP). */
export function requestOf(definition: CheckDefinition): Record<string, unknown> {
  return definition.request as Record<string, unknown>;
}

/** Fields left out keep their stored value, and `request` is merged field by field. */
export function mergeWithRequest(stored: CheckDefinition, changes: Record<string, unknown>): Record<string, unknown> {
  return { ...stored, ...changes, request: { ...requestOf(stored), ...(changes.request as object | undefined) } };
}

/**
 * Where the spec allows null for a field that has a default, null means "not
 * given": the default is stored, so every reader sees one shape.
 */
export function nullsAsDefaults<T extends Record<string, unknown>>(schema: TObject, value: T): T {
  const filled: Record<string, unknown> = { ...value };
  for (const [name, property] of Object.entries(schema.properties)) {
    const fallback = (property as { default?: unknown }).default;
    if (filled[name] === null && fallback !== undefined) filled[name] = structuredClone(fallback);
  }
  return filled as T;
}

/**
 * The body of a create: the shared fields, the type's request, its thresholds.
 * `thresholds` come from the protocol's settings schema, so the service
 * accepts exactly what the agent's probe will accept.
 */
export function createSchemaFor(checkType: CheckType, request: TObject, thresholds: Record<string, TSchema>): TObject {
  return Type.Object({
    ...CheckCommonFields,
    checkType: Type.Optional(Type.Literal(checkType)),
    request,
    ...thresholds,
  });
}

/**
 * An update names only what changes: every field optional, `request` too, and
 * no defaults, so a field left out keeps its stored value instead of resetting.
 */
export function updateSchemaFor(create: TObject): TObject {
  const properties: Record<string, TSchema> = {};
  for (const [name, schema] of Object.entries(create.properties)) {
    const plain = withoutDefaults(schema);
    properties[name] =
      name === 'request' ? Type.Optional(Type.Partial(plain as TObject)) : Type.Optional(plain);
  }
  return Type.Object(properties, { minProperties: 1 });
}

export function withoutDefaults<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map((item: unknown) => withoutDefaults(item)) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string | symbol, unknown> = {};
  for (const key of Reflect.ownKeys(schema)) {
    if (key === 'default') continue;
    const descriptor = Object.getOwnPropertyDescriptor(schema, key)!;
    // TypeBox keeps its markers (`~kind`, `~optional`) non-enumerable so they stay out of
    // JSON; the copy must keep them hidden too, or they leak into the OpenAPI document.
    Object.defineProperty(copy, key, { ...descriptor, value: withoutDefaults(descriptor.value) });
  }
  return copy as T;
}

export function thresholdProblems(
  definition: CheckDefinition,
  degraded: string,
  max: string,
): Record<string, string> {
  return Number(definition[degraded]) > Number(definition[max]) ? { [degraded]: `must not be greater than ${max}` } : {};
}
