import { invalidBodyMessage } from '../http-errors.js';
import { PageBody, pageInput, pageProblems, ServiceBody, type PageBodyValue } from '../routes/status-pages.js';
import { renameStatusPageService } from '../store/projects.js';
import { createPage, createService, getPage, serviceNames, updatePage } from '../store/status-pages.js';
import { ConstructInvalidError } from './construct-invalid-error.js';
import type { DeployScope } from './deploy.js';
import { labelOf, refOf, type Resource } from './payload.js';
import { bodyProblems } from './validators.js';

/**
 * A StatusPageService construct becomes the service POST
 * /v1/status-pages/services would create; deployed again, the same service
 * is kept (renamed in place), so the checks and incidents naming it still do.
 */
export async function applyStatusPageService(scope: DeployScope, resource: Resource): Promise<{ physicalId: string; created: boolean }> {
  const { tx, accountId } = scope;
  const body: Record<string, unknown> = { name: ((resource.payload ?? {}) as { name?: unknown }).name };
  const invalid = bodyProblems(ServiceBody, body);
  if (invalid) throw new ConstructInvalidError(labelOf(resource), invalidBodyMessage(invalid), invalid);
  const name = body.name as string;
  const taken = () => new ConstructInvalidError(labelOf(resource), `A service named ${name} exists`, { name: 'already exists' });

  const previousId = scope.previous('status-page-service', resource.logicalId);
  const storedName = previousId === undefined ? undefined : (await serviceNames(tx, accountId, [previousId])).get(previousId);
  if (previousId !== undefined && storedName !== undefined) {
    if (storedName !== name && !(await renameStatusPageService(tx, accountId, previousId, name))) throw taken();
    return { physicalId: previousId, created: false };
  }
  const created = await createService(tx, accountId, name);
  if (!created) throw taken();
  return { physicalId: created.id, created: true };
}

/**
 * A StatusPage construct becomes the page POST /v1/status-pages would create,
 * through the same schema and checks, its cards showing the services its
 * refs resolve to; deployed again, the page is replaced in place, as PUT
 * /v1/status-pages/{id} would. Only the fields a StatusPage and Outpost's
 * pages share are taken: what Outpost cannot hold was refused before.
 */
export async function applyStatusPage(scope: DeployScope, resource: Resource): Promise<{ physicalId: string; created: boolean }> {
  const { tx, accountId } = scope;
  const label = labelOf(resource);
  const payload = (resource.payload ?? {}) as Record<string, unknown>;
  // A card's services are refs to StatusPageService constructs (or StatusPageService.fromId references).
  const cards = Array.isArray(payload.cards)
    ? (payload.cards as { name?: unknown; services?: unknown }[]).map((card) => ({
        name: card.name,
        services: (Array.isArray(card.services) ? (card.services as unknown[]) : []).map((service) => {
          const ref = refOf(service);
          return ref === undefined ? service : String(scope.resolve(resource, 'status-page-service', ref));
        }),
      }))
    : payload.cards;
  const body: Record<string, unknown> = { name: payload.name, url: payload.url, cards };
  for (const field of ['logo', 'redirectTo', 'favicon', 'defaultTheme'] as const) {
    if (payload[field] !== undefined && payload[field] !== null) body[field] = payload[field];
  }
  const invalid = bodyProblems(PageBody, body);
  if (invalid) throw new ConstructInvalidError(label, invalidBodyMessage(invalid), invalid);
  const page = pageInput(body as unknown as PageBodyValue);
  const problems = await pageProblems(tx, accountId, page);
  if (Object.keys(problems).length > 0) throw new ConstructInvalidError(label, invalidBodyMessage(problems), problems);
  const urlTaken = () => new ConstructInvalidError(label, `The url ${page.url} is taken`, { url: 'is taken' });

  const previousId = scope.previous('status-page', resource.logicalId);
  const stored = previousId === undefined ? undefined : await getPage(tx, accountId, previousId);
  if (stored) {
    const outcome = await updatePage(tx, accountId, stored.id, page);
    if ('urlTaken' in outcome) throw urlTaken();
    if ('notFound' in outcome) throw new ConstructInvalidError(label, `status page ${stored.id} is gone`);
    return { physicalId: stored.id, created: false };
  }
  const created = await createPage(tx, accountId, page);
  if (!created) throw urlTaken();
  return { physicalId: created.id, created: true };
}
