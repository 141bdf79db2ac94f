import { invalidBodyMessage } from '../http-errors.js';
import { WindowCreate, windowProblems } from '../routes/maintenance-windows.js';
import { createWindow, getWindow, updateWindow, type WindowInput } from '../store/maintenance-windows.js';
import { ConstructInvalidError } from './construct-invalid-error.js';
import type { DeployScope } from './deploy.js';
import { labelOf, type Resource } from './payload.js';
import { bodyProblems } from './validators.js';

/**
 * A maintenance window construct becomes the window POST
 * /v1/maintenance-windows would create (checks with any of its tags are in
 * it); deployed again, it is updated in place.
 */
export async function applyMaintenanceWindow(scope: DeployScope, resource: Resource): Promise<{ physicalId: number; created: boolean }> {
  const { tx, accountId } = scope;
  const label = labelOf(resource);
  const body: Record<string, unknown> = structuredClone((resource.payload ?? {}) as Record<string, unknown>);
  const invalid = bodyProblems(WindowCreate, body);
  if (invalid) throw new ConstructInvalidError(label, invalidBodyMessage(invalid), invalid);
  const window = body as unknown as WindowInput;
  const problems = windowProblems(window);
  if (Object.keys(problems).length > 0) throw new ConstructInvalidError(label, invalidBodyMessage(problems), problems);

  const previousId = scope.previous('maintenance-window', resource.logicalId);
  const stored = previousId === undefined ? undefined : await getWindow(tx, accountId, Number(previousId));
  if (stored) {
    const row = await updateWindow(tx, accountId, stored.id, window);
    return { physicalId: row!.id, created: false };
  }
  return { physicalId: (await createWindow(tx, accountId, window)).id, created: true };
}
