/**
 * The Playwright config the agent writes for one multi-step or browser run:
 * the one test file it runs, the report, the output directory, one worker,
 * no retries, and `use`, `expect` and the test timeout from the check's own
 * `playwrightConfig` laid under the agent's settings. The check chooses its
 * baseURL, viewport, locale, headers and timeouts; the agent keeps the
 * browser it launches (executable, flags, headless) and what it records
 * (trace, screenshots, video).
 */
import { join } from 'node:path';
import { PlaywrightCheckConfigSchema, PlaywrightUseSchema, type PlaywrightCheckConfig } from '../../protocol/playwright-config.js';

export interface RunConfigOptions {
  root: string;
  /** The test file Playwright runs, relative to `check/`: the script, or the kind's entry file that loads it. */
  testFile: string;
  /** The job's timeout: the test timeout when the check sets none, and the most it may set. */
  timeoutMs: number;
  /** The kind's own `use` (script-kind.ts), which wins over the check's. */
  agentUse: Record<string, unknown>;
  /** The check's `playwrightConfig`, as the job carried it. */
  user: PlaywrightCheckConfig | undefined;
}

/** What the agent decides whatever a check asks: recording is on or off by the agent's choice, the browser headless. */
const AGENT_RECORDING = { headless: true, screenshot: 'off', video: 'off' } as const;
/** Launch options that say which browser runs and how: the agent's alone. */
const AGENT_LAUNCH_OPTIONS = ['executablePath', 'headless', 'args', 'ignoreDefaultArgs', 'chromiumSandbox', 'devtools'];

const USE_KEYS = new Set(Object.keys(PlaywrightUseSchema.properties));
const EXPECT_KEYS = new Set(Object.keys(PlaywrightCheckConfigSchema.properties.expect.properties));

/**
 * `use` for the run: the check's options Playwright knows (the schema's; the
 * service drops others, and the agent does not rely on it), then the agent's
 * own on top. Launch options merge the same way, the check's under the
 * agent's, so a check may set `slowMo` or `env` but never the executable or
 * its flags.
 */
export function mergeUse(user: Record<string, unknown> | undefined, agent: Record<string, unknown>): Record<string, unknown> {
  const own = pick(user, USE_KEYS);
  const userLaunch = isRecord(own.launchOptions) ? own.launchOptions : {};
  const agentLaunch = isRecord(agent.launchOptions) ? agent.launchOptions : {};
  const launchOptions = {
    ...Object.fromEntries(Object.entries(userLaunch).filter(([key]) => !AGENT_LAUNCH_OPTIONS.includes(key))),
    ...agentLaunch,
  };
  return {
    ...own,
    ...AGENT_RECORDING,
    ...agent,
    ...(Object.keys(launchOptions).length > 0 ? { launchOptions } : {}),
  };
}

/** The config file's source: CommonJS, since the test file's pattern is a RegExp of its exact path. */
export function runConfigSource(options: RunConfigOptions): string {
  const { root, user } = options;
  const testDir = join(root, 'check');
  const testTimeout = user?.timeout !== undefined && user.timeout > 0 ? Math.min(user.timeout, options.timeoutMs) : options.timeoutMs;
  const expectOptions = pick(user?.expect, EXPECT_KEYS);
  const config = {
    testDir,
    timeout: testTimeout,
    retries: 0,
    workers: 1,
    forbidOnly: false,
    reporter: [['json', { outputFile: join(root, 'report.json') }]],
    outputDir: join(root, 'results'),
    preserveOutput: 'always',
    ...(Object.keys(expectOptions).length > 0 ? { expect: expectOptions } : {}),
    use: mergeUse(user?.use, options.agentUse),
  };
  // That one file, by its whole path: a glob would read `[id].spec.ts` as a pattern and match a dependency of the same name.
  const testMatch = `^${escapeRegExp(join(testDir, options.testFile))}$`;
  return [
    "// Written by the agent for one run; the check's script cannot change what was loaded.",
    `const config = ${JSON.stringify(config, null, 2)};`,
    `config.testMatch = [new RegExp(${JSON.stringify(testMatch)})];`,
    'module.exports = config;',
    '',
  ].join('\n');
}

function pick(value: unknown, keys: ReadonlySet<string>): Record<string, unknown> {
  if (!isRecord(value)) return {};
  return Object.fromEntries(Object.entries(value).filter(([key]) => keys.has(key)));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
