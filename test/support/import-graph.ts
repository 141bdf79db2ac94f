/**
 * Which npm packages a part of the program loads: the modules reachable from
 * some entry files, each compiled as tsc compiles it (so imports of types
 * only are gone, and `import { type X }` under verbatimModuleSyntax is still
 * a load), following relative imports, dynamic imports and worker files
 * named by `new URL('./x.js', import.meta.url)`.
 */
import { readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, resolve } from 'node:path';
import ts from 'typescript';

const COMPILER_OPTIONS: ts.CompilerOptions = {
  module: ts.ModuleKind.ESNext,
  target: ts.ScriptTarget.ES2023,
  verbatimModuleSyntax: true,
};

const SPECIFIERS = [
  /\b(?:import|export)\s[^'"]*?\bfrom\s*['"]([^'"]+)['"]/g,
  /\bimport\s*['"]([^'"]+)['"]/g,
  /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  /\bnew URL\(\s*['"](\.[^'"]+\.js)['"]\s*,\s*import\.meta\.url\s*\)/g,
];

export interface ImportGraph {
  /** Source files reached, absolute paths. */
  files: Set<string>;
  /** npm package names imported by them (`@scope/name`, `name`), builtins left out. */
  packages: Set<string>;
}

/** The package a bare specifier names: `typebox/value` → `typebox`, `@sentry/node/x` → `@sentry/node`. */
export function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** What a compiled module loads, by specifier. */
export function specifiersOf(file: string): string[] {
  const output = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions: COMPILER_OPTIONS, fileName: file }).outputText;
  return SPECIFIERS.flatMap((pattern) => [...output.matchAll(pattern)].map((match) => match[1]!));
}

/**
 * Walks from `entries` (TypeScript sources). `follow(specifier, from)` may
 * refuse an edge: how the CLI's commands each load only their own half.
 */
export function importGraph(entries: readonly string[], follow: (specifier: string, from: string) => boolean = () => true): ImportGraph {
  const files = new Set<string>();
  const packages = new Set<string>();
  const pending = [...entries];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const specifier of specifiersOf(file)) {
      if (!follow(specifier, file)) continue;
      if (specifier.startsWith('.')) pending.push(resolve(dirname(file), specifier).replace(/\.js$/, '.ts'));
      else if (!isBuiltin(specifier)) packages.add(packageOf(specifier));
    }
  }
  return { files, packages };
}

/**
 * What `outpost agent` loads: the CLI and the agent's half, without the
 * service's and the dev command's modules, which the agent never imports.
 */
export function agentImportGraph(root: string): ImportGraph {
  const cli = resolve(root, 'src/cli.ts');
  const entries = [
    cli,
    ...[
      'agent/agent.ts',
      'agent/error-reporting/agent-logging.ts',
      'agent/v8-tuning.ts',
      'runtimes/install.ts',
      'runtimes/catalog.ts',
      'runtimes/installed.ts',
      'runtimes/runtime-table.ts',
    ].map((path) => resolve(root, 'src', path)),
  ];
  return importGraph(entries, (specifier, from) => !(from === cli && /^\.\/(service|dev)\//.test(specifier) && specifier !== './service/config.js'));
}
