import Type from 'typebox';
import type { Job } from '../../protocol/agent-api.js';

export const MAX_ENVIRONMENT_VARIABLES = 100;
/** What secrets the agent can still scrub from traces; a plain value gets the same room. */
export const MAX_VARIABLE_VALUE_CHARS = 131_072;
/** What every read answers in place of a secret value; sent back unchanged, it keeps the stored value. */
export const SECRET_MASK = '*****';

export const VariableKeySchema = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
  description: 'Letters, digits and _, not starting with a digit',
});

export const EnvironmentVariableSchema = Type.Object({
  key: VariableKeySchema,
  value: Type.String({ maxLength: MAX_VARIABLE_VALUE_CHARS }),
  locked: Type.Optional(Type.Boolean({ default: false })),
  secret: Type.Optional(Type.Boolean({ default: false, description: 'Never shown again once stored' })),
}, { title: 'EnvironmentVariable' });

export interface EnvironmentVariable {
  key: string;
  value: string;
  locked: boolean;
  secret: boolean;
}

/** The agent sets these itself for every run; a check defining them would be overridden or would break scrubbing. */
export function reservedKeyProblem(key: string): string | undefined {
  if (key.startsWith('SERVICE_SECRET_')) {
    return 'is reserved: SERVICE_SECRET_* variables are set by the agent for the secrets it scrubs; mark the variable secret instead';
  }
  if (key === 'SERVICE') return 'is reserved: the agent sets SERVICE for every run';
  if (key === 'CI') return 'is reserved: the agent sets CI for runs triggered by test sessions';
  return undefined;
}

/** Reserved and repeated keys, by field path under `field`. */
export function environmentVariableProblems(
  variables: readonly EnvironmentVariable[],
  field = 'environmentVariables',
): Record<string, string> {
  const problems: Record<string, string> = {};
  const firstIndex = new Map<string, number>();
  variables.forEach((variable, index) => {
    const reserved = reservedKeyProblem(variable.key);
    const first = firstIndex.get(variable.key);
    if (reserved) problems[`${field}.${index}.key`] = reserved;
    else if (first !== undefined) problems[`${field}.${index}.key`] = `repeats ${variable.key} (${field}.${first}.key)`;
    else firstIndex.set(variable.key, index);
  });
  return problems;
}

export function maskSecrets(variables: readonly EnvironmentVariable[]): EnvironmentVariable[] {
  return variables.map((variable) => (variable.secret ? { ...variable, value: SECRET_MASK } : variable));
}

/**
 * An update sends back what it read: a secret's value comes back as the mask.
 * Matched by key, that keeps the stored secret instead of storing the mask,
 * and the variable stays secret: otherwise clearing the flag with the mask
 * sent would reveal a value nobody has sent again.
 */
export function keepMaskedSecrets(
  sent: readonly Partial<EnvironmentVariable>[],
  stored: readonly EnvironmentVariable[],
): Partial<EnvironmentVariable>[] {
  const secrets = new Map(stored.filter((variable) => variable.secret).map((variable) => [variable.key, variable.value]));
  return sent.map((variable) => {
    const kept = variable.value === SECRET_MASK && variable.key !== undefined ? secrets.get(variable.key) : undefined;
    return kept === undefined ? variable : { ...variable, value: kept, secret: true };
  });
}

/** What the agent gets: real values, since the run needs them, and which of them to scrub. */
export function jobVariables(variables: readonly EnvironmentVariable[]): Job['environmentVariables'] {
  return variables.map(({ key, value, secret }) => ({ key, value, secret }));
}

/** `base` with `top` over it: a variable of `top` replaces the one of the same key. */
export function overlayVariables(
  base: readonly EnvironmentVariable[],
  top: readonly EnvironmentVariable[],
): EnvironmentVariable[] {
  const keys = new Set(top.map((variable) => variable.key));
  return [...base.filter((variable) => !keys.has(variable.key)), ...top];
}

/**
 * A run's variables: the account's (and its group's), then the check's; a
 * check's variable replaces the account's of the same key, secret flag and all.
 */
export function withAccountVariables(
  account: readonly EnvironmentVariable[],
  check: Job['environmentVariables'],
): Job['environmentVariables'] {
  const own = new Set(check.map((variable) => variable.key));
  return [...jobVariables(account.filter((variable) => !own.has(variable.key))), ...check];
}
