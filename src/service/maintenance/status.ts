/** A maintenance's status, as its updates move it. */
export const MAINTENANCE_STATUSES = ['SCHEDULED', 'IN_PROGRESS', 'VERIFYING', 'COMPLETED', 'CANCELLED'] as const;
export type MaintenanceStatus = (typeof MAINTENANCE_STATUSES)[number];

/**
 * Where a maintenance may go from each status. The spec shows none; these
 * are the moves a status page reader can follow: work starts or is called
 * off, is checked (and may go back to work), and ends. An update may also
 * keep the status, as a note. COMPLETED and CANCELLED are final.
 */
const NEXT: Record<MaintenanceStatus, readonly MaintenanceStatus[]> = {
  SCHEDULED: ['IN_PROGRESS', 'CANCELLED'],
  IN_PROGRESS: ['VERIFYING', 'COMPLETED', 'CANCELLED'],
  VERIFYING: ['IN_PROGRESS', 'COMPLETED'],
  COMPLETED: [],
  CANCELLED: [],
};

/** Statuses a maintenance may be created with. */
export const INITIAL_STATUSES: readonly MaintenanceStatus[] = ['SCHEDULED', 'IN_PROGRESS'];

/** Why `from` → `to` is refused, or undefined when it is allowed. */
export function transitionProblem(from: MaintenanceStatus, to: MaintenanceStatus): string | undefined {
  if (from === to) {
    return NEXT[from].length === 0 ? `the maintenance is ${from}: it takes no more updates` : undefined;
  }
  if (NEXT[from].includes(to)) return undefined;
  const allowed = NEXT[from];
  return allowed.length === 0
    ? `the maintenance is ${from}: it takes no more updates`
    : `cannot go from ${from} to ${to}; from ${from}: ${[from, ...allowed].join(', ')}`;
}
