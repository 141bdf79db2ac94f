/**
 * A public example project made ready to run here: copied into a work
 * directory (the given directory is never changed), every public base URL it
 * names moved to its loopback stand-in and nothing else changed in its
 * files, and a harness config laid over its own Playwright config that keeps
 * Chromium projects only, launches the machine's Chromium and refuses any
 * host but loopback.
 */
import { cp, mkdir, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { basename, join, relative } from 'node:path';

export const CHROMIUM = '/usr/bin/chromium';
/**
 * Chromium resolves no name but loopback: a public URL the rewrite missed
 * fails at once (net::ERR_NAME_NOT_RESOLVED) instead of leaving the machine.
 */
export const LOOPBACK_ONLY = '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE localhost';

/** A public base URL and the stand-in that answers for it. */
export interface Rewrite {
  from: string;
  to: string;
}

const CONFIG_NAMES = ['playwright.config.ts', 'playwright.config.js', 'playwright.config.mts', 'playwright.config.mjs', 'playwright.config.cts', 'playwright.config.cjs'];
/** Where the harness config writes the names of the projects it left out. */
export const DROPPED_ENV = 'PUBLIC_EXAMPLES_DROPPED_FILE';
/** Where the project's own config goes; the harness config takes its name. */
const OWN_CONFIG = 'playwright.project.config';
const TEST_FILE = /\.(?:spec|test|setup)\.[cm]?[jt]sx?$/;
const SOURCE = /\.(?:[cm]?[jt]s|json)$/;
/** Any http(s) URL whose host is not loopback: left in a file that runs, it would be a request off the machine. */
const PUBLIC_URL = /https?:\/\/(?!127\.0\.0\.1[:/]|localhost[:/])[a-z0-9.-]+\.[a-z]{2,}[^\s'"`)]*/gi;

export interface PreparedProject {
  name: string;
  /** The work copy `npx playwright test` runs in. */
  root: string;
  /** The (rewritten) baseURL its config or the command line gives, for browser checks. */
  baseURL: string | undefined;
  /** Files changed by the rewrite, each with how many URLs moved. */
  rewritten: Record<string, number>;
  /** Public URLs still named in its other source files, outside comments (none of them a test's). */
  leftPublic: string[];
  /** Test files left out, each with the public URLs no stand-in answers for. */
  excluded: Record<string, string>;
  /** Whether its package.json installs without a lockfile (`npm ci` needs one). */
  hasLockfile: boolean;
}

async function filesUnder(root: string, directory = root): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(directory, entry.name);
    if (entry.isDirectory()) found.push(...(await filesUnder(root, path)));
    else found.push(relative(root, path));
  }
  return found;
}

/** A comment line: links in comments point to docs and are never visited, so they stay as they are. */
const COMMENT_LINE = /^\s*(?:\/\/|\/?\*)/;

/** A source's lines but its comment lines. */
function code(text: string): string {
  return text
    .split('\n')
    .filter((line) => !COMMENT_LINE.test(line))
    .join('\n');
}

/** `from` replaced by `to` wherever it occurs outside comment lines, and how often. */
function rewrite(text: string, rewrites: readonly Rewrite[]): { text: string; count: number } {
  let count = 0;
  const lines = text.split('\n').map((line) => {
    if (COMMENT_LINE.test(line)) return line;
    for (const { from, to } of rewrites) {
      const parts = line.split(from);
      count += parts.length - 1;
      line = parts.join(to);
    }
    return line;
  });
  return { text: lines.join('\n'), count };
}

/**
 * The harness config: the project's own (or Playwright's defaults where it
 * has none), its non-Chromium projects left out, and on every project kept
 * the machine's Chromium with the loopback-only guard. Playwright replaces a
 * project's `use.launchOptions` whole, so they are set at both levels.
 */
function harnessConfig(hasOwn: boolean, baseURL: string | undefined): string {
  return `// Written by the public-examples benchmark over the project's own config (${OWN_CONFIG}).
import { writeFileSync } from 'node:fs';
${hasOwn ? `import own from './${OWN_CONFIG}';` : 'const own = {};'}

const GUARD = ${JSON.stringify(LOOPBACK_ONLY)};
const launched = (use = {}) => ({
  ...use,
  launchOptions: { ...(use.launchOptions ?? {}), executablePath: ${JSON.stringify(CHROMIUM)}, args: [...(use.launchOptions?.args ?? []), GUARD] },
});
const browserOf = (use = {}) => use.browserName ?? use.defaultBrowserType ?? own.use?.browserName ?? 'chromium';
const projects = own.projects?.filter((project) => browserOf(project.use) === 'chromium').map((project) => ({ ...project, use: launched(project.use) }));
const dropped = (own.projects ?? []).filter((project) => browserOf(project.use) !== 'chromium').map((project) => \`\${project.name} (\${browserOf(project.use)})\`);
if (process.env.${DROPPED_ENV}) writeFileSync(process.env.${DROPPED_ENV}, JSON.stringify(dropped));

export default {
  ...own,
  use: launched({ ...(own.use ?? {})${baseURL ? `, baseURL: ${JSON.stringify(baseURL)}` : ''} }),
  ...(projects ? { projects } : {}),
};
`;
}

