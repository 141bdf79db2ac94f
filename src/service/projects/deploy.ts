import type { ChannelSubscription } from '../alerts/subscriptions.js';
import type { ServiceContext } from '../context.js';
import type { Queryable } from '../db/database.js';
import {
  claimProject,
  deferFirstRuns,
  privateLocationSlugsById,
  projectResources,
  recordDeployment,
  replaceProjectResources,
  type DeploymentRow,
  type ProjectResourceRow,
} from '../store/projects.js';
import { applyChannel } from './apply-channel.js';
import { applyCheck } from './apply-check.js';
import { applyGroup } from './apply-group.js';
import { applyMaintenanceWindow } from './apply-maintenance-window.js';
import { applyStatusPage, applyStatusPageService } from './apply-status-page.js';
import { ConstructInvalidError } from './construct-invalid-error.js';
import { ConstructRefusedError, type Refusal } from './construct-refused-error.js';
import { physicalIdOf, resourceKey, type DiffEntry } from './diff.js';
import { collectLinks } from './links.js';
import { labelOf, type ProjectPayload, type Resource } from './payload.js';
import { removeResources } from './removal.js';
import { refusalOf } from './support.js';
import { transactionalDatabase } from './transactional-database.js';

export interface DeployOptions {
  dryRun: boolean;
  /** Constructs gone from the code keep their records, which leave the project (DETACHED). */
  preserveResources: boolean;
  /** false: new checks first run one frequency after the deploy rather than at once. */
  scheduleOnDeploy: boolean;
}

export interface DeployOutcome {
  diff: DiffEntry[];
  /** The deployment the CLI follows; none for a dry run. */
  deployment?: DeploymentRow;
}

/** What a construct's writer gets: the deploy's transaction and how to find what links point at. */
export interface DeployScope {
  ctx: ServiceContext;
  tx: Queryable;
  accountId: string;
  payload: ProjectPayload;
  /** The record the construct became at the last deploy, if any. */
  previous(type: string, logicalId: string): string | undefined;
  /** The physical id a link names; the construct it is on fails when nothing has it. */
  resolve(owner: Resource, type: string, logicalId: string): string | number;
  /** Slugs of the private locations a check or group is assigned to. */
  locationSlugs(owner: Resource, type: 'check' | 'check-group'): Promise<string[]>;
  /** Resolved alert channel subscriptions of a check or group. */
  subscriptions(owner: Resource, type: 'check' | 'check-group'): ChannelSubscription[];
}

/** Thrown to roll back a dry run once its diff is known; never leaves this module. */
class DryRunFinished extends Error {
  constructor(readonly diff: DiffEntry[]) {
    super('dry run finished');
  }
}

/** How each kind of construct becomes a record. */
const WRITERS: Record<string, (scope: DeployScope, resource: Resource) => Promise<{ physicalId: string | number; created: boolean }>> = {
  'alert-channel': applyChannel,
  'check-group': applyGroup,
  check: applyCheck,
  'maintenance-window': applyMaintenanceWindow,
  'status-page-service': applyStatusPageService,
  'status-page': applyStatusPage,
};

/** Order the records are written in, so a link finds what it points at. */
const WRITE_ORDER = ['alert-channel', 'status-page-service', 'check-group', 'check', 'maintenance-window', 'status-page'];

/**
 * Applies a project in one transaction: every construct becomes (or updates
 * in place) the record the matching API route would have made; records of
 * constructs gone from the project are deleted. Any refusal or invalid
 * construct rolls everything back. A dry run does the same and rolls back,
 * so the preview names the same problems a deploy would hit.
 */
export async function deployProject(
  ctx: ServiceContext,
  accountId: string,
  payload: ProjectPayload,
  options: DeployOptions,
): Promise<DeployOutcome> {
  const refusals = payload.resources.map(refusalOf).filter((refusal): refusal is Refusal => refusal !== undefined);
  if (refusals.length > 0) throw new ConstructRefusedError(refusals);
  try {
    return await ctx.db.transaction(async (tx) => {
      const diff = await apply(ctx, tx, accountId, payload, options);
      if (options.dryRun) throw new DryRunFinished(diff);
      const deployment = await recordDeployment(tx, accountId, {
        projectLogicalId: payload.project.logicalId,
        kind: 'DEPLOY',
        status: 'SUCCEEDED',
        result: { diff },
      });
      return { diff, deployment };
    });
  } catch (error) {
    if (error instanceof DryRunFinished) return { diff: error.diff };
    throw error;
  }
}

