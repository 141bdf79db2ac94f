import { pino, type Logger } from 'pino';

export type Logger_ = Logger<'log'>;
export type { Logger_ as Logger };

/** The level names users set in LOG_LEVEL, as comparable agents name them. */
export const LOG_LEVELS = ['DEBUG', 'LOG', 'INFO', 'WARN', 'ERROR'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const pinoLevel: Record<LogLevel, string> = {
  DEBUG: 'debug',
  LOG: 'log',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

// Belt and braces: a Secret already prints as <redacted>, but a raw key that
// slips into a bound object under one of these names is cut out too.
const REDACT = [
  'apiKey',
  'rawKey',
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  '*.apiKey',
  '*.rawKey',
  '*.authorization',
];

export interface LoggerOptions {
  level: LogLevel;
  name: string;
  /** Where lines go; stdout unless a test captures them. */
  destination?: NodeJS.WritableStream;
  pretty?: boolean;
  /** Called for every error-level line, with the error the line was logged with, if any. */
  onError?: (message: string, error: Error | undefined) => void;
}

const ERROR_LEVEL = 50;

export function createLogger(options: LoggerOptions): Logger_ {
  const pretty = options.pretty ?? (options.destination === undefined && process.stdout.isTTY === true);
  const base = {
    name: options.name,
    level: pinoLevel[options.level],
    customLevels: { log: 25 },
    redact: { paths: REDACT, censor: '<redacted>' },
    ...(options.onError ? { hooks: { logMethod: errorTap(options.onError) } } : {}),
  };
  if (pretty) {
    return pino({
      ...base,
      transport: { target: 'pino-pretty', options: { colorize: true, customLevels: 'log:25', ignore: 'pid,hostname' } },
    });
  }
  return options.destination
    ? pino(base, options.destination as pino.DestinationStream)
    : pino(base);
}

/** A pino logMethod hook that hands error-level lines to `onError` and logs them as usual. */
function errorTap(onError: NonNullable<LoggerOptions['onError']>) {
  return function (this: Logger, args: Parameters<pino.LogFn>, method: pino.LogFn, level: number): void {
    if (level >= ERROR_LEVEL) {
      const [first, ...rest] = args as unknown[];
      const error = first instanceof Error ? first : isObject(first) && first.err instanceof Error ? first.err : undefined;
      const text = typeof first === 'string' ? first : rest.find((arg): arg is string => typeof arg === 'string');
      try {
        onError(text ?? error?.message ?? 'error', error);
      } catch {
        // The log line matters more than its report.
      }
    }
    method.apply(this, args);
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
