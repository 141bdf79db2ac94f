import Type from 'typebox';

/**
 * What a Playwright check suite may run on. Engines are not runtimes: a suite
 * brings its own dependencies (its lockfile), so only the interpreter is the
 * agent's to provide.
 */
export const PLAYWRIGHT_ENGINES = ['NODE_22', 'NODE_24', 'NODE_26', 'BUN_1_3'] as const;
export type PlaywrightEngine = (typeof PLAYWRIGHT_ENGINES)[number];
export const DEFAULT_PLAYWRIGHT_ENGINE: PlaywrightEngine = 'NODE_24';
export const DEFAULT_INSTALL_COMMAND = 'npm ci';
export const DEFAULT_TEST_COMMAND = 'npx playwright test';
/** Long enough for a whole suite; the lease is extended while it runs. */
export const PLAYWRIGHT_TIMEOUT_SECONDS = 1800;
/** A code bundle is a project's sources and lockfile, not its node_modules. */
export const MAX_CODE_BUNDLE_BYTES = 50 * 1024 * 1024;
export const MAX_COMMAND_CHARS = 1024;
export const MAX_FILTERS = 50;
export const MAX_FILTER_CHARS = 200;

const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });

/** Where the agent fetches the bundle (a path under the service's address) and what its bytes must hash to. */
export const CodeBundleRefSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  url: Type.String({ description: 'Path of GET /v1/agent/code-bundles/{id}, relative to the service address' }),
  sha256: Sha256,
  size: Type.Integer({ minimum: 0 }),
});
export type CodeBundleRef = Type.Static<typeof CodeBundleRefSchema>;

export const EngineSchema = Type.Enum(PLAYWRIGHT_ENGINES);
export const CommandSchema = Type.String({ minLength: 1, maxLength: MAX_COMMAND_CHARS });
/** Playwright project names and tags: passed as arguments, never through a shell. */
export const FilterListSchema = Type.Array(Type.String({ minLength: 1, maxLength: MAX_FILTER_CHARS }), {
  maxItems: MAX_FILTERS,
  uniqueItems: true,
});

/** The PLAYWRIGHT settings that travel in a job. */
export const PlaywrightSettingsSchema = Type.Object({
  bundle: CodeBundleRefSchema,
  engine: EngineSchema,
  installCommand: CommandSchema,
  testCommand: CommandSchema,
  pwProjects: FilterListSchema,
  pwTags: FilterListSchema,
  shouldFail: Type.Optional(Type.Boolean()),
});
export type PlaywrightSettings = Type.Static<typeof PlaywrightSettingsSchema>;

/** One test of the suite, as the agent reports it in `details.tests`. */
export const PlaywrightTestReportSchema = Type.Object({
  title: Type.String(),
  project: Type.String(),
  file: Type.String(),
  status: Type.Enum(['passed', 'failed', 'timedOut', 'skipped', 'interrupted', 'flaky']),
  durationMs: Type.Number({ minimum: 0 }),
  error: Type.Optional(Type.String()),
});
export type PlaywrightTestReport = Type.Static<typeof PlaywrightTestReportSchema>;

export const codeBundlePath = (id: string): string => `/v1/agent/code-bundles/${id}`;
