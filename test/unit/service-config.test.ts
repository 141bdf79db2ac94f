import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors/index.js';
import { loadServiceConfig, serviceEnvHelp, serviceEnvSpecs } from '../../src/service/config.js';

describe('service configuration', () => {
  it('defaults to port 3000, embedded PGlite in memory and no bootstrap account', () => {
    const config = loadServiceConfig({});
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      databaseUrl: undefined,
      pgliteDir: undefined,
      bootstrap: undefined,
      logLevel: 'INFO',
      rateLimit: { max: 600, windowSeconds: 60 },
    });
  });

  it('takes a rate limit, and 0 switches it off', () => {
    expect(loadServiceConfig({ RATE_LIMIT_MAX: '30', RATE_LIMIT_WINDOW_SECONDS: '10' }).rateLimit).toEqual({
      max: 30,
      windowSeconds: 10,
    });
    expect(loadServiceConfig({ RATE_LIMIT_MAX: '0' }).rateLimit).toBeUndefined();
  });

  it('takes a bootstrap account and key together, and hides the key', () => {
    const config = loadServiceConfig({
      BOOTSTRAP_ACCOUNT_ID: 'A1B2C3D4-0000-4000-8000-000000000001',
      BOOTSTRAP_API_KEY: 'a-long-enough-api-key',
    });
    expect(config.bootstrap?.accountId).toBe('a1b2c3d4-0000-4000-8000-000000000001');
    expect(config.bootstrap?.apiKey.reveal()).toBe('a-long-enough-api-key');
    expect(JSON.stringify(config)).not.toContain('a-long-enough-api-key');
  });

  it('refuses a bootstrap account without its key', () => {
    expect(() => loadServiceConfig({ BOOTSTRAP_ACCOUNT_ID: 'a1b2c3d4-0000-4000-8000-000000000001' })).toThrow(
      /BOOTSTRAP_ACCOUNT_ID and BOOTSTRAP_API_KEY must be set together/,
    );
  });

  it('takes a bootstrap private location and its key with the bootstrap account only, and hides the key', () => {
    const account = { BOOTSTRAP_ACCOUNT_ID: 'a1b2c3d4-0000-4000-8000-000000000001', BOOTSTRAP_API_KEY: 'a-long-enough-api-key' };
    const key = `pl_${'x'.repeat(40)}`;
    const config = loadServiceConfig({ ...account, BOOTSTRAP_PRIVATE_LOCATION: 'compose', BOOTSTRAP_PRIVATE_LOCATION_KEY: key });
    expect(config.bootstrapLocation?.slugName).toBe('compose');
    expect(config.bootstrapLocation?.key.reveal()).toBe(key);
    expect(JSON.stringify(config)).not.toContain(key);
    expect(loadServiceConfig(account).bootstrapLocation).toBeUndefined();
    expect(() => loadServiceConfig({ ...account, BOOTSTRAP_PRIVATE_LOCATION: 'compose' })).toThrow(/must be set together/);
    expect(() => loadServiceConfig({ BOOTSTRAP_PRIVATE_LOCATION: 'compose', BOOTSTRAP_PRIVATE_LOCATION_KEY: key })).toThrow(/needs BOOTSTRAP_ACCOUNT_ID/);
    expect(() => loadServiceConfig({ ...account, BOOTSTRAP_PRIVATE_LOCATION: 'Compose', BOOTSTRAP_PRIVATE_LOCATION_KEY: key })).toThrow(/BOOTSTRAP_PRIVATE_LOCATION/);
    expect(() => loadServiceConfig({ ...account, BOOTSTRAP_PRIVATE_LOCATION: 'compose', BOOTSTRAP_PRIVATE_LOCATION_KEY: 'ok_short' })).toThrow(/BOOTSTRAP_PRIVATE_LOCATION_KEY/);
  });

  it('names every bad variable at once', () => {
    let caught: unknown;
    try {
      loadServiceConfig({
        PORT: '70000',
        DATABASE_URL: 'mysql://x',
        BOOTSTRAP_ACCOUNT_ID: 'nope',
        LOG_LEVEL: 'x',
        RATE_LIMIT_MAX: '-1',
        RATE_LIMIT_WINDOW_SECONDS: '0',
        METRICS_TOKEN: 'short',
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const message = (caught as ConfigError).message;
    for (const name of ['PORT', 'DATABASE_URL', 'BOOTSTRAP_ACCOUNT_ID', 'LOG_LEVEL', 'RATE_LIMIT_MAX', 'RATE_LIMIT_WINDOW_SECONDS', 'METRICS_TOKEN']) {
      expect(message).toContain(`  ${name} `);
    }
    expect(message).not.toContain('short');
  });

  it('keeps the metrics token behind a Secret, and leaves /metrics open without one', () => {
    const config = loadServiceConfig({ METRICS_TOKEN: 'scrape-token-0123456789' });
    expect(config.metricsToken?.reveal()).toBe('scrape-token-0123456789');
    expect(JSON.stringify(config)).not.toContain('scrape-token');
    expect(loadServiceConfig({}).metricsToken).toBeUndefined();
  });

  it('lists every variable in --help', () => {
    const help = serviceEnvHelp();
    for (const name of Object.keys(serviceEnvSpecs)) expect(help).toContain(name);
  });
});
