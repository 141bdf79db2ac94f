import { createServer } from 'node:net';

/** `preferred` when it can be bound on `host`, otherwise 0 (any free port). */
export function portOrAny(preferred: number, host: string): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(0));
    probe.listen(preferred, host, () => probe.close(() => resolve(preferred)));
  });
}
