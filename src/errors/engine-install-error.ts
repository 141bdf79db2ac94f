import { OutpostError } from './outpost-error.js';

/** The engine a Playwright suite asked for could not be installed from the npm registry. */
export class EngineInstallError extends OutpostError {
  readonly code = 'ENGINE_INSTALL_FAILED';
}
