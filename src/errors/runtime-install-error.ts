import { OutpostError } from './outpost-error.js';

/** npm could not install a runtime; the message names the runtime and carries npm's own last words. */
export class RuntimeInstallError extends OutpostError {
  readonly code = 'RUNTIME_INSTALL_FAILED';

  constructor(
    /** The runtime ids that failed. */
    readonly runtimes: readonly string[],
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
