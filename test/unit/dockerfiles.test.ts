import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRLIMIT, SETPRIV } from '../../src/agent/isolation/isolation.js';
import { BWRAP } from '../../src/agent/isolation/namespaces.js';
import { findRuntime } from '../../src/runtimes/catalog.js';
import { AGENT_V8_FLAGS } from '../../src/agent/v8-tuning.js';
import { copyOf, entryCommand, finalStage, parseDockerfile, type Instruction } from '../support/dockerfile.js';
import { agentImportGraph, importGraph } from '../support/import-graph.js';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (name: string) => parseDockerfile(readFileSync(resolve(ROOT, name), 'utf8'));
const args = (instructions: Instruction[], keyword: string) =>
  instructions.filter((instruction) => instruction.keyword === keyword).map((instruction) => instruction.args);
const argDefault = (instructions: Instruction[], name: string) =>
  /^\S+="?([^"]*)"?$/.exec(args(instructions, 'ARG').find((arg) => arg.startsWith(`${name}=`)) ?? '')?.[1];
const text = (name: string) => readFileSync(resolve(ROOT, name), 'utf8');
/** Instructions that write into the image; after the last USER they would write as that user. */
const WRITES = ['RUN', 'COPY', 'ADD', 'WORKDIR'];
const tsconfigOutDir = () => (JSON.parse(readFileSync(resolve(ROOT, 'tsconfig.build.json'), 'utf8')) as { compilerOptions: { outDir: string } }).compilerOptions.outDir;