async function apply(
  ctx: ServiceContext,
  tx: Queryable,
  accountId: string,
  payload: ProjectPayload,
  options: DeployOptions,
): Promise<DiffEntry[]> {
  const project = await claimProject(tx, accountId, {
    logicalId: payload.project.logicalId,
    name: payload.project.name,
    repoUrl: payload.project.repoUrl ?? null,
  });
  const existing = await projectResources(tx, project.id);
  const previous = new Map(existing.map((row) => [resourceKey(row.resource_type, row.logical_id), row.physical_id]));
  const physical = new Map<string, string | number>();
  for (const resource of payload.resources) {
    if (!resource.member && resource.physicalId !== undefined && resource.physicalId !== null) {
      physical.set(resourceKey(resource.type, resource.logicalId), resource.physicalId);
    }
  }
  const links = collectLinks(payload.resources);
  const slugs = new Map<string, string | undefined>();
  const scope: DeployScope = {
    ctx: { ...ctx, db: transactionalDatabase(ctx.db, tx) },
    tx,
    accountId,
    payload,
    previous: (type, logicalId) => previous.get(resourceKey(type, logicalId)),
    resolve(owner, type, logicalId) {
      const id = physical.get(resourceKey(type, logicalId));
      if (id === undefined) throw new ConstructInvalidError(labelOf(owner), `it refers to ${type} "${logicalId}", which is not in the project`);
      return id;
    },
    async locationSlugs(owner, type) {
      const found: string[] = [];
      for (const location of links.privateLocations(type, owner.logicalId)) {
        const id = String(this.resolve(owner, 'private-location', location));
        if (!slugs.has(id)) slugs.set(id, (await privateLocationSlugsById(tx, accountId, [id])).get(id));
        const slug = slugs.get(id);
        if (slug === undefined) throw new ConstructInvalidError(labelOf(owner), `private location ${id} does not exist in this account`);
        found.push(slug);
      }
      return found;
    },
    subscriptions(owner, type) {
      return links.subscriptions(type, owner.logicalId).map((subscription) => ({
        alertChannelId: Number(this.resolve(owner, 'alert-channel', subscription.channel)),
        activated: subscription.activated,
      }));
    },
  };

  const diff: DiffEntry[] = [];
  const kept: ProjectResourceRow[] = [];
  const members = payload.resources.filter((resource) => resource.member);
  for (const type of WRITE_ORDER) {
    for (const resource of members.filter((candidate) => candidate.type === type)) {
      const written = await WRITERS[type]!(scope, resource);
      physical.set(resourceKey(type, resource.logicalId), written.physicalId);
      kept.push({ resource_type: type, logical_id: resource.logicalId, physical_id: String(written.physicalId) });
      diff.push({ type, logicalId: resource.logicalId, physicalId: options.dryRun && written.created ? null : written.physicalId, action: written.created ? 'CREATE' : 'UPDATE' });
    }
  }
  // Links live on their check or group and have no record of their own; the project lists them to tell CREATE from UPDATE.
  for (const resource of members.filter((candidate) => !WRITE_ORDER.includes(candidate.type))) {
    const before = previous.get(resourceKey(resource.type, resource.logicalId));
    kept.push({ resource_type: resource.type, logical_id: resource.logicalId, physical_id: resource.logicalId });
    diff.push({ type: resource.type, logicalId: resource.logicalId, physicalId: null, action: before === undefined ? 'CREATE' : 'UPDATE' });
  }

  if (!options.scheduleOnDeploy) {
    const created = diff.filter((entry) => entry.type === 'check' && entry.action === 'CREATE').map((entry) => String(physical.get(resourceKey('check', entry.logicalId))));
    await deferFirstRuns(tx, accountId, created);
  }

  const present = new Set(kept.map((row) => resourceKey(row.resource_type, row.logical_id)));
  const gone = existing.filter((row) => !present.has(resourceKey(row.resource_type, row.logical_id)));
  if (options.preserveResources) {
    diff.push(
      ...gone.map((row) => ({ type: row.resource_type, logicalId: row.logical_id, physicalId: physicalIdOf(row.resource_type, row.physical_id), action: 'DETACHED' as const })),
    );
  } else {
    diff.push(...(await removeResources(scope.ctx.db, accountId, gone)));
  }
  await replaceProjectResources(tx, project.id, kept);
  return diff;
}
