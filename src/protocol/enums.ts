import Type from 'typebox';

export const CHECK_TYPES = [
  'AGENTIC',
  'API',
  'BROWSER',
  'ICMP',
  'MULTI_STEP',
  'TCP',
  'PLAYWRIGHT',
  'URL',
  'DNS',
] as const;
export const CheckTypeSchema = Type.Enum(CHECK_TYPES);
export type CheckType = (typeof CHECK_TYPES)[number];

export const RUN_SOURCES = [
  'CLI_DEPLOY',
  'DEPLOYMENT',
  'DEPLOYMENT_CACHE_WARMER',
  'EDITOR',
  'GROUP_RUN_ALL',
  'LEGACY_TRIGGER',
  'SCHEDULER',
  'SCHEDULE_NOW',
  'SLACK_RERUN',
  'TEST_NO_RECORD',
  'TEST_RECORD',
  'TRIGGER_NO_RECORD',
  'TRIGGER_RECORD',
  'TRIGGER_API',
] as const;
export const RunSourceSchema = Type.Enum(RUN_SOURCES);
export type RunSource = (typeof RUN_SOURCES)[number];

export const SESSION_STATUSES = [
  'STARTED',
  'PROGRESS',
  'PROGRESS_FAILED',
  'PROGRESS_DEGRADED',
  'PASSED',
  'FAILED',
  'DEGRADED',
  'TIMED_OUT',
  'CANCELLED',
] as const;
export const SessionStatusSchema = Type.Enum(SESSION_STATUSES);
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export const ASSERTION_SOURCES = [
  'STATUS_CODE',
  'RESPONSE_TIME',
  'RESPONSE_DATA',
  'RESPONSE_CODE',
  'TEXT_ANSWER',
  'JSON_ANSWER',
  'LATENCY',
  'JSON_RESPONSE',
  'JSON_BODY',
  'HEADERS',
  'TEXT_BODY',
] as const;
export type AssertionSource = (typeof ASSERTION_SOURCES)[number];

export const ASSERTION_COMPARISONS = [
  'EQUALS',
  'NOT_EQUALS',
  'GREATER_THAN',
  'LESS_THAN',
  'CONTAINS',
  'NOT_CONTAINS',
  'IS_EMPTY',
  'NOT_EMPTY',
  'HAS_KEY',
  'NOT_HAS_KEY',
  'HAS_VALUE',
  'NOT_HAS_VALUE',
  'IS_NULL',
  'NOT_NULL',
] as const;
export type AssertionComparison = (typeof ASSERTION_COMPARISONS)[number];
