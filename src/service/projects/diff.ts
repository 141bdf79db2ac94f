/** What a deploy did, or would do, to one construct: the entries `checkly deploy --preview` prints. */
export type DeployAction = 'CREATE' | 'UPDATE' | 'DELETE' | 'DETACHED';

export interface DiffEntry {
  type: string;
  logicalId: string;
  physicalId: string | number | null;
  action: DeployAction;
}

export const resourceKey = (type: string, logicalId: string): string => `${type}\u0000${logicalId}`;

const NUMBERED = new Set(['check-group', 'alert-channel', 'maintenance-window']);

/** The physical id as the record's own id type: groups, channels and windows have numbers, checks uuids. */
export function physicalIdOf(type: string, physicalId: string): string | number {
  return NUMBERED.has(type) ? Number(physicalId) : physicalId;
}
