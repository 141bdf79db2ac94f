import { OutpostError } from '../../errors/outpost-error.js';

/** One construct of a project and why Outpost cannot deploy it. */
export interface Refusal {
  type: string;
  logicalId: string;
  /** The check's checkType, where the construct is a check. */
  kind?: string;
  reason: string;
}

export function constructLabel(refusal: Pick<Refusal, 'type' | 'logicalId' | 'kind'>): string {
  return `${refusal.type} "${refusal.logicalId}"${refusal.kind ? ` (${refusal.kind})` : ''}`;
}

/**
 * Constructs Outpost has no counterpart for (heartbeat monitors, dashboards…):
 * all of them are named at once, before anything of the deploy is applied.
 */
export class ConstructRefusedError extends OutpostError {
  readonly code = 'PROJECT_CONSTRUCT_REFUSED';

  constructor(readonly refusals: readonly Refusal[]) {
    super(
      `Outpost cannot deploy ${refusals.length === 1 ? 'this construct' : 'these constructs'}; nothing was changed:\n` +
        refusals.map((refusal) => `  - ${constructLabel(refusal)}: ${refusal.reason}`).join('\n'),
    );
  }
}
