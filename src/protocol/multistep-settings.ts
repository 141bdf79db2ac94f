import Type from 'typebox';
import { PlaywrightCheckConfigSchema } from './playwright-config.js';

/** 512 KiB of ASCII: far beyond any hand-written multi-step script, well below what a job should carry. */
export const MAX_SCRIPT_CHARS = 524_288;
export const MAX_DEPENDENCY_FILES = 100;
export const MAX_DEPENDENCY_CHARS = 524_288;
/** All dependency files of one check together. */
export const MAX_DEPENDENCIES_TOTAL_CHARS = 2_097_152;
export const MAX_DEPENDENCY_PATH_CHARS = 1024;
/** NAME_MAX of the common Linux file systems. */
const MAX_PATH_SEGMENT_BYTES = 255;

/** A file the script imports, written beside it before it runs. */
export const ScriptDependencySchema = Type.Object({
  path: Type.String({
    minLength: 1,
    maxLength: MAX_DEPENDENCY_PATH_CHARS,
    description: 'Relative and normalised: no leading /, no . or .. segments, no empty segments, no \\',
  }),
  content: Type.String({ maxLength: MAX_DEPENDENCY_CHARS }),
});
export type ScriptDependency = Type.Static<typeof ScriptDependencySchema>;

/** The multi-step settings that travel in a job: the script, its files, and whether it should fail. */
export const MultiStepSettingsSchema = Type.Object({
  script: Type.String({ minLength: 1, maxLength: MAX_SCRIPT_CHARS }),
  /**
   * Where the script lives in its project, relative as dependency paths are
   * (the CLI sends both from the project root): the agent writes it there, so
   * its relative imports (`../fixtures`) find their files and errors name it.
   * A `.ts` name makes it TypeScript. Absent: the agent's own name.
   */
  scriptPath: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_DEPENDENCY_PATH_CHARS })),
  dependencies: Type.Array(ScriptDependencySchema, { maxItems: MAX_DEPENDENCY_FILES }),
  shouldFail: Type.Optional(Type.Boolean()),
  playwrightConfig: Type.Optional(PlaywrightCheckConfigSchema),
});
export type MultiStepSettings = Type.Static<typeof MultiStepSettingsSchema>;

/** Script files the agent may run: JavaScript or TypeScript, as Playwright loads them. */
export const SCRIPT_EXTENSIONS = ['.js', '.mjs', '.cjs', '.ts', '.mts', '.cts'];

/** Why a script path cannot name the script, or undefined when it can. */
export function scriptPathProblem(path: string): string | undefined {
  const problem = dependencyPathProblem(path);
  if (problem) return problem;
  if (!SCRIPT_EXTENSIONS.some((extension) => path.endsWith(extension))) return `must end in one of ${SCRIPT_EXTENSIONS.join(', ')}`;
  return undefined;
}

/** One step of a multi-step run, as the agent reports it in `details.steps`. */
export const MultiStepStepSchema = Type.Object({
  name: Type.String(),
  durationMs: Type.Number({ minimum: 0 }),
  status: Type.Enum(['passed', 'failed', 'skipped']),
  error: Type.Optional(Type.String()),
});
export const MultiStepDetailsSchema = Type.Object({ steps: Type.Array(MultiStepStepSchema) });
export type MultiStepDetails = Type.Static<typeof MultiStepDetailsSchema>;

/**
 * Why a dependency path may not be written under the script's directory, or
 * undefined when it may. Both sides apply it: the service refuses such a
 * check, and the agent refuses such a job rather than trust the service.
 */
export function dependencyPathProblem(path: string): string | undefined {
  if (path.length === 0) return 'must not be empty';
  if (path.includes('\0')) return 'must not contain a NUL character';
  if (path.includes('\\')) return 'must use / as the separator, not \\';
  if (path.startsWith('/')) return 'must be relative, not absolute';
  const segments = path.split('/');
  if (segments.includes('..')) return 'must not contain .. segments';
  if (segments.some((segment) => segment === '' || segment === '.')) {
    return 'must be normalised: no ./ segments, no // and no trailing /';
  }
  if (segments.some((segment) => Buffer.byteLength(segment) > MAX_PATH_SEGMENT_BYTES)) {
    return `must not have a segment longer than ${MAX_PATH_SEGMENT_BYTES} bytes`;
  }
  return undefined;
}