/**
 * Copies `source` into `work`, rewrites its base URLs and lays the harness
 * config over its own. `defaultBaseURL` stands for the baseURL a project
 * without a Playwright config gets from elsewhere (a checkly.config's
 * playwrightConfig), already rewritten by the caller's table.
 */
export async function prepareProject(
  source: string,
  work: string,
  rewrites: readonly Rewrite[],
  defaultBaseURL: string | undefined,
): Promise<PreparedProject> {
  const name = basename(source);
  const root = join(work, name);
  await cp(source, root, { recursive: true, filter: (path) => basename(path) !== 'node_modules' });
  const rewritten: Record<string, number> = {};
  const leftPublic: string[] = [];
  const excluded: Record<string, string> = {};
  for (const file of await filesUnder(root)) {
    if (!SOURCE.test(file) || file === 'package.json' || file === 'package-lock.json') continue;
    const before = await readFile(join(root, file), 'utf8');
    const { text, count } = rewrite(before, rewrites);
    if (count > 0) {
      rewritten[file] = count;
      await writeFile(join(root, file), text);
    }
    const left = code(text).match(PUBLIC_URL) ?? [];
    // A test that still names a public host is not run at all: Playwright's request fixture resolves names
    // in Node.js, where Chromium's loopback-only guard does not reach.
    if (left.length > 0 && TEST_FILE.test(file)) {
      excluded[file] = left.join(', ');
      await rm(join(root, file));
      continue;
    }
    for (const url of left) leftPublic.push(`${file}: ${url}`);
  }
  const own = CONFIG_NAMES.find((file) => existsSync(join(root, file)));
  let baseURL = defaultBaseURL;
  if (own) {
    const text = await readFile(join(root, own), 'utf8');
    // Playwright gives a config with a webServer on a port and no baseURL http://localhost:<port>.
    const serverPort = /webServer[\s\S]*?port:\s*(\d+)/.exec(code(text))?.[1];
    baseURL = /baseURL:\s*['"`]([^'"`]+)['"`]/.exec(code(text))?.[1] ?? (serverPort ? `http://localhost:${serverPort}` : baseURL);
    await rename(join(root, own), join(root, `${OWN_CONFIG}${own.slice('playwright.config'.length)}`));
  }
  await writeFile(join(root, 'playwright.config.ts'), harnessConfig(own !== undefined, own ? undefined : defaultBaseURL));
  if (!existsSync(join(root, 'package.json'))) await writeFile(join(root, 'package.json'), `${JSON.stringify({ name, private: true, devDependencies: { '@playwright/test': '^1' } }, null, 2)}\n`);
  return { name, root, baseURL, rewritten, leftPublic, excluded, hasLockfile: existsSync(join(root, 'package-lock.json')) };
}

/** The packages a project's package.json asks for besides Playwright itself (which comes from the runtime). */
export async function extraPackages(root: string): Promise<Record<string, string>> {
  const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
  const wanted = { ...manifest.dependencies, ...manifest.devDependencies };
  // The checkly CLI deploys checks; no Playwright config or spec here loads it.
  for (const name of ['@playwright/test', 'playwright', 'playwright-core', 'checkly']) delete wanted[name];
  return wanted;
}

/**
 * The project's node_modules for `npx playwright test`: the runtime's
 * packages (its Playwright) and, beside them, the extra packages the project
 * asks for (dotenv, http-server), each linked; their bins together.
 */
export async function linkModules(root: string, runtimeModules: string, extraModules: string | undefined): Promise<void> {
  const modules = join(root, 'node_modules');
  await mkdir(join(modules, '.bin'), { recursive: true });
  const sources = [runtimeModules, ...(extraModules && existsSync(extraModules) ? [extraModules] : [])];
  for (const source of sources) {
    for (const entry of await readdir(source)) {
      if (entry === '.bin' || entry.startsWith('.')) continue;
      const scoped = entry.startsWith('@');
      const names = scoped ? (await readdir(join(source, entry))).map((inner) => join(entry, inner)) : [entry];
      for (const name of names) {
        if (existsSync(join(modules, name))) continue; // the runtime's wins: its Playwright runs
        await mkdir(join(modules, name, '..'), { recursive: true });
        await symlink(join(source, name), join(modules, name), 'dir');
      }
    }
    if (!existsSync(join(source, '.bin'))) continue;
    for (const bin of await readdir(join(source, '.bin'))) {
      if (!existsSync(join(modules, '.bin', bin))) await symlink(join(source, '.bin', bin), join(modules, '.bin', bin));
    }
  }
}
