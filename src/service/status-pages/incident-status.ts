export const INCIDENT_STATUSES = ['INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED'] as const;
export type IncidentStatus = (typeof INCIDENT_STATUSES)[number];

export const INCIDENT_SEVERITIES = ['MINOR', 'MEDIUM', 'MAJOR', 'CRITICAL'] as const;
export type IncidentSeverity = (typeof INCIDENT_SEVERITIES)[number];

/**
 * An open incident may move to any status, back as well as forward: the
 * cause thought identified may turn out not to be. RESOLVED closes it; a
 * new problem is a new incident.
 */
export function incidentTransitionProblem(from: IncidentStatus): string | undefined {
  return from === 'RESOLVED' ? 'the incident is RESOLVED: it takes no more updates' : undefined;
}
