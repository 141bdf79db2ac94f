import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/logging.js';

/** A real pino logger whose lines land in an array the test can read. */
export function captureLogger(name: string): { logger: Logger; logs: string[] } {
  const logs: string[] = [];
  const logger = createLogger({
    level: 'DEBUG',
    name,
    destination: new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs.push(chunk.toString());
        done();
      },
    }),
  });
  return { logger, logs };
}
