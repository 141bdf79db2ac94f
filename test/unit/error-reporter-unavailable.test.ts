import { describe, expect, it, vi } from 'vitest';
import { Secret } from '../../src/config/secret.js';

// A broken install (an SDK that will not load or set up) cannot be made for real in a test process.
vi.doMock('@sentry/core/server', async (importOriginal) => ({
  ...(await importOriginal<object>()),
  ServerRuntimeClient: class {
    constructor() {
      throw new Error('the SDK could not set up its transport');
    }
  },
}));

describe('error reporting without its SDK', () => {
  it('says once that reporting is off, and capturing goes on without throwing', async () => {
    const { createErrorReporter } = await import('../../src/agent/error-reporting/error-reporter.js');
    const unavailable: string[] = [];
    const reporter = createErrorReporter(
      { dsn: 'http://k@127.0.0.1:9/1', sendsKey: false },
      { apiKey: new Secret(`pl_${'x'.repeat(40)}`), secrets: [], onUnavailable: (reason) => unavailable.push(reason) },
    );
    reporter.capture('first');
    reporter.capture('second', new Error('boom'));
    await reporter.close(100);
    expect(unavailable).toHaveLength(1);
    expect(unavailable[0]).toBe('the SDK could not set up its transport');
  });
});
