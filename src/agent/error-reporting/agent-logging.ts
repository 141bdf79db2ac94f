import { createLogger, type Logger } from '../../logging.js';
import type { AgentConfig } from '../config.js';
import { serviceSecrets } from '../sandbox/sandbox-environment.js';
import { createErrorReporter, type ErrorReporter } from './error-reporter.js';

export interface AgentLogging {
  logger: Logger;
  /** Where the logger's error-level lines are reported (nowhere when EXTERNAL_OBSERVABILITY=off). */
  errors: ErrorReporter;
}

/** The agent's logger, its error-level lines wired to the error reporter. */
export function createAgentLogging(
  config: AgentConfig,
  env: NodeJS.ProcessEnv,
  options: { name?: string; destination?: NodeJS.WritableStream } = {},
): AgentLogging {
  const errors = createErrorReporter(config.errorReporting, {
    apiKey: config.apiKey,
    secrets: Object.values(serviceSecrets(env)),
    // A warning, not an error: an error line would be reported again.
    onUnavailable: (reason) => logger.warn(`error reporting is off: its SDK could not be loaded (${reason})`),
  });
  const logger: Logger = createLogger({
    level: config.logLevel,
    name: options.name ?? 'outpost-agent',
    ...(options.destination ? { destination: options.destination } : {}),
    onError: (message, error) => errors.capture(message, error),
  });
  return { logger, errors };
}

/**
 * An uncaught exception (or unhandled rejection) is logged and reported, the
 * report given up to `flushMs` to leave, and the process exits 1 as Node's own
 * handler would have.
 */
export function reportCrashes(logging: AgentLogging, flushMs = 2000): void {
  process.once('uncaughtException', (error) => {
    logging.logger.fatal({ err: error }, `the agent crashed: ${error.message}`);
    void logging.errors.close(flushMs).finally(() => process.exit(1));
  });
}
