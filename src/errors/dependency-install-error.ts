import { OutpostError } from './outpost-error.js';

/** A Playwright suite's installCommand failed: its dependencies are not there to run the tests with. */
export class DependencyInstallError extends OutpostError {
  readonly code = 'DEPENDENCY_INSTALL_FAILED';
}
