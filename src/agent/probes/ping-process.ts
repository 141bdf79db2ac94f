/**
 * Runs the ping binary as a child process: an argument array, never a shell,
 * so nothing in a check's settings can become a command. The child never
 * outlives the call: on abort it is killed, and the call returns only once
 * the child has exited and been reaped.
 */
import { spawn } from 'node:child_process';
import { IcmpNotPermittedError, PingUnavailableError } from '../../errors/index.js';

export interface PingRun {
  exitCode: number | null;
  /** Set when the child died of a signal. */
  exitSignal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** 50 pings print about 4 KiB; anything past this is not ping talking. */
const MAX_OUTPUT_BYTES = 256 * 1024;
/** How long a SIGKILLed child gets to be reaped before the call gives up waiting. */
const REAP_WAIT_MS = 2000;

export const NET_RAW_ADVICE =
  'The agent needs the NET_RAW capability to send ICMP: run its container with `docker run --cap-add=NET_RAW …`, ' +
  'or in Kubernetes add it under securityContext.capabilities.add: ["NET_RAW"].';

/**
 * Rejects with PingUnavailableError when the binary cannot be started,
 * IcmpNotPermittedError when the kernel refuses to run it for lack of
 * NET_RAW, and the signal's reason on abort.
 */
export function runPing(binary: string, args: readonly string[], signal: AbortSignal): Promise<PingRun> {
  return new Promise<PingRun>((resolve, reject) => {
    if (signal.aborted) {
      reject(toError(signal.reason));
      return;
    }
    const child = spawn(binary, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: false,
      // The parser reads English output with '.' decimals.
      env: { ...process.env, LC_ALL: 'C', LANG: 'C' },
    });
    const stdout = collect(child.stdout);
    const stderr = collect(child.stderr);
    let abortedWith: Error | null = null;
    let reapTimer: NodeJS.Timeout | undefined;

    const onAbort = (): void => {
      abortedWith = toError(signal.reason);
      child.kill('SIGKILL');
      // 'close' settles the call once the child is reaped; this only covers a child that will not die.
      reapTimer = setTimeout(() => settle(() => reject(abortedWith ?? new Error('ping was killed'))), REAP_WAIT_MS);
    };
    let settled = false;
    const settle = (action: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(reapTimer);
      signal.removeEventListener('abort', onAbort);
      action();
    };
    signal.addEventListener('abort', onAbort, { once: true });

    child.on('error', (error: NodeJS.ErrnoException) => {
      // Spawn failures only: a running child reports through its exit status.
      if (child.pid !== undefined) return;
      settle(() => reject(describeSpawnFailure(binary, error)));
    });
    child.once('close', (exitCode, exitSignal) => {
      settle(() => {
        if (abortedWith !== null) reject(abortedWith);
        else resolve({ exitCode, exitSignal, stdout: stdout(), stderr: stderr() });
      });
    });
  });
}

function collect(stream: NodeJS.ReadableStream): () => string {
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on('data', (chunk: Buffer) => {
    if (size >= MAX_OUTPUT_BYTES) return;
    chunks.push(chunk.subarray(0, MAX_OUTPUT_BYTES - size));
    size += chunk.length;
  });
  return () => Buffer.concat(chunks).toString('utf8');
}

function describeSpawnFailure(binary: string, error: NodeJS.ErrnoException): Error {
  const where = binary.includes('/') ? `at ${binary}` : `on the PATH (looked for "${binary}")`;
  switch (error.code) {
    case 'ENOENT':
      return new PingUnavailableError(
        `The ping command was not found ${where}. Install iputils-ping in the agent's image (Debian/Ubuntu: apt-get install iputils-ping).`,
        { cause: error },
      );
    case 'EPERM':
      // ping carries the file capability cap_net_raw; a container whose bounding set lacks NET_RAW may not exec it at all.
      return new IcmpNotPermittedError(`The system refused to run ping ${where} (EPERM). ${NET_RAW_ADVICE}`, {
        cause: error,
      });
    case 'EACCES':
      return new PingUnavailableError(
        `The ping command ${where} cannot be executed (EACCES: not executable by the agent's user). Reinstall iputils-ping.`,
        { cause: error },
      );
    default:
      return new PingUnavailableError(`The ping command ${where} could not be started: ${error.message}`, {
        cause: error,
      });
  }
}

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
