import Type from 'typebox';
import {
  dependencyPathProblem,
  MAX_DEPENDENCIES_TOTAL_CHARS,
  MAX_DEPENDENCY_FILES,
  MAX_SCRIPT_CHARS,
  ScriptDependencySchema,
  scriptPathProblem,
  type MultiStepSettings,
  type ScriptDependency,
} from '../../protocol/multistep-settings.js';
import { PlaywrightCheckConfigSchema, type PlaywrightCheckConfig } from '../../protocol/playwright-config.js';
import { findRuntime, isSelectable, runtimeCatalog } from '../../runtimes/catalog.js';
import { RuntimeIdSchema } from '../schemas/common.js';
import { listOrNull, orNull, ScriptCheckFields } from './script-check-fields.js';
import { CheckCommonFields, updateSchemaFor, type CheckDefinition, type CheckTypeDefinition } from './common.js';
import {
  environmentVariableProblems,
  jobVariables,
  keepMaskedSecrets,
  type EnvironmentVariable,
} from './environment-variables.js';

/** Where a check names no runtime: the one every current agent bundles. */
export const DEFAULT_RUNTIME_ID = '2026.04';
/** What multi-step and browser checks get in comparable services, and what their users plan for. */
const TIMEOUT_SECONDS = 240;
/**
 * A script, its files and its variables at their caps come to about 15 MB of
 * JSON; the server's default limit is sized for uptime checks.
 */
const BODY_LIMIT_BYTES = 16 * 1024 * 1024;

const createSchema = Type.Object({
  ...CheckCommonFields,
  checkType: Type.Optional(Type.Literal('MULTI_STEP', { default: 'MULTI_STEP' })),
  script: Type.String({
    minLength: 1,
    maxLength: MAX_SCRIPT_CHARS,
    description: 'Node.js code driving a browser through the steps of the check',
  }),
  ...ScriptCheckFields,
  doubleCheck: Type.Optional(
    Type.Boolean({ default: true, deprecated: true, description: 'Deprecated: retryStrategy replaces it' }),
  ),
  runtimeId: orNull(RuntimeIdSchema, { description: `null runs the check on ${DEFAULT_RUNTIME_ID}` }),
  scriptPath: Type.Optional(
    Type.Union([Type.String({ maxLength: 1024 }), Type.Null()], {
      description:
        'Where the script lives in its project, relative like dependency paths; the agent writes it there, so relative imports work and a .ts name makes it TypeScript. Kept, never answered',
    }),
  ),
  playwrightConfig: orNull(PlaywrightCheckConfigSchema, {
    description: "Playwright's `use`, `expect` and `timeout` for the script, as the CLI sends them (baseURL, viewport, locale, headers, timeouts)",
  }),
  dependencies: listOrNull(ScriptDependencySchema, {
    maxItems: MAX_DEPENDENCY_FILES,
    description: 'Files the script imports; accepted and kept, never answered',
  }),
});

/** A multi-step definition after validation and `nullsAsDefaults`: the lists are lists. */
interface MultiStepDefinition extends CheckDefinition {
  script: string;
  scriptPath?: string | null;
  playwrightConfig: PlaywrightCheckConfig | null;
  runtimeId: string | null;
  environmentVariables: EnvironmentVariable[];
  dependencies: ScriptDependency[];
}

const multiStep = (definition: CheckDefinition) => definition as MultiStepDefinition;

function runtimeProblem(id: string | null): string | undefined {
  if (id === null) return undefined;
  const runtime = findRuntime(id);
  const choices = runtimeCatalog()
    .filter((candidate) => candidate.multiStepSupport && isSelectable(candidate))
    .map((candidate) => candidate.name)
    .join(', ');
  if (!runtime) return `runtime ${id} is not available on this service; choose one of ${choices}`;
  if (!runtime.multiStepSupport) return `runtime ${id} does not support multi-step checks; choose one of ${choices}`;
  if (!isSelectable(runtime)) {
    return `runtime ${id} was removed on ${runtime.runtimeEndOfLife}; choose one of ${choices}`;
  }
  return undefined;
}

function dependencyProblems(dependencies: readonly ScriptDependency[]): Record<string, string> {
  const problems: Record<string, string> = {};
  const firstIndex = new Map<string, number>();
  let total = 0;
  dependencies.forEach((dependency, index) => {
    total += dependency.content.length;
    const problem = dependencyPathProblem(dependency.path);
    const first = firstIndex.get(dependency.path);
    if (problem) problems[`dependencies.${index}.path`] = problem;
    else if (first !== undefined) problems[`dependencies.${index}.path`] = `repeats dependencies.${first}.path`;
    else firstIndex.set(dependency.path, index);
  });
  if (total > MAX_DEPENDENCIES_TOTAL_CHARS) {
    problems.dependencies = `must hold at most ${MAX_DEPENDENCIES_TOTAL_CHARS} characters of content in all`;
  }
  return problems;
}

export const multiStepCheck: CheckTypeDefinition = {
  checkType: 'MULTI_STEP',
  path: 'multistep',
  summary: 'Multi-step check: a script driving a browser through several steps',
  createSchema,
  updateSchema: updateSchemaFor(createSchema),
  bodyLimit: BODY_LIMIT_BYTES,
  requestOnlyFields: ['scriptPath', 'dependencies'],
  mergeUpdate: (stored, changes) => {
    const merged = { ...stored, ...changes };
    if (Array.isArray(changes.environmentVariables)) {
      merged.environmentVariables = keepMaskedSecrets(
        changes.environmentVariables as Partial<EnvironmentVariable>[],
        multiStep(stored).environmentVariables,
      );
    }
    return merged;
  },
  crossFieldProblems: (definition) => {
    const check = multiStep(definition);
    const problems: Record<string, string> = {
      ...environmentVariableProblems(check.environmentVariables),
      ...dependencyProblems(check.dependencies),
    };
    if (check.script.trim() === '') problems.script = 'must contain code, not only white space';
    if (check.scriptPath) {
      const problem = scriptPathProblem(check.scriptPath);
      if (problem) problems.scriptPath = problem;
      else if (check.dependencies.some((dependency) => dependency.path === check.scriptPath)) {
        problems.scriptPath = 'is also the path of one of the dependencies';
      }
    }
    const runtime = runtimeProblem(check.runtimeId);
    if (runtime) problems.runtimeId = runtime;
    return problems;
  },
  jobSpec: (definition, group) => {
    const check = multiStep(definition);
    // As the comparable product's CLI resolves it: the check's own config, else its group's, whole.
    const playwrightConfig = check.playwrightConfig ?? group?.playwrightConfig ?? null;
    const settings: MultiStepSettings = {
      script: check.script,
      ...(check.scriptPath ? { scriptPath: check.scriptPath } : {}),
      dependencies: check.dependencies.map(({ path, content }) => ({ path, content })),
      shouldFail: check.shouldFail,
      ...(playwrightConfig ? { playwrightConfig } : {}),
    };
    return {
      settings,
      timeoutSeconds: TIMEOUT_SECONDS,
      runtimeId: check.runtimeId ?? DEFAULT_RUNTIME_ID,
      environmentVariables: jobVariables(check.environmentVariables),
    };
  },
};
