/**
 * Starting a test session: `checkly test` sends check definitions, `checkly
 * trigger` names stored checks. Either way each check gets a check session
 * with one job at the one private location the CLI chose, and a sequence id
 * the CLI follows its results by.
 */
import { randomUUID } from 'node:crypto';
import type { RunSource } from '../../protocol/enums.js';
import { laneOfJob } from '../../protocol/api-settings.js';
import { overlayVariables, withAccountVariables } from '../check-types/environment-variables.js';
import { checkTypeDefinition, type CheckDefinition, type CheckTypeDefinition } from '../check-types/index.js';
import type { GroupDefinition } from '../check-groups/schema.js';
import type { ServiceContext } from '../context.js';
import { effectiveRetryStrategy, type RetryStrategy } from '../retry-strategy.js';
import { groupOfCheck } from '../store/check-groups.js';
import { findChecksForTrigger, type CheckRow } from '../store/checks.js';
import { privateLocationIdsBySlug } from '../store/private-locations.js';
import {
  insertTestCheckRun,
  insertTestSession,
  type TestCheckRun,
  type TestSessionProvider,
  type TestSessionRow,
} from '../store/test-sessions.js';
import { allVariables } from '../store/variables.js';
import { judgeCheckRunJob, type CheckRunJob, type RunnableCheck } from './check-run-jobs.js';

export type RunLocation = string | { type: 'PUBLIC' | 'PRIVATE'; region?: string | undefined; id?: string | undefined; slugName?: string | undefined };

/** A run this service cannot start, with the reason the CLI prints. */
export interface Refusal {
  refused: string;
  attributes?: Record<string, string>;
}

interface SessionBasics {
  name: string;
  runLocation: RunLocation;
  shouldRecord: boolean;
  repoInfo?: unknown;
  environment?: string | null | undefined;
  testRetryStrategy?: Record<string, unknown> | null | undefined;
}

export interface TestRunRequest extends SessionBasics {
  checkRunJobs: CheckRunJob[];
  project?: { logicalId?: string | undefined } | undefined;
}

export interface TriggerRequest extends SessionBasics {
  checkRunSuiteId: string;
  targetTags?: string[][] | undefined;
  checkId?: string[] | undefined;
  environmentVariables?: { key: string; value: string }[] | undefined;
}

export interface StartedTestSession {
  session: TestSessionRow;
  /** Logical id (test) or check id (trigger) → sequence id. */
  sequenceIds: Record<string, string>;
  checks: CheckRow[];
}

const PUBLIC_REFUSAL =
  'This Outpost service runs checks only at private locations: pass --private-location <slug> ' +
  '(or set cli.privateRunLocation in checkly.config.ts) to run them with your agents';

async function privateLocationOf(
  ctx: ServiceContext,
  accountId: string,
  runLocation: RunLocation,
): Promise<{ id: string; slug: string } | Refusal> {
  if (typeof runLocation === 'string' || runLocation.type !== 'PRIVATE') return { refused: PUBLIC_REFUSAL };
  const slug = runLocation.slugName ?? '';
  const id = (await privateLocationIdsBySlug(ctx.db, accountId, [slug])).get(slug);
  if (!id || id !== runLocation.id?.toLowerCase()) return { refused: `Private location ${slug} was not found in this account` };
  return { id, slug };
}

interface PlannedRun {
  key: string;
  checkId: string | null;
  logicalId: string | null;
  filePath: string | null;
  checkRunId: string;
  type: CheckTypeDefinition;
  name: string;
  definition: CheckDefinition;
  group: GroupDefinition | undefined;
  extraVariables: { key: string; value: string }[];
}

async function startSession(
  ctx: ServiceContext,
  accountId: string,
  request: SessionBasics,
  provider: TestSessionProvider,
  checkRunSuiteId: string,
  projectLogicalId: string | null,
  runs: readonly PlannedRun[],
): Promise<StartedTestSession | Refusal> {
  const location = await privateLocationOf(ctx, accountId, request.runLocation);
  if ('refused' in location) return location;
  const runSource: RunSource =
    provider === 'TRIGGER'
      ? request.shouldRecord ? 'TRIGGER_RECORD' : 'TRIGGER_NO_RECORD'
      : request.shouldRecord ? 'TEST_RECORD' : 'TEST_NO_RECORD';
  const retryStrategy: RetryStrategy | null = effectiveRetryStrategy({ retryStrategy: request.testRetryStrategy ?? null });
  const accountVariables = await allVariables(ctx.db, accountId);
  const planned: Omit<TestCheckRun, 'testSession'>[] = runs.map((run, position) => {
    const spec = run.type.jobSpec(run.definition, run.group);
    if (run.type.checkType === 'API' || laneOfJob({ checkType: run.type.checkType, settings: spec.settings }) === 'script') {
      const shared = overlayVariables(accountVariables, run.group?.environmentVariables ?? []);
      const own = withAccountVariables(shared, spec.environmentVariables);
      const extra = new Set(run.extraVariables.map((variable) => variable.key));
      spec.environmentVariables = [
        ...own.filter((variable) => !extra.has(variable.key)),
        ...run.extraVariables.map(({ key, value }) => ({ key, value, secret: false })),
      ];
    }
    return {
      sequenceId: randomUUID(),
      checkRunId: run.checkRunId,
      checkId: run.checkId,
      logicalId: run.logicalId,
      filePath: run.filePath,
      position,
      checkType: run.type.checkType,
      name: run.name,
      runSource,
      spec: { ...spec, retryStrategy },
    };
  });
  const session = await ctx.db.transaction(async (tx) => {
    const created = await insertTestSession(tx, {
      accountId,
      name: request.name,
      provider,
      checkRunSuiteId,
      privateLocationId: location.id,
      runLocation: location.slug,
      recorded: request.shouldRecord,
      projectLogicalId,
      repoInfo: request.repoInfo ?? null,
      environment: request.environment ?? null,
    });
    for (const run of planned) await insertTestCheckRun(tx, { ...run, testSession: created });
    return created;
  });
  ctx.events.emit('jobsQueued', location.id);
  const sequenceIds = Object.fromEntries(planned.map((run, index) => [runs[index]!.key, run.sequenceId]));
  return { session, sequenceIds, checks: [] };
}

