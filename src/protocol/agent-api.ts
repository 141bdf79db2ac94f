/**
 * Agent protocol v1: the schemas both the service (validation, OpenAPI) and the
 * agent (checking what the service answers) are built from.
 */
import Type from 'typebox';
import { AssertionResultSchema } from './assertion.js';
import { CheckTypeSchema, RunSourceSchema } from './enums.js';

export const MAX_ARTIFACT_BYTES = 157_286_400;
/** The longest artifact name, and the characters a name may hold: it is a path segment and a file name on the service. */
export const MAX_ARTIFACT_NAME = 200;
export const ARTIFACT_NAME_PATTERN = `^[A-Za-z0-9][A-Za-z0-9._-]{0,${MAX_ARTIFACT_NAME - 1}}$`;
export const PRIVATE_LOCATION_KEY_PATTERN = '^pl_[A-Za-z0-9_-]{32,}$';

const Uuid = Type.String({ format: 'uuid' });
const Lane = Type.Object({
  uptime: Type.Integer({ minimum: 0, maximum: 10_000 }),
  script: Type.Integer({ minimum: 0, maximum: 100 }),
});

export const HelloRequestSchema = Type.Object({
  agentId: Uuid,
  version: Type.String({ maxLength: 64 }),
  hostname: Type.String({ maxLength: 255 }),
  mode: Type.Enum(['full', 'uptime']),
  checkTypes: Type.Array(CheckTypeSchema, { maxItems: 20 }),
  runtimes: Type.Array(Type.String({ maxLength: 32 }), { maxItems: 20 }),
  capacity: Lane,
});
export type HelloRequest = Type.Static<typeof HelloRequestSchema>;

export const HelloResponseSchema = Type.Object({
  privateLocation: Type.Object({ id: Type.String(), slugName: Type.String(), name: Type.String() }),
  leaseSeconds: Type.Integer({ minimum: 1 }),
  maxWaitSeconds: Type.Integer({ minimum: 0, maximum: 30 }),
});
export type HelloResponse = Type.Static<typeof HelloResponseSchema>;

export const ClaimRequestSchema = Type.Object({
  agentId: Uuid,
  max: Type.Integer({ minimum: 1, maximum: 100 }),
  /**
   * Protocol addition: room per lane, so an agent running one script job at a
   * time is not handed ten that would wait out their leases. Absent: `max` of any kind.
   */
  lanes: Type.Optional(
    Type.Object({
      uptime: Type.Integer({ minimum: 0, maximum: 100 }),
      script: Type.Integer({ minimum: 0, maximum: 100 }),
    }),
  ),
  waitSeconds: Type.Integer({ minimum: 0, maximum: 30 }),
});
export type ClaimRequest = Type.Static<typeof ClaimRequestSchema>;

export const EnvironmentVariableSchema = Type.Object({
  key: Type.String(),
  value: Type.String(),
  secret: Type.Boolean(),
});

/** Most address ranges in each list of a private location's destination policy. */
export const MAX_DESTINATION_RANGES = 100;
const AddressRanges = Type.Array(Type.String({ maxLength: 64 }), { maxItems: MAX_DESTINATION_RANGES });

/**
 * Protocol addition: where this location's checks may connect. Address ranges
 * (CIDR); the most specific range holding an address decides, and an address
 * no range holds is allowed. The agent refuses a denied address with
 * DESTINATION_DENIED instead of connecting.
 */
export const DestinationPolicySchema = Type.Object({ allowed: AddressRanges, denied: AddressRanges });
export type DestinationPolicyLists = Type.Static<typeof DestinationPolicySchema>;

export const JobSchema = Type.Object({
  jobId: Type.String(),
  checkSessionId: Type.String(),
  checkId: Type.String(),
  checkType: CheckTypeSchema,
  name: Type.String(),
  runLocation: Type.String(),
  runSource: RunSourceSchema,
  attempt: Type.Integer({ minimum: 1 }),
  leaseExpiresAt: Type.String(),
  timeoutSeconds: Type.Integer({ minimum: 1 }),
  runtimeId: Type.Union([Type.String(), Type.Null()]),
  environmentVariables: Type.Array(EnvironmentVariableSchema),
  settings: Type.Record(Type.String(), Type.Unknown()),
  /** Absent when the location has none: checks may connect anywhere. */
  destinationPolicy: Type.Optional(DestinationPolicySchema),
});
export type Job = Type.Static<typeof JobSchema>;

export const ClaimResponseSchema = Type.Object({ jobs: Type.Array(JobSchema, { maxItems: 100 }) });
export type ClaimResponse = Type.Static<typeof ClaimResponseSchema>;

export const LeaseRequestSchema = Type.Object({ agentId: Uuid });
export const LeaseResponseSchema = Type.Object({ leaseExpiresAt: Type.String() });

export const ReleaseRequestSchema = Type.Object({
  agentId: Uuid,
  reason: Type.String({ maxLength: 500 }),
});

/** The most job ids one lease, release or goodbye call names; an agent with more splits them. */
export const MAX_JOBS_PER_CALL = 2000;
const JobIds = Type.Array(Uuid, { maxItems: MAX_JOBS_PER_CALL });