describe.each(['Dockerfile', 'Dockerfile.uptime', 'Dockerfile.service'])('%s', (name) => {
  const instructions = read(name);

  it('copies into its build stage every file `npm run build` names', () => {
    const copied = instructions
      .filter((instruction) => instruction.stageName === 'build' && instruction.keyword === 'COPY')
      .flatMap((instruction) => copyOf(instruction).sources);
    const scripts = (JSON.parse(text('package.json')) as { scripts: Record<string, string> }).scripts;
    const commands = Object.entries(scripts)
      .filter(([script]) => script === 'build' || script.startsWith('build:'))
      .map(([, command]) => command)
      .join(' ');
    const named = [...commands.matchAll(/(?:^|\s)([\w.-]+(?:\/[\w.-]+)*\.(?:ts|json))(?=\s|$)/g)].map((match) => match[1]!.split('/')[0]!);
    expect(named).toEqual(expect.arrayContaining(['tsconfig.build.json', 'web', 'tools']));
    for (const top of new Set(named)) expect(copied, `${name}: npm run build reads ${top}`).toContain(top);
  });

  it('copies only what the repository has, or what its build stages make', () => {
    for (const instruction of instructions.filter((candidate) => candidate.keyword === 'COPY')) {
      const { from, sources } = copyOf(instruction);
      if (from === undefined) {
        for (const source of sources) expect(existsSync(resolve(ROOT, source)), `${name}: COPY ${source}`).toBe(true);
        continue;
      }
      const stage = instructions.filter((candidate) => candidate.stageName === from);
      const workdir = args(stage, 'WORKDIR').at(-1);
      if (from === 'build') {
        // `npm run build` writes tsconfig.build.json's outDir under the stage's WORKDIR: that, or a directory of it.
        expect(args(stage, 'RUN')).toContain('npm run build');
        for (const source of sources) expect(`${source}/`, `${name}: COPY --from=${from} ${source}`).toMatch(new RegExp(`^${workdir}/${tsconfigOutDir()}/`));
        continue;
      }
      // Another stage: what it copied in (and built there) under its WORKDIR.
      expect(stage.length, `${name}: stage ${from}`).toBeGreaterThan(0);
      const made = stage.filter((candidate) => candidate.keyword === 'COPY').map((copy) => copyOf(copy).destination.replace(/^\.\//, `${workdir}/`));
      for (const source of sources) expect(made, `${name}: COPY --from=${from} ${source}`).toContain(source);
    }
  });

  it('runs on Node.js 24', () => {
    expect(argDefault(instructions, 'NODE_IMAGE')).toMatch(/^node:24-/);
  });
});

describe.each(['Dockerfile', 'Dockerfile.uptime'])('%s', (name) => {
  const instructions = read(name);
  const final = finalStage(instructions);

  it('starts the built CLI under an init process, as a user of its own, and checks its liveness', () => {
    const entrypoint = JSON.parse(args(final, 'ENTRYPOINT')[0]!) as string[];
    expect(entrypoint.slice(0, 3)).toEqual(['tini', '--', 'node']);
    const { nodeArgs, script } = entryCommand(instructions);
    // Node.js 24 applies them only from its command line: the agent's own V8 settings, all of them.
    expect(nodeArgs).toEqual([...AGENT_V8_FLAGS]);
    expect(existsSync(resolve(ROOT, 'src/cli.ts'))).toBe(true);
    if (name === 'Dockerfile') {
      expect(script).toBe(`/app/${tsconfigOutDir()}/cli.js`);
    } else {
      // The uptime image starts the agent bundle, which `npm run build` writes beside dist/'s modules.
      expect(script).toBe(`/app/${tsconfigOutDir()}/agent-bundle/cli.js`);
      const bundler = text('tools/bundle-agent.ts');
      expect(bundler).toContain(`resolve(ROOT, '${tsconfigOutDir()}/agent-bundle')`);
      expect(bundler).toContain("cli: 'src/cli.ts'");
      expect((JSON.parse(text('package.json')) as { scripts: Record<string, string> }).scripts.build).toContain('npm run build:agent');
    }
    expect(JSON.parse(args(final, 'CMD')[0]!)).toEqual(['agent']);
    expect(args(final, 'USER').at(-1)).toBe('outpost');
    expect(args(final, 'HEALTHCHECK')[0]).toContain('/-/liveness');
    expect(args(final, 'LABEL').join(' ')).toContain('org.opencontainers.image.version="${VERSION}"');
    const installs = args(final, 'RUN').join(' ');
    for (const tool of ['tini', 'iputils-ping']) expect(installs, tool).toContain(tool);
    // The embedded queue of the script lane; the uptime image's jobs wait in memory.
    if (name === 'Dockerfile') expect(installs).toContain('redis-server');
    // Production dependencies only, from the lockfile.
    expect(installs).toContain('npm ci --omit=dev');
  });

  it('leaves the service\'s dependencies out, by the one list of them', () => {
    const install = args(final, 'RUN').find((run) => run.includes('npm ci')) ?? '';
    expect(install).toContain(`npm uninstall --no-save --omit=dev --no-audit --no-fund $(cat ${SERVICE_ONLY_FILE.split('/').at(-1)})`);
    expect(args(final, 'COPY')).toContain(`package.json package-lock.json ${SERVICE_ONLY_FILE} ./`);
  });
});

/** The service's packages the agent images remove after `npm ci`, one a line. */
const SERVICE_ONLY_FILE = 'deploy/service-only-packages.txt';
/** Loaded by name rather than imported: pino's pretty printer, when the agent's output is a terminal. */
const LOADED_BY_NAME = ['pino-pretty'];

describe('the agent images without the service\'s dependencies', () => {
  const agent = agentImportGraph(ROOT);
  const dependencies = Object.keys((JSON.parse(text('package.json')) as { dependencies: Record<string, string> }).dependencies);
  const listed = text(SERVICE_ONLY_FILE).trim().split('\n');

  it('lists exactly the dependencies the agent never loads', () => {
    for (const name of listed) expect(dependencies, name).toContain(name);
    for (const name of LOADED_BY_NAME) expect(dependencies, name).toContain(name);
    expect(text('src/logging.ts')).toContain("target: 'pino-pretty'");
    const unused = dependencies.filter((name) => !agent.packages.has(name) && !LOADED_BY_NAME.includes(name));
    expect([...listed].sort()).toEqual(unused.sort());
    // The service's heavy parts are among them.
    expect(listed).toEqual(expect.arrayContaining(['@electric-sql/pglite', 'fastify', 'nodemailer', 'aedes', 'pg', '@fastify/swagger']));
  });

  it('finds what the agent loads, so an import of a listed package would show', () => {
    expect([...agent.packages].filter((name) => listed.includes(name))).toEqual([]);
    for (const name of ['bullmq', 'ioredis', 'undici', 'tar', '@sentry/core']) expect(agent.packages.has(name), name).toBe(true);
    expect([...agent.files].some((file) => file.endsWith('src/agent/probe-threads/probe-worker.ts')), 'the probe threads\' worker file').toBe(true);
    const service = importGraph([resolve(ROOT, 'src/service/service.ts')]);
    for (const name of ['fastify', '@electric-sql/pglite', 'nodemailer']) expect(service.packages.has(name), name).toBe(true);
  });

  it('nor the error-reporting SDK\'s Node.js entry point, with its OpenTelemetry and build tooling', () => {
    const manifest = JSON.parse(text('package.json')) as { dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies).filter((name) => name.startsWith('@sentry/'))).toEqual(['@sentry/core']);
    const lock = JSON.parse(text('package-lock.json')) as { packages: Record<string, unknown> };
    for (const name of ['@sentry/node', '@sentry/bundler-plugins', 'sentry', 'oxc-parser']) {
      expect(Object.keys(lock.packages).some((path) => path.endsWith(`node_modules/${name}`)), name).toBe(false);
    }
    expect([...agent.packages].filter((name) => name.startsWith('@sentry/'))).toEqual(['@sentry/core']);
  });
});

describe('the full image', () => {
  const final = finalStage(read('Dockerfile'));
  const runtimesStage = read('Dockerfile').filter((instruction) => instruction.stageName === 'runtimes');
  const installs = () => args(final, 'RUN').find((run) => run.includes('apt-get install')) ?? '';

  it('bundles runtime 2026.04 by default, and the migration image\'s runtimes are installable', () => {
    const runtimes = argDefault(read('Dockerfile'), 'RUNTIMES');
    expect(runtimes).toBe('2026.04');
    expect(args(runtimesStage, 'RUN')).toEqual(['node dist/runtimes/install-command.js ${RUNTIMES}']);
    expect(args(runtimesStage, 'ARG')).toEqual(['RUNTIMES']);
    expect(args(final, 'ARG')).toContain('RUNTIMES');
    const migration = /RUNTIMES="([^"]+)"/.exec(readFileSync(resolve(ROOT, 'Dockerfile'), 'utf8'))![1]!.split(' ');
    expect(migration).toEqual(['2024.09', '2025.04', '2026.04']);
    for (const id of migration) expect(findRuntime(id)?.installable, id).toBe(true);
  });

  it('has Chromium where the agent looks for it', () => {
    expect(args(final, 'RUN').join(' ')).toContain('chromium');
    expect(args(final, 'ENV').join(' ')).toContain('CHROMIUM_PATH=/usr/bin/chromium');
  });

  it('installs what the isolation backends run, from the Debian packages that put them where the agent looks', () => {
    // bubblewrap installs /usr/bin/bwrap; util-linux /usr/bin/prlimit and /usr/bin/setpriv.
    const packages = { [BWRAP]: 'bubblewrap', [PRLIMIT]: 'util-linux', [SETPRIV]: 'util-linux' };
    expect(Object.keys(packages)).toEqual(['/usr/bin/bwrap', '/usr/bin/prlimit', '/usr/bin/setpriv']);
    for (const [path, name] of Object.entries(packages)) expect(installs().split(/\s+/), `${path}: ${name}`).toContain(name);
  });

  it('keeps /app root\'s: built and the runtimes installed as root, nothing handed to the agent\'s user', () => {
    const firstUser = final.findIndex((instruction) => instruction.keyword === 'USER');
    // No USER before the build steps: every file of /app, the runtimes' included, is made by root.
    expect(final.slice(firstUser).filter((instruction) => WRITES.includes(instruction.keyword))).toEqual([]);
    expect(args(final, 'USER')).toEqual(['outpost']);
    const runtimesCopy = final.findIndex((instruction) => instruction.keyword === 'COPY' && copyOf(instruction).from === 'runtimes');
    expect(runtimesCopy).toBeGreaterThan(-1);
    expect(runtimesCopy).toBeLessThan(firstUser);
    // Installed by root in their stage (no USER there); COPY --from makes them root's in the image.
    expect(args(runtimesStage, 'USER')).toEqual([]);
    // Nothing chowned to anyone (a runtime the agent's user could write, a script could poison), no COPY --chown.
    for (const instruction of read('Dockerfile')) {
      expect(instruction.args, `${instruction.keyword} ${instruction.args}`).not.toMatch(/\bchown\b|--chown|--chmod/);
    }
    // And nothing left writable by group or others, whatever the build context's modes.
    expect(args(final, 'RUN')).toContain('find /app -perm /022 -exec chmod go-w {} +');
  });

  it('installs the runtimes in a layer that a change of the source elsewhere does not rebuild', () => {
    // The runtimes stage takes from the build stage only the installer's compiled modules...
    const fromBuild = runtimesStage.filter((instruction) => instruction.keyword === 'COPY' && copyOf(instruction).from === 'build').flatMap((copy) => copyOf(copy).sources);
    expect(fromBuild.sort()).toEqual(['/src/dist/errors', '/src/dist/runtimes']);
    // ...which are all the installer loads: its own and the error classes, no npm package.
    const installer = importGraph([resolve(ROOT, 'src/runtimes/install-command.ts')]);
    expect(installer.packages.size).toBe(0);
    const directories = new Set([...installer.files].map((file) => file.slice(resolve(ROOT, 'src').length + 1).split('/')[0]));
    expect([...directories].sort()).toEqual(['errors', 'runtimes']);
    const local = runtimesStage.filter((instruction) => instruction.keyword === 'COPY' && !copyOf(instruction).from).flatMap((copy) => copyOf(copy).sources);
    expect(local.sort()).toEqual(['package.json', 'runtimes']);
    // In the image, the installed runtimes come before the compiled source, so the source's layer is the later one.
    const runtimesCopy = final.findIndex((instruction) => instruction.keyword === 'COPY' && copyOf(instruction).from === 'runtimes');
    const distCopy = final.findIndex((instruction) => instruction.keyword === 'COPY' && copyOf(instruction).from === 'build');
    expect(runtimesCopy).toBeGreaterThan(-1);
    expect(runtimesCopy).toBeLessThan(distCopy);
    expect(args(final, 'COPY').some((copy) => /^runtimes\b/.test(copy))).toBe(false);
  });

  it('says with which docker run flags script isolation works, naming a profile the repository has', () => {
    const dockerfile = text('Dockerfile');
    for (const flag of ['--security-opt apparmor=unconfined', '--security-opt systempaths=unconfined', '--cap-add NET_RAW']) expect(dockerfile, flag).toContain(flag);
    const profile = /--security-opt seccomp=(\S+)/.exec(dockerfile)?.[1];
    expect(profile).toBe('deploy/seccomp/outpost-agent.json');
    expect(existsSync(resolve(ROOT, profile!))).toBe(true);
  });
});

