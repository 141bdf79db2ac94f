import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findRuntime } from '../../src/runtimes/catalog.js';
import { copyOf, finalStage, parseDockerfile, type Instruction } from '../support/dockerfile.js';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (name: string) => parseDockerfile(readFileSync(resolve(ROOT, name), 'utf8'));
const args = (instructions: Instruction[], keyword: string) =>
  instructions.filter((instruction) => instruction.keyword === keyword).map((instruction) => instruction.args);
const argDefault = (instructions: Instruction[], name: string) =>
  /^\S+="?([^"]*)"?$/.exec(args(instructions, 'ARG').find((arg) => arg.startsWith(`${name}=`)) ?? '')?.[1];
const tsconfigOutDir = () => (JSON.parse(readFileSync(resolve(ROOT, 'tsconfig.build.json'), 'utf8')) as { compilerOptions: { outDir: string } }).compilerOptions.outDir;

describe.each(['Dockerfile', 'Dockerfile.uptime'])('%s', (name) => {
  const instructions = read(name);
  const final = finalStage(instructions);

  it('copies only what the repository has, or what its build stage makes', () => {
    for (const instruction of instructions.filter((candidate) => candidate.keyword === 'COPY')) {
      const { from, sources } = copyOf(instruction);
      if (from === undefined) {
        for (const source of sources) expect(existsSync(resolve(ROOT, source)), `${name}: COPY ${source}`).toBe(true);
        continue;
      }
      // From the build stage: its WORKDIR, and `npm run build` writing tsconfig.build.json's outDir there.
      const stage = instructions.filter((candidate) => candidate.stageName === from);
      const workdir = args(stage, 'WORKDIR').at(-1);
      expect(args(stage, 'RUN')).toContain('npm run build');
      for (const source of sources) expect(source, `${name}: COPY --from=${from} ${source}`).toBe(`${workdir}/${tsconfigOutDir()}`);
    }
  });

  it('starts the built CLI under an init process, as a user of its own, and checks its liveness', () => {
    const entrypoint = JSON.parse(args(final, 'ENTRYPOINT')[0]!) as string[];
    expect(entrypoint.slice(0, 3)).toEqual(['tini', '--', 'node']);
    expect(entrypoint[3]).toBe(`/app/${tsconfigOutDir()}/cli.js`);
    expect(existsSync(resolve(ROOT, 'src/cli.ts'))).toBe(true);
    expect(JSON.parse(args(final, 'CMD')[0]!)).toEqual(['agent']);
    expect(args(final, 'USER').at(-1)).toBe('outpost');
    expect(args(final, 'HEALTHCHECK')[0]).toContain('/-/liveness');
    expect(args(final, 'LABEL').join(' ')).toContain('org.opencontainers.image.version="${VERSION}"');
    const installs = args(final, 'RUN').join(' ');
    for (const tool of ['tini', 'redis-server', 'iputils-ping']) expect(installs, tool).toContain(tool);
    // Production dependencies only, from the lockfile.
    expect(installs).toContain('npm ci --omit=dev');
  });

  it('runs on Node.js 24', () => {
    expect(argDefault(instructions, 'NODE_IMAGE')).toMatch(/^node:24-/);
  });
});

describe('the full image', () => {
  const final = finalStage(read('Dockerfile'));

  it('bundles runtime 2026.04 by default, and the migration image\'s runtimes are installable', () => {
    const runtimes = argDefault(final, 'RUNTIMES');
    expect(runtimes).toBe('2026.04');
    expect(args(final, 'RUN')).toContain('node dist/cli.js runtimes install ${RUNTIMES} && npm cache clean --force');
    const migration = /RUNTIMES="([^"]+)"/.exec(readFileSync(resolve(ROOT, 'Dockerfile'), 'utf8'))![1]!.split(' ');
    expect(migration).toEqual(['2024.09', '2025.04', '2026.04']);
    for (const id of migration) expect(findRuntime(id)?.installable, id).toBe(true);
  });

  it('has Chromium where the agent looks for it', () => {
    expect(args(final, 'RUN').join(' ')).toContain('chromium');
    expect(args(final, 'ENV').join(' ')).toContain('CHROMIUM_PATH=/usr/bin/chromium');
  });
});

describe('the uptime image', () => {
  const final = finalStage(read('Dockerfile.uptime'));

  it('runs the agent in uptime mode, without runtimes or a browser', () => {
    expect(args(final, 'ENV').join(' ')).toContain('AGENT_MODE=uptime');
    const runs = args(final, 'RUN').join(' ');
    expect(runs).not.toContain('chromium');
    expect(runs).not.toContain('runtimes install');
    expect(args(final, 'COPY').some((copy) => copy.includes('runtimes'))).toBe(false);
  });
});

describe('the dev image', () => {
  const instructions = read('Dockerfile.dev');

  it('is the full image plus the tools node-gyp needs, run as the same user', () => {
    expect(args(instructions, 'FROM')).toEqual(['${BASE}']);
    expect(argDefault(instructions, 'BASE')).toBe('outpost-agent');
    const runs = args(instructions, 'RUN').join(' ');
    for (const tool of ['python3', 'make', 'g++']) expect(runs, tool).toContain(tool);
    expect(args(instructions, 'USER').at(-1)).toBe('outpost');
  });
});

describe('the build context', () => {
  it('leaves local installs and builds out of it', () => {
    const ignored = readFileSync(resolve(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['node_modules', 'dist', '**/node_modules', '.git']) expect(ignored, entry).toContain(entry);
  });
});