/** `checkly test`: every job valid, or nothing starts and each problem is told. */
export async function startTestRun(
  ctx: ServiceContext,
  accountId: string,
  request: TestRunRequest,
): Promise<StartedTestSession | Refusal> {
  const judged: RunnableCheck[] = [];
  const problems: Record<string, string> = {};
  for (const [index, job] of request.checkRunJobs.entries()) {
    const verdict = await judgeCheckRunJob(ctx.db, accountId, job, index);
    if ('problems' in verdict) Object.assign(problems, verdict.problems);
    else judged.push(verdict.check);
  }
  if (Object.keys(problems).length > 0) {
    const fields = Object.entries(problems).map(([field, problem]) => `${field} ${problem}`);
    return { refused: `These checks cannot run here: ${fields.join('; ')}`, attributes: problems };
  }
  const suites = new Set(request.checkRunJobs.map((job) => job.sourceInfo.checkRunSuiteId));
  if (suites.size !== 1) return { refused: 'Every check run job must name the same sourceInfo.checkRunSuiteId' };
  const runs = request.checkRunJobs.map((job, index): PlannedRun => ({
    key: job.logicalId ?? String(index),
    checkId: null,
    logicalId: job.logicalId ?? null,
    filePath: job.filePath ?? null,
    checkRunId: job.sourceInfo.checkRunId,
    type: judged[index]!.type,
    name: job.name,
    definition: judged[index]!.definition,
    group: judged[index]!.group,
    extraVariables: [],
  }));
  return startSession(ctx, accountId, request, 'API', [...suites][0]!, request.project?.logicalId ?? null, runs);
}

/** What a stored check runs with once its group had its say (as a scheduled run). */
function withGroup(check: CheckRow, group: GroupDefinition | undefined): CheckDefinition {
  if (!group) return check.definition;
  const runtimeId = (check.definition.runtimeId as string | null | undefined) ?? group.runtimeId;
  return { ...check.definition, ...(runtimeId === undefined ? {} : { runtimeId }) };
}

/**
 * `checkly trigger`: the account's checks with one of the tag sets (all of a
 * set's tags; activated checks only) or one of the ids; no filter at all
 * means every activated check. Undefined when none matched.
 */
export async function startTriggerRun(
  ctx: ServiceContext,
  accountId: string,
  request: TriggerRequest,
): Promise<StartedTestSession | Refusal | undefined> {
  const tagSets = (request.targetTags ?? []).filter((set) => set.length > 0);
  const checkIds = request.checkId ?? [];
  const matchTags = tagSets.length === 0 && checkIds.length === 0 ? [[]] : tagSets;
  const found = await findChecksForTrigger(ctx.db, accountId, { checkId: checkIds, matchTags });
  const runnable: { check: CheckRow; type: CheckTypeDefinition }[] = [];
  for (const check of found) {
    const type = checkTypeDefinition(check.check_type);
    if (type) runnable.push({ check, type });
  }
  if (runnable.length === 0) return undefined;
  const runs: PlannedRun[] = [];
  for (const { check, type } of runnable) {
    const group = (await groupOfCheck(ctx.db, check))?.definition;
    runs.push({
      key: check.id,
      checkId: check.id,
      logicalId: null,
      filePath: null,
      checkRunId: randomUUID(),
      type,
      name: check.name,
      definition: withGroup(check, group),
      group,
      extraVariables: request.environmentVariables ?? [],
    });
  }
  const started = await startSession(ctx, accountId, request, 'TRIGGER', request.checkRunSuiteId, null, runs);
  if ('refused' in started) return started;
  return { ...started, checks: runnable.map(({ check }) => check) };
}
