import { OutpostError } from '../../errors/outpost-error.js';
import { constructLabel } from './construct-refused-error.js';

/**
 * A construct Outpost can run, but whose values the matching API route would
 * refuse (a data-center location, an unknown private location…). Thrown
 * inside the deploy's transaction, so nothing of the deploy stays.
 */
export class ConstructInvalidError extends OutpostError {
  readonly code = 'PROJECT_CONSTRUCT_INVALID';

  constructor(
    readonly construct: { type: string; logicalId: string; kind?: string },
    readonly problem: string,
    readonly attributes: Record<string, string> = {},
  ) {
    super(`${constructLabel(construct)} cannot be deployed; nothing was changed: ${problem}`);
  }
}