describe('the seccomp profile for namespaces (deploy/seccomp/outpost-agent.json)', () => {
  interface Rule {
    names: string[];
    action: string;
    args?: { index: number; value: number; op: string }[];
    comment?: string;
  }
  const profile = JSON.parse(text('deploy/seccomp/outpost-agent.json')) as {
    defaultAction: string;
    defaultErrnoRet: number;
    architectures: string[];
    syscalls: Rule[];
  };
  const unconditional = new Set(profile.syscalls.filter((rule) => !rule.args).flatMap((rule) => rule.names));
  const named = new Set(profile.syscalls.flatMap((rule) => rule.names));

  it('refuses whatever it does not name, and only allows', () => {
    expect(profile.defaultAction).toBe('SCMP_ACT_ERRNO');
    expect(profile.defaultErrnoRet).toBe(1);
    for (const rule of profile.syscalls) expect(rule.action, rule.names.join(' ')).toBe('SCMP_ACT_ALLOW');
  });

  it('is flat, so Docker, containerd and CRI-O read it alike', () => {
    // containerd reads a Localhost profile as the OCI spec's seccomp object: it would drop Docker's
    // conditional fields (includes, excludes, archMap) and so allow what they were meant to restrict.
    expect(Object.keys(profile).sort()).toEqual(['architectures', 'defaultAction', 'defaultErrnoRet', 'syscalls']);
    for (const rule of profile.syscalls) {
      expect(Object.keys(rule).filter((key) => !['names', 'action', 'args', 'comment'].includes(key)), rule.names.join(' ')).toEqual([]);
    }
    // The images are x86-64 only.
    expect(profile.architectures).toEqual(['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_X32']);
  });

  it('allows what bubblewrap does to make a job\'s namespaces, whatever the flags', () => {
    for (const call of ['clone', 'clone3', 'unshare', 'mount', 'umount2', 'pivot_root', 'setns', 'sethostname']) expect(unconditional.has(call), call).toBe(true);
  });

  it('still refuses what Docker\'s default refuses a container without extra capabilities', () => {
    for (const call of [
      'bpf', 'keyctl', 'add_key', 'request_key', 'kexec_load', 'kexec_file_load', 'init_module', 'finit_module', 'delete_module',
      'reboot', 'swapon', 'swapoff', 'acct', 'perf_event_open', 'open_by_handle_at', 'userfaultfd', 'io_uring_setup', 'settimeofday',
      'clock_settime', 'syslog', 'lookup_dcookie', 'quotactl', 'fsopen', 'fsmount', 'move_mount', 'open_tree', 'iopl', 'ioperm', 'vhangup',
      'kcmp', 'pidfd_getfd', 'setdomainname', 'nfsservctl', 'uselib', 'ustat', 'sysfs', '_sysctl', 'create_module', 'get_kernel_syms',
    ]) {
      expect(named.has(call), call).toBe(false);
    }
    // Sockets of every family but AF_ALG (38) and AF_VSOCK (40).
    const sockets = profile.syscalls.filter((rule) => rule.names.includes('socket'));
    expect(sockets.every((rule) => rule.args?.length === 1)).toBe(true);
    const allowsFamily = (family: number) =>
      sockets.some(({ args: [arg] = [] }) => (arg!.op === 'SCMP_CMP_LT' ? family < arg!.value : arg!.op === 'SCMP_CMP_GT' ? family > arg!.value : family === arg!.value));
    expect([1, 2, 10, 16, 17, 39, 41].every(allowsFamily)).toBe(true);
    expect(allowsFamily(38) || allowsFamily(40)).toBe(false);
  });

  it('is the one the docs name', () => {
    for (const doc of ['docs/security.md', 'docs/kubernetes.md']) expect(text(doc), doc).toContain('deploy/seccomp/outpost-agent.json');
  });
});

