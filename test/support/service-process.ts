/**
 * The service as operators run it: `node dist/cli.js service` in a process
 * of its own, its output kept line by line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { eachOutputLine } from './output-lines.js';

export interface ServiceProcess {
  readonly port: number;
  readonly url: string;
  readonly lines: string[];
  /** Resolves once /-/readiness answers 200; rejects when the process exits first or `ms` pass. */
  ready(ms: number): Promise<void>;
  /** SIGKILL: no shutdown at all, as when a machine or a container dies. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
  tail(count?: number): string;
}

export function startServiceProcess(options: { cli: string; port: number; env: Record<string, string> }): ServiceProcess {
  const child: ChildProcess = spawn(process.execPath, [options.cli, 'service'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(options.port), HOST: '127.0.0.1', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  eachOutputLine(child.stdout!, (line) => lines.push(line));
  eachOutputLine(child.stderr!, (line) => lines.push(line));
  let exited = child.exitCode !== null;
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exit.then(() => (exited = true));
  const url = `http://127.0.0.1:${options.port}`;
  const tail = (count = 40) => lines.slice(-count).join('\n');

  return {
    port: options.port,
    url,
    lines,
    tail,
    async ready(ms) {
      const deadline = Date.now() + ms;
      for (;;) {
        if (exited) throw new Error(`the service on port ${options.port} exited while starting; it said:\n${tail()}`);
        const status = await fetch(`${url}/-/readiness`).then(
          (response) => response.status,
          () => undefined,
        );
        if (status === 200) return;
        if (Date.now() > deadline) throw new Error(`the service on port ${options.port} was not ready within ${ms} ms; it said:\n${tail()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async kill() {
      if (!exited) child.kill('SIGKILL');
      await exit;
    },
    async stop(graceMs = 10_000) {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exit;
      clearTimeout(timer);
    },
  };
}
