import { describe, expect, it } from 'vitest';
import { MAINTENANCE_STATUSES, transitionProblem, type MaintenanceStatus } from '../../src/service/maintenance/status.js';

/** Every move the service allows, written out here rather than read from the code under test. */
const ALLOWED = new Set([
  'SCHEDULED>SCHEDULED', 'SCHEDULED>IN_PROGRESS', 'SCHEDULED>CANCELLED',
  'IN_PROGRESS>IN_PROGRESS', 'IN_PROGRESS>VERIFYING', 'IN_PROGRESS>COMPLETED', 'IN_PROGRESS>CANCELLED',
  'VERIFYING>VERIFYING', 'VERIFYING>IN_PROGRESS', 'VERIFYING>COMPLETED',
]);

describe('maintenance status transitions', () => {
  const pairs = MAINTENANCE_STATUSES.flatMap((from) => MAINTENANCE_STATUSES.map((to) => [from, to] as [MaintenanceStatus, MaintenanceStatus]));
  it.each(pairs)('%s → %s', (from, to) => {
    const problem = transitionProblem(from, to);
    if (ALLOWED.has(`${from}>${to}`)) expect(problem).toBeUndefined();
    else expect(problem).toMatch(/\S/);
  });

  it('says a finished maintenance takes no more updates', () => {
    expect(transitionProblem('COMPLETED', 'COMPLETED')).toMatch(/takes no more updates/);
    expect(transitionProblem('CANCELLED', 'IN_PROGRESS')).toMatch(/takes no more updates/);
  });
});