/**
 * Protocol addition: one heartbeat for every job an agent holds. Leases are
 * short, so a crashed agent's jobs come back within one lease; `running` jobs
 * are marked started (an expired lease of a job that never started is not a
 * spent attempt). `lost`: the ids named that are no longer this agent's.
 */
export const LeasesRequestSchema = Type.Object({ agentId: Uuid, running: JobIds, waiting: JobIds });
export const LeasesResponseSchema = Type.Object({
  leaseExpiresAt: Type.String(),
  /** Jobs named that are no longer this agent's: cancelled, given up on, or leased to another agent after the lease ran out. */
  lost: Type.Array(Type.String(), { maxItems: 2 * MAX_JOBS_PER_CALL }),
  /** Those of `lost` a user cancelled; absent from services that do not say. */
  cancelled: Type.Optional(Type.Array(Type.String(), { maxItems: 2 * MAX_JOBS_PER_CALL })),
});
export type LeasesResponse = Type.Static<typeof LeasesResponseSchema>;

/** Protocol addition: several jobs released in one call; answers how many were this agent's. */
export const ReleaseManyRequestSchema = Type.Object({ agentId: Uuid, jobIds: JobIds, reason: Type.String({ maxLength: 500 }) });
export const ReleasedSchema = Type.Object({ released: Type.Integer({ minimum: 0 }) });

/**
 * Protocol addition: an agent leaving. Every job leased to it but those in
 * `keep` (still running, to be reported or released later) is offered again at
 * once, claims still in flight included: after goodbye the agent's claims are
 * refused until it says hello again.
 */
export const GoodbyeRequestSchema = Type.Object({ agentId: Uuid, keep: JobIds, reason: Type.String({ maxLength: 500 }) });

const Ms = Type.Union([Type.Number({ minimum: 0 }), Type.Null()]);
export const TimingsSchema = Type.Object({
  /** Time in none of the phases below: socket set-up, gaps between redirect hops. */
  wait: Type.Optional(Ms),
  dns: Ms,
  tcp: Ms,
  tls: Ms,
  firstByte: Ms,
  download: Ms,
  total: Ms,
});
export type Timings = Type.Static<typeof TimingsSchema>;

export const ResultErrorSchema = Type.Object({
  code: Type.String({ maxLength: 64 }),
  message: Type.String({ maxLength: 10_000 }),
});
export type ResultError = Type.Static<typeof ResultErrorSchema>;

export const LogLineSchema = Type.Object({
  time: Type.String(),
  level: Type.String({ maxLength: 16 }),
  message: Type.String({ maxLength: 10_000 }),
});

export const ArtifactRefSchema = Type.Object({
  name: Type.String(),
  contentType: Type.String(),
  size: Type.Integer({ minimum: 0 }),
  uploaded: Type.Boolean(),
  error: Type.Union([Type.String(), Type.Null()]),
});
export type ArtifactRef = Type.Static<typeof ArtifactRefSchema>;

export const ResultSchema = Type.Object({
  /** Protocol addition: which agent reports, so a stale agent's late answer is told apart. */
  agentId: Uuid,
  jobId: Type.String(),
  checkId: Type.String(),
  checkType: CheckTypeSchema,
  runLocation: Type.String(),
  startedAt: Type.String({ format: 'date-time' }),
  stoppedAt: Type.String({ format: 'date-time' }),
  responseTime: Type.Number({ minimum: 0 }),
  hasErrors: Type.Boolean(),
  hasFailures: Type.Boolean(),
  isDegraded: Type.Boolean(),
  aborted: Type.Boolean(),
  isCancelled: Type.Boolean(),
  error: Type.Union([ResultErrorSchema, Type.Null()]),
  timings: Type.Optional(Type.Union([TimingsSchema, Type.Null()])),
  statusCode: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  assertions: Type.Array(AssertionResultSchema, { maxItems: 100 }),
  details: Type.Record(Type.String(), Type.Unknown()),
  logs: Type.Array(LogLineSchema, { maxItems: 1000 }),
  artifacts: Type.Array(ArtifactRefSchema, { maxItems: 100 }),
});
export type Result = Type.Static<typeof ResultSchema>;

/** Protocol addition: many results in one call, one transaction on the service. */
export const MAX_RESULTS_PER_BATCH = 100;

export const ResultBatchSchema = Type.Object({
  results: Type.Array(ResultSchema, { minItems: 1, maxItems: MAX_RESULTS_PER_BATCH }),
});

export const RESULT_OUTCOMES = ['recorded', 'duplicate', 'conflict', 'not-found'] as const;
export type ResultOutcome = (typeof RESULT_OUTCOMES)[number];

export const ResultBatchAnswerSchema = Type.Object({
  /** One per result, in the order sent. */
  outcomes: Type.Array(
    Type.Object({
      jobId: Type.String(),
      outcome: Type.Enum(RESULT_OUTCOMES),
      message: Type.Optional(Type.String()),
    }),
  ),
});
export type ResultBatchAnswer = Type.Static<typeof ResultBatchAnswerSchema>;