describe('the uptime image', () => {
  const final = finalStage(read('Dockerfile.uptime'));

  it('runs the agent in uptime mode, without runtimes, a browser or a sandbox', () => {
    expect(args(final, 'ENV').join(' ')).toContain('AGENT_MODE=uptime');
    const runs = args(final, 'RUN').join(' ');
    expect(runs).not.toContain('chromium');
    expect(runs).not.toContain('runtimes install');
    // It runs no scripts, so it has nothing to isolate, and its jobs wait in memory (UPTIME_QUEUE), not in Redis.
    expect(runs).not.toContain('bubblewrap');
    expect(runs).not.toContain('redis-server');
    expect(args(final, 'COPY').some((copy) => copy.includes('runtimes'))).toBe(false);
    for (const instruction of final) expect(instruction.args).not.toMatch(/\bchown\b|--chown/);
  });
});

describe('the dev image', () => {
  const instructions = read('Dockerfile.dev');

  it('is the full image plus the tools node-gyp needs, run as the same user', () => {
    expect(args(instructions, 'FROM')).toEqual(['${BASE}']);
    expect(argDefault(instructions, 'BASE')).toBe('outpost-agent');
    const runs = args(instructions, 'RUN').join(' ');
    for (const tool of ['python3', 'make', 'g++', 'bubblewrap']) expect(runs, tool).toContain(tool);
    expect(args(instructions, 'USER').at(-1)).toBe('outpost');
  });

  it('hands nothing of the base\'s /app to the agent\'s user', () => {
    const lastUser = instructions.findLastIndex((instruction) => instruction.keyword === 'USER');
    expect(instructions.slice(lastUser).filter((instruction) => WRITES.includes(instruction.keyword))).toEqual([]);
    for (const instruction of instructions) expect(instruction.args).not.toMatch(/\bchown\b|--chown|\/app/);
  });
});

