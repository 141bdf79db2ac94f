import { createInterface } from 'node:readline';

/**
 * Calls `each` with every line a child process writes to `stream`, and with
 * its parsed JSON log entry when the line is one (pino writes one per line).
 */
export function eachOutputLine(
  stream: NodeJS.ReadableStream,
  each: (line: string, entry: Record<string, unknown> | undefined) => void,
): void {
  createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => each(line, logEntry(line)));
}

function logEntry(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
