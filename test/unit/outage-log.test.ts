import { describe, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../../src/errors/index.js';
import { createOutageLog, describeError } from '../../src/outage-log.js';
import { captureLogger } from '../support/logs.js';

const parsed = (logs: string[]) => logs.map((line) => JSON.parse(line) as Record<string, any>);

describe('outage log', () => {
  it('logs the first failure of an outage, counts the rest, and sums them up once it is back', () => {
    const { logger, logs } = captureLogger('outage');
    let now = 1_000_000;
    const outage = createOutageLog({ logger, subject: 'the database', now: () => now });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

    expect(outage.recovered()).toBe(false);
    expect(outage.down).toBe(false);
    expect(outage.failed('scheduler tick', new DatabaseUnavailableError('The database is unreachable (ECONNREFUSED)', { cause: refused }))).toBe(true);
    now += 3000;
    expect(outage.failed('scheduler tick', refused)).toBe(false);
    expect(outage.failed('e-mail delivery round', refused)).toBe(false);
    expect(outage.down).toBe(true);
    expect(outage.current).toMatchObject({ since: 1_000_000, failures: 3, byWhat: { 'scheduler tick': 2, 'e-mail delivery round': 1 } });
    expect(logs).toHaveLength(1);
    now += 9400;
    expect(outage.recovered()).toBe(true);
    expect(outage.recovered()).toBe(false);

    const [down, back] = parsed(logs);
    expect(logs).toHaveLength(2);
    expect(down!.level).toBe(40);
    expect(down!.msg).toBe(
      'the database is unreachable: scheduler tick failed (DATABASE_UNAVAILABLE: The database is unreachable (ECONNREFUSED) ← connect ECONNREFUSED 127.0.0.1:5432); further failures are counted until it is back',
    );
    expect(down!.what).toBe('scheduler tick');
    expect(back!.level).toBe(30);
    expect(back!.msg).toBe('the database is reachable again after 12 s; 3 rounds failed');
    expect(back).toMatchObject({ downSeconds: 12, failures: 3, byWhat: { 'scheduler tick': 2, 'e-mail delivery round': 1 } });
    expect(outage.current).toBeUndefined();
  });

  it('starts a new story for the next outage, at the level asked for', () => {
    const { logger, logs } = captureLogger('outage');
    const outage = createOutageLog({ logger, subject: 'the service', level: 'error', now: () => 0 });
    outage.failed('claiming jobs', new Error('socket hang up'));
    outage.recovered();
    outage.failed('posting results', new Error('socket hang up'));
    const lines = parsed(logs);
    expect(lines.map((line) => line.msg)).toEqual([
      'the service is unreachable: claiming jobs failed (socket hang up); further failures are counted until it is back',
      'the service is reachable again after 0 s; 1 round failed',
      'the service is unreachable: posting results failed (socket hang up); further failures are counted until it is back',
    ]);
    expect(lines[0]!.level).toBe(50);
  });

  it('describes errors by code and message, causes included, without stacks', () => {
    expect(describeError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe('read ECONNRESET');
    expect(describeError(Object.assign(new Error('terminating connection'), { code: '57P01' }))).toBe('57P01: terminating connection');
    expect(describeError('plain')).toBe('plain');
    expect(describeError(undefined)).toBe('unknown error');
  });
});
