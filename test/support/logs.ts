import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/logging.js';

/** A stream a logger can write to, whose lines land in an array the test can read. */
export function lineCollector(): { destination: Writable; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { destination, lines };
}

/** A real pino logger whose lines land in an array the test can read. */
export function captureLogger(name: string): { logger: Logger; logs: string[] } {
  const { destination, lines } = lineCollector();
  return { logger: createLogger({ level: 'DEBUG', name, destination }), logs: lines };
}