describe('the service image', () => {
  const instructions = read('Dockerfile.service');
  const final = finalStage(instructions);

  it('starts the built CLI\'s service under an init process, as a user of its own, and checks its readiness', () => {
    const entrypoint = JSON.parse(args(final, 'ENTRYPOINT')[0]!) as string[];
    expect(entrypoint).toEqual(['tini', '--', 'node', `/app/${tsconfigOutDir()}/cli.js`]);
    expect(JSON.parse(args(final, 'CMD')[0]!)).toEqual(['service']);
    expect(args(final, 'USER')).toEqual(['outpost']);
    expect(args(final, 'HEALTHCHECK')[0]).toContain('/-/readiness');
    expect(text('src/service/server.ts')).toContain("app.get('/-/readiness'");
    expect(args(final, 'LABEL').join(' ')).toContain('org.opencontainers.image.title="outpost-service"');
    expect(args(final, 'RUN').join(' ')).toContain('npm ci --omit=dev');
  });

  it('listens where it says, keeps artifacts in a volume its user owns, and /app root\'s', () => {
    const env = args(final, 'ENV').join(' ');
    const port = /\bPORT=(\d+)/.exec(env)![1];
    expect(args(final, 'EXPOSE')).toEqual([port]);
    expect(args(final, 'HEALTHCHECK')[0]).toContain('process.env.PORT');
    const artifacts = /ARTIFACTS_DIR=(\S+)/.exec(env)![1]!;
    expect(args(final, 'VOLUME')).toEqual([JSON.stringify([artifacts])]);
    expect(args(final, 'RUN').join(' ')).toContain(`install -d -o outpost -g outpost -m 0750 ${artifacts}`);
    const firstUser = final.findIndex((instruction) => instruction.keyword === 'USER');
    expect(final.slice(firstUser).filter((instruction) => WRITES.includes(instruction.keyword))).toEqual([]);
    for (const instruction of final) expect(instruction.args).not.toMatch(/\bchown\b|--chown/);
    expect(args(final, 'RUN')).toContain('find /app -perm /022 -exec chmod go-w {} +');
  });

  it('has the runtime catalog checks name, and no agent tooling', () => {
    expect(args(final, 'COPY')).toContain('runtimes ./runtimes');
    const runs = args(final, 'RUN').join(' ');
    for (const tool of ['chromium', 'redis-server', 'bubblewrap', 'runtimes install', 'uninstall']) expect(runs, tool).not.toContain(tool);
  });
});

describe('the build context', () => {
  it('leaves local installs and builds out of it', () => {
    const ignored = readFileSync(resolve(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['node_modules', 'dist', '**/node_modules', '.git']) expect(ignored, entry).toContain(entry);
  });
});
