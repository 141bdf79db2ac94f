import Type from 'typebox';
import {
  codeBundlePath,
  CommandSchema,
  DEFAULT_INSTALL_COMMAND,
  DEFAULT_PLAYWRIGHT_ENGINE,
  DEFAULT_TEST_COMMAND,
  EngineSchema,
  FilterListSchema,
  PLAYWRIGHT_TIMEOUT_SECONDS,
  type PlaywrightEngine,
  type PlaywrightSettings,
} from '../../protocol/playwright-settings.js';
import { getCodeBundle } from '../store/code-bundles.js';
import { listOrNull, ScriptCheckFields } from './script-check-fields.js';
import { CheckCommonFields, updateSchemaFor, type CheckDefinition, type CheckTypeDefinition } from './common.js';
import {
  environmentVariableProblems,
  jobVariables,
  keepMaskedSecrets,
  type EnvironmentVariable,
} from './environment-variables.js';

const createSchema = Type.Object({
  ...CheckCommonFields,
  checkType: Type.Optional(Type.Literal('PLAYWRIGHT', { default: 'PLAYWRIGHT' })),
  codeBundleId: Type.String({ format: 'uuid', description: 'A bundle uploaded with POST /v1/code-bundles' }),
  engine: Type.Optional({ ...EngineSchema, default: DEFAULT_PLAYWRIGHT_ENGINE, description: 'What the suite runs on' }),
  installCommand: Type.Optional({ ...CommandSchema, default: DEFAULT_INSTALL_COMMAND, description: 'Run by a shell in the project directory' }),
  testCommand: Type.Optional({
    ...CommandSchema,
    default: DEFAULT_TEST_COMMAND,
    description: 'Run by a shell; the agent appends --project per pwProjects, --grep for pwTags and its reporter',
  }),
  pwProjects: listOrNull(FilterListSchema.items, { ...filterOptions(), description: 'Playwright projects to run; [] runs all' }),
  pwTags: listOrNull(FilterListSchema.items, { ...filterOptions(), description: 'Run only tests with one of these tags (@smoke); [] runs all' }),
  ...ScriptCheckFields,
});

function filterOptions(): Record<string, unknown> {
  const { maxItems, uniqueItems } = FilterListSchema as unknown as { maxItems: number; uniqueItems: boolean };
  return { maxItems, uniqueItems };
}

/** A PLAYWRIGHT definition after validation and `nullsAsDefaults`, with what the service found of its bundle. */
interface PlaywrightDefinition extends CheckDefinition {
  codeBundleId: string;
  /** Set by the service from the bundle when the check is stored: jobs carry it to the agent. */
  codeBundleSha256: string;
  codeBundleSize: number;
  engine: PlaywrightEngine;
  installCommand: string;
  testCommand: string;
  pwProjects: string[];
  pwTags: string[];
  environmentVariables: EnvironmentVariable[];
}

const playwright = (definition: CheckDefinition) => definition as PlaywrightDefinition;

function commandProblems(check: PlaywrightDefinition): Record<string, string> {
  const problems: Record<string, string> = {};
  for (const field of ['installCommand', 'testCommand'] as const) {
    if (check[field].trim() === '') problems[field] = 'must contain a command, not only white space';
    else if (check[field].includes('\0')) problems[field] = 'must not contain a NUL character';
  }
  return problems;
}

function filterProblems(check: PlaywrightDefinition): Record<string, string> {
  const problems: Record<string, string> = {};
  check.pwProjects.forEach((project, index) => {
    if (project.trim() === '') problems[`pwProjects.${index}`] = 'must name a project, not only white space';
  });
  check.pwTags.forEach((tag, index) => {
    // Playwright's own rule: a tag starts with @.
    if (!/^@\S+$/.test(tag)) problems[`pwTags.${index}`] = 'must start with @ and contain no white space, as Playwright tags do';
  });
  return problems;
}

export const playwrightCheck: CheckTypeDefinition = {
  checkType: 'PLAYWRIGHT',
  path: 'playwright',
  summary: 'Playwright check suite: a Playwright project from a code bundle, its dependencies installed, its tests run',
  createSchema,
  updateSchema: updateSchemaFor(createSchema),
  requestOnlyFields: [],
  storedFields: {
    codeBundleSha256: Type.String({ description: 'SHA-256 of the code bundle, recorded when the check was saved' }),
    codeBundleSize: Type.Integer({ description: 'Size of the code bundle in bytes' }),
  },
  mergeUpdate: (stored, changes) => {
    const merged = { ...stored, ...changes };
    if (Array.isArray(changes.environmentVariables)) {
      merged.environmentVariables = keepMaskedSecrets(
        changes.environmentVariables as Partial<EnvironmentVariable>[],
        playwright(stored).environmentVariables,
      );
    }
    return merged;
  },
  crossFieldProblems: (definition) => {
    const check = playwright(definition);
    return {
      ...environmentVariableProblems(check.environmentVariables),
      ...commandProblems(check),
      ...filterProblems(check),
    };
  },
  resolveInAccount: async (db, accountId, definition): Promise<{ problems: Record<string, string>; definition: CheckDefinition }> => {
    const check = playwright(definition);
    const bundle = await getCodeBundle(db, accountId, check.codeBundleId);
    if (!bundle) {
      return { problems: { codeBundleId: 'names no code bundle of this account; upload one with POST /v1/code-bundles' }, definition };
    }
    return { problems: {}, definition: { ...definition, codeBundleSha256: bundle.sha256, codeBundleSize: bundle.size } };
  },
  jobSpec: (definition) => {
    const check = playwright(definition);
    const settings: PlaywrightSettings = {
      bundle: {
        id: check.codeBundleId,
        url: codeBundlePath(check.codeBundleId),
        sha256: check.codeBundleSha256,
        size: check.codeBundleSize,
      },
      engine: check.engine,
      installCommand: check.installCommand,
      testCommand: check.testCommand,
      pwProjects: check.pwProjects,
      pwTags: check.pwTags,
      shouldFail: check.shouldFail,
    };
    return {
      settings,
      timeoutSeconds: PLAYWRIGHT_TIMEOUT_SECONDS,
      // Engines are not runtimes: any agent that declared PLAYWRIGHT can run any engine.
      runtimeId: null,
      environmentVariables: jobVariables(check.environmentVariables),
    };
  },
};
