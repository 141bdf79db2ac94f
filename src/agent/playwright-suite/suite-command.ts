/**
 * The shell lines a suite runs. The commands are the check's own and run as
 * written; what the agent appends (its config, projects, tags) is quoted, so
 * a project name or tag is only ever an argument.
 */
export const AGENT_CONFIG_FILE = 'outpost-agent.playwright.config.ts';

/** Config files Playwright looks for at the project root, in its order. */
export const PROJECT_CONFIG_FILES = [
  'playwright.config.ts',
  'playwright.config.js',
  'playwright.config.mts',
  'playwright.config.mjs',
  'playwright.config.cts',
  'playwright.config.cjs',
];

export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** A --grep pattern matching any of the tags, each as literal text. */
export function tagPattern(tags: readonly string[]): string {
  return tags.map((tag) => tag.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|');
}

export function testCommandLine(testCommand: string, filters: { projects: readonly string[]; tags: readonly string[] }): string {
  const args = ['--config', AGENT_CONFIG_FILE];
  for (const project of filters.projects) args.push('--project', project);
  if (filters.tags.length > 0) args.push('--grep', tagPattern(filters.tags));
  return `${testCommand} ${args.map(shellQuote).join(' ')}`;
}

/**
 * The config the agent runs the suite with: the project's own, loaded as it
 * is, with the agent's reporters (the JSON report it reads, a list for the
 * logs) and, for every project, the machine's Chromium. Written beside the
 * project's config so relative paths in it mean the same.
 */
export function agentConfigSource(options: { projectConfig: string | undefined; reportFile: string; chromiumPath: string | undefined }): string {
  const base = options.projectConfig ? `import base from ${JSON.stringify(`./${options.projectConfig}`)};` : 'const base = {};';
  return `// Written by the Outpost agent for one run: the project's config with the agent's reporters and browser.
${base}

const executablePath = ${JSON.stringify(options.chromiumPath ?? null)};
const withBrowser = (use) =>
  executablePath ? { ...(use ?? {}), launchOptions: { ...(use?.launchOptions ?? {}), executablePath } } : use;
// A CommonJS config may come through the import wrapped once more.
const config = base.default ?? base;

export default {
  ...config,
  use: withBrowser(config.use),
  ...(Array.isArray(config.projects) ? { projects: config.projects.map((project) => ({ ...project, use: withBrowser(project.use) })) } : {}),
  reporter: [['list'], ['json', { outputFile: ${JSON.stringify(options.reportFile)} }]],
  preserveOutput: 'always',
};
`;
}
