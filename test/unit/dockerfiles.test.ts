import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRLIMIT, SETPRIV } from '../../src/agent/isolation/isolation.js';
import { BWRAP } from '../../src/agent/isolation/namespaces.js';
import { findRuntime } from '../../src/runtimes/catalog.js';
import { copyOf, finalStage, parseDockerfile, type Instruction } from '../support/dockerfile.js';

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
  const installs = () => args(final, 'RUN').find((run) => run.includes('apt-get install')) ?? '';

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
    const runtimesInstall = final.findIndex((instruction) => instruction.args.includes('runtimes install'));
    expect(runtimesInstall).toBeGreaterThan(-1);
    expect(runtimesInstall).toBeLessThan(firstUser);
    // Nothing chowned to anyone (a runtime the agent's user could write, a script could poison), no COPY --chown.
    for (const instruction of final) {
      expect(instruction.args, `${instruction.keyword} ${instruction.args}`).not.toMatch(/\bchown\b|--chown|--chmod/);
    }
    // And nothing left writable by group or others, whatever the build context's modes.
    expect(args(final, 'RUN')).toContain('find /app -perm /022 -exec chmod go-w {} +');
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
    // It runs no scripts, so it has nothing to isolate.
    expect(runs).not.toContain('bubblewrap');
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

describe('the build context', () => {
  it('leaves local installs and builds out of it', () => {
    const ignored = readFileSync(resolve(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['node_modules', 'dist', '**/node_modules', '.git']) expect(ignored, entry).toContain(entry);
  });
});
