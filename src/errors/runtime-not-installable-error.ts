import { OutpostError } from './outpost-error.js';

/** The runtime is a record only (no package.json to install from); the message lists the installable ones. */
export class RuntimeNotInstallableError extends OutpostError {
  readonly code = 'RUNTIME_NOT_INSTALLABLE';
}
