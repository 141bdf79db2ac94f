/**
 * The checks `checkly test` sends (its `checkRunJobs`: each construct as the
 * CLI synthesizes it for a deploy, plus where it came from) made into what a
 * run needs: a definition validated by its check type exactly as the checks
 * API validates one, and the job the agent gets. Nothing here is stored as a
 * check.
 */
import type { ValidateFunction } from 'ajv';
import Type from 'typebox';
import { RetryStrategySchema } from '../check-types/alert-fields.js';
import { GroupCreateSchema, groupProblems, type GroupDefinition } from '../check-groups/schema.js';
import { nullsAsDefaults } from '../check-types/common.js';
import { checkTypeDefinition, type CheckDefinition, type CheckTypeDefinition } from '../check-types/index.js';
import type { Queryable } from '../db/database.js';
import { collapse } from '../http-errors.js';
import { compileBodyValidator } from '../validation.js';
import type { CheckType } from '../../protocol/enums.js';

/** What the CLI adds to a construct for a test run; none of it is the check's. */
const RUN_FIELDS = ['testRetryStrategy', 'sourceInfo', 'logicalId', 'filePath', 'group', 'groupId'] as const;

/** What every job must carry besides its check, checked on a copy: the check's own fields are its type's to judge. */
const CheckRunJobEnvelope = Type.Object({
  checkType: Type.String({ minLength: 1, maxLength: 64 }),
  name: Type.String({ minLength: 1, maxLength: 255 }),
  logicalId: Type.Optional(Type.String({ maxLength: 1024 })),
  filePath: Type.Optional(Type.Union([Type.String({ maxLength: 4096 }), Type.Null()])),
  sourceInfo: Type.Object({
    checkRunSuiteId: Type.String({ format: 'uuid' }),
    checkRunId: Type.String({ format: 'uuid' }),
  }),
  group: Type.Optional(Type.Union([Type.Unsafe<Record<string, unknown>>({ type: 'object' }), Type.Null()])),
  testRetryStrategy: Type.Optional(Type.Union([RetryStrategySchema, Type.Null()])),
});

export type CheckRunJob = Type.Static<typeof CheckRunJobEnvelope> & Record<string, unknown>;

let envelopeValidator: ValidateFunction | undefined;

/** The jobs of a request, or what is wrong with their envelopes, job by job. */
export function parseCheckRunJobs(jobs: readonly Record<string, unknown>[]): { jobs: CheckRunJob[] } | { problems: Record<string, string> } {
  envelopeValidator ??= compileBodyValidator(CheckRunJobEnvelope);
  const problems: Record<string, string> = {};
  jobs.forEach((job, index) => {
    if (!envelopeValidator!(structuredClone(job))) {
      Object.assign(problems, prefixed(`checkRunJobs.${index}`, collapse(envelopeValidator!.errors ?? [])));
    }
  });
  return Object.keys(problems).length > 0 ? { problems } : { jobs: jobs as CheckRunJob[] };
}

export interface RunnableCheck {
  type: CheckTypeDefinition;
  checkType: CheckType;
  definition: CheckDefinition;
  group: GroupDefinition | undefined;
}

export type CheckRunVerdict = { check: RunnableCheck } | { problems: Record<string, string> };

const validators = new Map<string, ValidateFunction>();
let groupValidator: ValidateFunction | undefined;

function validatorOf(type: CheckTypeDefinition): ValidateFunction {
  let validate = validators.get(type.checkType);
  if (!validate) {
    validate = compileBodyValidator(type.createSchema);
    validators.set(type.checkType, validate);
  }
  return validate;
}

function prefixed(prefix: string, problems: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(problems).map(([field, problem]) => [`${prefix}.${field}`, problem]));
}

function groupOf(job: CheckRunJob, prefix: string): { group: GroupDefinition | undefined; problems: Record<string, string> } {
  if (!job.group) return { group: undefined, problems: {} };
  groupValidator ??= compileBodyValidator(GroupCreateSchema);
  const candidate = structuredClone(job.group);
  if (!groupValidator(candidate)) return { group: undefined, problems: prefixed(`${prefix}.group`, collapse(groupValidator.errors ?? [])) };
  const group = nullsAsDefaults(GroupCreateSchema, candidate) as GroupDefinition;
  return { group, problems: prefixed(`${prefix}.group`, groupProblems(group)) };
}

/**
 * One job of the request, `index` naming it in problems. A type this service
 * cannot run, a definition its type refuses, or a code bundle not in the
 * account are problems, told field by field.
 */
export async function judgeCheckRunJob(
  db: Queryable,
  accountId: string,
  job: CheckRunJob,
  index: number,
): Promise<CheckRunVerdict> {
  const prefix = `checkRunJobs.${index}`;
  const type = checkTypeDefinition(job.checkType as CheckType);
  if (!type) {
    return { problems: { [`${prefix}.checkType`]: `checks of type ${job.checkType} cannot be run by this service` } };
  }
  const candidate: Record<string, unknown> = structuredClone(job);
  for (const field of RUN_FIELDS) delete candidate[field];
  adaptPlaywrightBundle(candidate);
  const validate = validatorOf(type);
  if (!validate(candidate)) return { problems: prefixed(prefix, collapse(validate.errors ?? [])) };
  let definition = nullsAsDefaults(type.createSchema, candidate) as CheckDefinition;
  const { group, problems: groupProblemList } = groupOf(job, prefix);
  const problems = { ...prefixed(prefix, type.crossFieldProblems(definition)), ...groupProblemList };
  if (Object.keys(problems).length === 0 && type.resolveInAccount) {
    const resolved = await type.resolveInAccount(db, accountId, definition);
    Object.assign(problems, prefixed(prefix, resolved.problems));
    definition = resolved.definition;
  }
  if (Object.keys(problems).length > 0) return { problems };
  return { check: { type, checkType: type.checkType, definition, group } };
}

/**
 * A Playwright check names its uploaded project by the key the upload
 * answered (`codeBundlePath`); here that key is the code bundle's id.
 */
function adaptPlaywrightBundle(candidate: Record<string, unknown>): void {
  if (candidate.checkType !== 'PLAYWRIGHT' || typeof candidate.codeBundlePath !== 'string') return;
  candidate.codeBundleId ??= candidate.codeBundlePath;
}
