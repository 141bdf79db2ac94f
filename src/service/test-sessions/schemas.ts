/**
 * The request and answer schemas of the test session routes, in the shapes
 * the public `checkly` CLI sends and reads.
 */
import Type from 'typebox';
import { RetryStrategySchema } from '../check-types/alert-fields.js';
import type { TestSessionStatus } from '../store/test-sessions.js';

const AnyObject = Type.Unsafe<Record<string, unknown>>({ type: 'object' });
// One object schema, not a union of PUBLIC and PRIVATE ones: the body validator drops unknown fields, in every branch it tries.
const RunLocation = Type.Union([
  Type.String({ maxLength: 100, description: 'A public region' }),
  Type.Object({
    type: Type.Enum(['PUBLIC', 'PRIVATE']),
    region: Type.Optional(Type.String({ maxLength: 100 })),
    id: Type.Optional(Type.String({ format: 'uuid' })),
    slugName: Type.Optional(Type.String({ maxLength: 50 })),
  }),
]);
const SessionFields = {
  shouldRecord: Type.Boolean(),
  runLocation: RunLocation,
  repoInfo: Type.Optional(Type.Union([AnyObject, Type.Null()])),
  environment: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
  refreshCache: Type.Optional(Type.Boolean()),
};

export const RunBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  checkRunJobs: Type.Array(AnyObject, {
    minItems: 1,
    maxItems: 1000,
    description: 'Each check as the CLI synthesizes it, with sourceInfo {checkRunSuiteId, checkRunId}, logicalId and filePath',
  }),
  project: Type.Optional(Type.Object({ logicalId: Type.Optional(Type.String({ maxLength: 255 })) })),
  sharedFiles: Type.Optional(Type.Array(Type.Unknown())),
  streamLogs: Type.Optional(Type.Boolean()),
  ...SessionFields,
});

export const TriggerBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255 }),
  checkRunSuiteId: Type.String({ format: 'uuid' }),
  targetTags: Type.Optional(Type.Array(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50 }), { maxItems: 50 })),
  checkId: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { maxItems: 100 })),
  environmentVariables: Type.Optional(
    Type.Array(Type.Object({ key: Type.String({ minLength: 1, maxLength: 255 }), value: Type.String({ maxLength: 131_072 }) }), { maxItems: 100 }),
  ),
  testRetryStrategy: Type.Optional(Type.Union([RetryStrategySchema, Type.Null()])),
  ...SessionFields,
});

export const Started = Type.Object({
  testSessionId: Type.Optional(Type.String({ description: 'Only for a recorded session: one not recorded cannot be looked up' })),
  sequenceIds: Type.Record(Type.String(), Type.String(), {
    description: 'Logical id (run) or check id (trigger) → the sequence id in the MQTT topics of its results',
  }),
});

const ResultEntry = Type.Object(
  {
    testSessionResultId: Type.String(),
    testSessionResultLink: Type.String(),
    checkId: Type.Union([Type.String(), Type.Null()], { description: 'The stored check; null for a check only the CLI defined' }),
    checkType: Type.String(),
    name: Type.String(),
    runLocation: Type.String(),
    resultType: Type.String(),
    status: Type.String(),
    hasErrors: Type.Boolean(),
    hasFailures: Type.Boolean(),
    isDegraded: Type.Boolean(),
    aborted: Type.Boolean(),
    errorGroupIds: Type.Array(Type.String()),
  },
  { additionalProperties: true },
);
export const Detail = Type.Object(
  {
    testSessionId: Type.String(),
    testSessionLink: Type.String(),
    name: Type.String(),
    status: Type.String({ description: 'RUNNING, PASSED, FAILED or CANCELLED' }),
    startedAt: Type.String(),
    stoppedAt: Type.Union([Type.String(), Type.Null()]),
    timeElapsed: Type.Number(),
    metadata: Type.Record(Type.String(), Type.String()),
    errorGroupIds: Type.Array(Type.String(), { description: 'Always empty: Outpost groups no errors' }),
    results: Type.Array(ResultEntry),
  },
  { additionalProperties: true },
);
const STATUSES: TestSessionStatus[] = ['RUNNING', 'PASSED', 'FAILED', 'CANCELLED'];
const NullableString = Type.Union([Type.String(), Type.Null()]);
/** A session as `test-sessions list` reads it; Outpost has no projects or invoking users, so those are null. */
export const ListEntry = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    accountId: Type.String(),
    projectId: Type.Null(),
    name: Type.String(),
    provider: Type.String({ description: 'What started the session (the CLI command)' }),
    running: Type.Array(Type.String(), { description: 'Names of the checks still running' }),
    passed: Type.Array(Type.String()),
    failed: Type.Array(Type.String()),
    cancelled: Type.Array(Type.String()),
    status: Type.Enum(STATUSES),
    region: Type.String({ description: 'Where the checks ran' }),
    privateLocationId: NullableString,
    invoker: Type.Null(),
    repoUrl: NullableString,
    commitId: NullableString,
    commitOwner: NullableString,
    commitMessage: NullableString,
    branchName: NullableString,
    environment: NullableString,
    startedAt: Type.String({ format: 'date-time' }),
    stoppedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.Null(),
  },
  { title: 'TestSessionListEntry', additionalProperties: true },
);
export const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
export const ResultParams = Type.Object({ id: Type.String({ format: 'uuid' }), resultId: Type.String({ format: 'uuid' }) });
const StringList = Type.Array(Type.String({ maxLength: 255 }), { maxItems: 50 });

export const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  nextId: Type.Optional(Type.String({ format: 'uuid', description: 'The cursor a previous page answered' })),
  from: Type.Optional(Type.Integer({ minimum: 0, description: 'Unix seconds: sessions started at or after' })),
  to: Type.Optional(Type.Integer({ minimum: 0, description: 'Unix seconds: sessions started before' })),
  'statuses[]': Type.Optional(Type.Array(Type.Enum(STATUSES), { maxItems: 4 })),
  'providers[]': Type.Optional(Type.Array(Type.String({ maxLength: 20 }), { maxItems: 10 })),
  'branches[]': Type.Optional(StringList),
  'users[]': Type.Optional(StringList),
  noUsers: Type.Optional(Type.Boolean()),
  textSearch: Type.Optional(Type.String({ minLength: 3, maxLength: 200 })),
  errorGroupId: Type.Optional(Type.String({ maxLength: 100, description: 'Outpost has no error groups: no session is in one' })),
});
