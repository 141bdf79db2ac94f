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

export interface AgentConfigOptions {
  /** The project's own config file, relative to the project; undefined: none. */
  projectConfig: string | undefined;
  /** Where the JSON report the agent reads is written. */
  reportFile: string;
  /** The machine's Chromium; undefined: none (API tests only). */
  chromiumPath: string | undefined;
  /**
   * The run's PLAYWRIGHT_BROWSERS_PATH: the agent links there the builds it
   * has of the suite's Playwright (Firefox, WebKit, ffmpeg), and nothing else.
   */
  browsersDirectory: string;
  /** Stands in for a browser the agent does not have: says so and exits 1. */
  missingBrowserScript: string;
  /** Where the HTML report goes when the project's config asks for one. */
  htmlReportFolder: string;
}

/**
 * The config the agent runs the suite with: the project's own, loaded as it
 * is, with the agent's reporters (the JSON report it reads, a list for the
 * logs, and the HTML report when the project asks for one) and, per
 * project, a browser this agent has: Debian's Chromium for Chromium
 * projects (`browserName`, else `defaultBrowserType` as `devices[…]` sets
 * it, else chromium; a Chrome or Edge `channel` is Chromium too); for a
 * Firefox or WebKit project Playwright's own build where the agent has it
 * (a `<browser>-<revision>` entry of the browsers directory), else the
 * stand-in, so that project's tests fail at once naming it instead of
 * waiting out a launch. Written beside the project's config so relative
 * paths in it mean the same.
 */
export function agentConfigSource(options: AgentConfigOptions): string {
  const base = options.projectConfig ? `import base from ${JSON.stringify(`./${options.projectConfig}`)};` : 'const base = {};';
  return `// Written by the Outpost agent for one run: the project's config with the agent's reporters and browsers.
import { readdirSync } from 'node:fs';
${base}

const chromiumPath = ${JSON.stringify(options.chromiumPath ?? null)};
const browsersDirectory = ${JSON.stringify(options.browsersDirectory)};
const missingBrowser = ${JSON.stringify(options.missingBrowserScript)};
const titles = { firefox: 'Firefox', webkit: 'WebKit' };
const builds = (() => {
  try {
    return readdirSync(browsersDirectory);
  } catch {
    return [];
  }
})();
// A CommonJS config may come through the import wrapped once more.
const config = base.default ?? base;

const browserOf = (use) => {
  const named = use?.browserName;
  if (named) return named;
  if (typeof use?.channel === 'string' && /^(chrome|msedge|chromium)/.test(use.channel)) return 'chromium';
  return use?.defaultBrowserType ?? 'chromium';
};
/** The launch options a project's tests get: \`merged\` is its use as Playwright sees it, the config's under the project's. */
const launchFor = (merged, projectName) => {
  const launchOptions = merged?.launchOptions ?? {};
  const browser = browserOf(merged);
  if (browser === 'firefox' || browser === 'webkit') {
    if (builds.some((build) => build.startsWith(\`\${browser}-\`))) return undefined;
    return {
      ...launchOptions,
      executablePath: missingBrowser,
      args: [...(launchOptions.args ?? []), \`--outpost-project=\${projectName}\`, \`--outpost-browser=\${titles[browser]}\`, \`--outpost-install=\${browser}\`],
    };
  }
  return chromiumPath ? { ...launchOptions, executablePath: chromiumPath } : undefined;
};
const withBrowser = (use, merged, projectName) => {
  const launchOptions = launchFor(merged, projectName);
  return launchOptions ? { ...(use ?? {}), launchOptions } : use;
};
const projects = Array.isArray(config.projects) && config.projects.length > 0
  ? config.projects.map((project) => ({ ...project, use: withBrowser(project.use, { ...(config.use ?? {}), ...(project.use ?? {}) }, project.name ?? '') }))
  : undefined;

const reporters = typeof config.reporter === 'string' ? [config.reporter] : Array.isArray(config.reporter) ? config.reporter : [];
const html = reporters.map((reporter) => (Array.isArray(reporter) ? reporter : [reporter])).find(([name]) => name === 'html');
const htmlOptions = html && typeof html[1] === 'object' && html[1] !== null ? html[1] : {};

export default {
  ...config,
  // With projects, each has its browser: one at the top would reach every project that sets none of its own.
  use: projects ? config.use : withBrowser(config.use, config.use, config.name ?? ''),
  ...(projects ? { projects } : {}),
  reporter: [
    ['list'],
    ['json', { outputFile: ${JSON.stringify(options.reportFile)} }],
    ...(html ? [['html', { ...htmlOptions, outputFolder: ${JSON.stringify(options.htmlReportFolder)}, open: 'never' }]] : []),
  ],
  preserveOutput: 'always',
};
`;
}

/**
 * The stand-in for a browser the agent does not have: Playwright launches it
 * with the project's launch arguments, the agent's among them, and shows
 * what it printed in the test's error ("Browser logs").
 */
export const MISSING_BROWSER_SCRIPT = `#!/bin/sh
# Written by the Outpost agent: stands in for a browser this agent does not have, so the tests that need it fail at once.
project=
browser=
install=
for arg in "$@"; do
  case "$arg" in
    --outpost-project=*) project=\${arg#--outpost-project=} ;;
    --outpost-browser=*) browser=\${arg#--outpost-browser=} ;;
    --outpost-install=*) install=\${arg#--outpost-install=} ;;
  esac
done
printf 'Outpost: project "%s" needs %s, which this agent does not have (set PLAYWRIGHT_BROWSERS_PATH to a directory where \`npx playwright install %s\` put it)\\n' "$project" "$browser" "$install" >&2
exit 1
`;
