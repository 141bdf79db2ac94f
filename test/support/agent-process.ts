/**
 * The agent as operators run it: `node dist/cli.js agent` in a process of its
 * own (as another user, when the test runs as root and asks), its output
 * collected line by line and its JSON log lines parsed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { eachOutputLine } from './output-lines.js';

export interface AgentUser {
  uid: number;
  gid: number;
}

export interface AgentProcessOptions {
  /** dist/cli.js of the tree to run. */
  cli: string;
  cwd: string;
  /** The agent's whole environment. */
  env: Record<string, string>;
  /** Start it as this user (setpriv; the test must be root); the test's own user when left out. */
  user?: AgentUser;
}

export interface AgentProcess {
  readonly pid: number;
  /** Everything it wrote, stdout and stderr, line by line. */
  readonly lines: string[];
  /** Its log lines that are JSON, parsed. */
  entries(): Record<string, unknown>[];
  /** The first log entry `matches`, waited for up to `ms`. */
  waitForEntry(matches: (entry: Record<string, unknown>) => boolean, ms: number, what: string): Promise<Record<string, unknown>>;
  /** The port of its health server, once it said. */
  healthPort(): number | undefined;
  /** The HTTP status of a health route; undefined when it does not answer. */
  health(path: string): Promise<number | undefined>;
  /** The last `count` lines, for a failure message. */
  tail(count?: number): string;
  hasExited(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

export const SETPRIV_PATH = '/usr/bin/setpriv';

export function startAgentProcess(options: AgentProcessOptions): AgentProcess {
  const [command, args] = options.user
    ? [SETPRIV_PATH, [`--reuid=${options.user.uid}`, `--regid=${options.user.gid}`, '--clear-groups', '--', process.execPath, options.cli, 'agent']]
    : [process.execPath, [options.cli, 'agent']];
  const child: ChildProcess = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`the agent did not start (${command})`);
  const lines: string[] = [];
  const parsed: Record<string, unknown>[] = [];
  const collect = (stream: NodeJS.ReadableStream) =>
    eachOutputLine(stream, (line, entry) => {
      lines.push(line);
      if (entry) parsed.push(entry);
    });
  collect(child.stdout!);
  collect(child.stderr!);
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exit.then(() => (exited = true));

  const healthPort = () => {
    const entry = parsed.find((line) => typeof line.healthPort === 'number');
    return entry?.healthPort as number | undefined;
  };
  return {
    pid: child.pid,
    lines,
    entries: () => parsed,
    async waitForEntry(matches, ms, what) {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = parsed.find(matches);
        if (found) return found;
        if (exited) throw new Error(`the agent exited before ${what}; it said:\n${lines.slice(-40).join('\n')}`);
        if (Date.now() > deadline) throw new Error(`the agent did not log ${what} within ${ms} ms; it said:\n${lines.slice(-40).join('\n')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    healthPort,
    async health(path) {
      const port = healthPort();
      if (port === undefined) return undefined;
      const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
      await response?.arrayBuffer().catch(() => undefined);
      return response?.status;
    },
    tail: (count = 40) => lines.slice(-count).join('\n'),
    hasExited: () => exited,
    async stop(graceMs = 15_000) {
      if (exited) return;
      child.kill('SIGTERM');
      const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exit;
      clearTimeout(force);
    },
  };
}
