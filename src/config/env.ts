import { CronPattern, type CronMode } from 'croner';
import { cleanEnv, EnvMissingError, makeValidator, type ValidatorSpec } from 'envalid';
import { ConfigError } from '../errors/index.js';
import { parseCidrList, splitList, type Cidr } from '../net-policy/index.js';

export type EnvSpecs = Record<string, ValidatorSpec<unknown>>;

/** Whole numbers only: "1.5", "1e3" and " 7 " are refused, not rounded. */
export const integer = (min: number, max: number) =>
  makeValidator<number>((raw) => {
    if (!/^\d+$/.test(raw)) throw new Error(`must be a whole number from ${min} to ${max}`);
    const value = Number(raw);
    if (value < min || value > max) throw new Error(`must be a whole number from ${min} to ${max}`);
    return value;
  });

export const pattern = (regex: RegExp, what: string) =>
  makeValidator<string>((raw) => {
    if (!regex.test(raw)) throw new Error(`must be ${what}`);
    return raw;
  });

/** `raw` as a URL; what it must be otherwise is `expected`, the validator's message. */
export function urlOr(raw: string, expected: string): URL {
  try {
    return new URL(raw);
  } catch {
    throw new Error(expected);
  }
}

export const httpUrl = makeValidator<string>((raw) => {
  const parsed = urlOr(raw, 'must be an absolute http:// or https:// URL');
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error('must be an absolute http:// or https:// URL');
  }
  return raw.replace(/\/+$/, '');
});

/** Address ranges, comma- or space-separated: "10.0.0.0/8, fd00::/8, 192.0.2.7". */
export const cidrList = makeValidator<Cidr[]>((raw) => {
  const entries = splitList(raw);
  const parsed = parseCidrList(entries);
  if ('invalid' in parsed) {
    const position = entries.indexOf(parsed.invalid) + 1;
    throw new Error(`must be address ranges such as 10.0.0.0/8 or fd00::/8, comma-separated (entry ${position} is not one)`);
  }
  return parsed.cidrs;
});

/** Five fields, or six with seconds first: what the configuration reference promises, read the same way where it is scheduled. */
export const CRON_MODE: CronMode = '5-or-6-parts';

/** A five- or six-field cron expression. */
export const cronSchedule = makeValidator<string>((raw) => {
  try {
    new CronPattern(raw, undefined, { mode: CRON_MODE });
  } catch {
    throw new Error('must be a cron expression such as "*/10 * * * *"');
  }
  return raw;
});

/** A Sentry DSN: scheme://public-key@host[:port][/path]/project-id, the project id a number. */
export const sentryDsn = makeValidator<string>((raw) => {
  const expected = 'must be a DSN such as https://public-key@errors.example.com/1';
  const parsed = urlOr(raw, expected);
  const project = parsed.pathname.split('/').pop() ?? '';
  if (!['http:', 'https:'].includes(parsed.protocol) || !parsed.username || !/^\d+$/.test(project)) {
    throw new Error(expected);
  }
  return raw;
});

export const upperChoice = <T extends string>(choices: readonly T[]) =>
  makeValidator<T>((raw) => {
    const value = raw.toUpperCase() as T;
    if (!choices.includes(value)) throw new Error(`must be one of ${choices.join(', ')}`);
    return value;
  });

/**
 * Validates every variable at once and throws one ConfigError naming each bad
 * one. Values are never echoed: a typo in a secret must not land in a log.
 */
export function parseEnv<S extends EnvSpecs>(
  specs: S,
  env: Record<string, string | undefined>,
  program: string,
) {
  return cleanEnv(env, specs, {
    reporter: ({ errors }) => {
      const problems = Object.entries(errors).map(([name, error]) => {
        if (error instanceof EnvMissingError) return `  ${name} is required and not set`;
        const reason = error instanceof Error ? error.message : String(error);
        return `  ${name} ${/^(must|is) /.test(reason) ? reason : `is invalid: ${reason}`}`;
      });
      if (problems.length > 0) {
        throw new ConfigError(`${program}: invalid configuration\n${problems.join('\n')}`);
      }
    },
  });
}

/** The variable table for --help, drawn from the same specs that validate. */
export function describeEnv(specs: EnvSpecs): string {
  const rows = Object.entries(specs).map(([name, spec]) => {
    const fallback =
      spec.default === undefined ? (isRequired(spec) ? ' (required)' : '') : ` (default: ${typeof spec.default === 'string' ? spec.default : JSON.stringify(spec.default)})`;
    return `  ${name.padEnd(24)} ${spec.desc ?? ''}${fallback}`;
  });
  return rows.join('\n');
}

function isRequired(spec: ValidatorSpec<unknown>): boolean {
  return !('default' in spec);
}
