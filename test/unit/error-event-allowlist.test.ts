import { describe, expect, it } from 'vitest';
import type { ErrorEvent } from '@sentry/core';
import { allowlistEvent, maskAddresses } from '../../src/agent/error-reporting/event-allowlist.js';

const scrubSecrets = (text: string) => text.replaceAll('s3cr3t-value', '*****');

/** Everything an SDK, an integration or a careless caller could put on an event. */
const hostile: ErrorEvent = {
  type: undefined,
  event_id: 'f'.repeat(32),
  timestamp: 1_800_000_000,
  level: 'fatal',
  platform: 'javascript',
  release: 'someone-else',
  environment: 'customer-prod',
  server_name: 'db-host-17.corp.internal',
  message: 'fetch https://user:pw@api.corp.internal/v1?token=s3cr3t-value failed at 10.2.3.4:8443 and [fe80::1]:53',
  user: { id: 'u1', email: 'ops@customer.example' },
  request: { url: 'https://intranet/', headers: { Authorization: 'Bearer pl_x' }, data: '{"body":1}' },
  breadcrumbs: [{ message: 'GET https://intranet/secret' }],
  extra: { check: { script: 'await page.goto(...)' } },
  tags: { location: 'basement' },
  fingerprint: ['custom'],
  modules: { express: '4' },
  contexts: {
    app: { app_name: 'x' },
    culture: { timezone: 'Europe/Berlin' },
    os: { name: 'Linux', kernel_version: '6.1.0-customer' },
    device: { arch: 'x64', memory_size: 1 },
  },
  exception: {
    values: [
      {
        type: 'ConnectError',
        value: 'connect ECONNREFUSED 192.168.1.20:5432 (s3cr3t-value)',
        mechanism: { type: 'generic', handled: true, data: { url: 'https://intranet' } },
        stacktrace: {
          frames: [
            {
              filename: '/home/alice/checks/secret-project/run.js',
              abs_path: '/home/alice/checks/secret-project/run.js',
              function: 'run',
              lineno: 1,
              colno: 2,
              in_app: true,
              context_line: 'const password = "hunter2";',
              pre_context: ['// customer code'],
              vars: { password: 'hunter2' },
            },
            { filename: 'node:internal/process/task_queues', function: 'processTicksAndRejections', lineno: 95, colno: 5 },
          ],
        },
      },
    ],
  },
};

describe('the error event allowlist', () => {
  const allowed = allowlistEvent(hostile, { release: '1.2.3', scrubSecrets });

  it('keeps only the id, time, message, exception, version, platform and runtime', () => {
    expect(Object.keys(allowed).sort()).toEqual(['contexts', 'event_id', 'exception', 'level', 'message', 'platform', 'release', 'timestamp', 'type']);
    expect(allowed).toMatchObject({ event_id: 'f'.repeat(32), timestamp: 1_800_000_000, level: 'error', platform: 'node', release: '1.2.3' });
    expect(allowed.contexts).toEqual({
      os: { name: process.platform },
      device: { arch: process.arch },
      runtime: { name: 'node', version: process.version },
    });
  });

  it('masks URLs and addresses and scrubs secrets in the message and exception values', () => {
    expect(allowed.message).toBe('fetch <url> failed at <address> and <address>');
    expect(allowed.exception?.values?.[0]).toMatchObject({ type: 'ConnectError', value: 'connect ECONNREFUSED <address> (*****)' });
    expect(allowed.exception?.values?.[0]).not.toHaveProperty('mechanism');
  });

  it('keeps of each frame its file (by name alone outside the agent), function and position', () => {
    expect(allowed.exception?.values?.[0]?.stacktrace?.frames).toEqual([
      { filename: 'run.js', function: 'run', lineno: 1, colno: 2, in_app: true },
      { filename: 'node:internal/process/task_queues', function: 'processTicksAndRejections', lineno: 95, colno: 5 },
    ]);
  });

  it('leaves nothing of the dropped fields anywhere in the event', () => {
    const text = JSON.stringify(allowed);
    for (const leaked of ['hunter2', 'alice', 'customer', 'corp.internal', 'intranet', 'Berlin', 'basement', 'pl_x', 's3cr3t']) {
      expect(text).not.toContain(leaked);
    }
  });

  it('masks what an address can look like, and leaves versions and counts alone', () => {
    expect(maskAddresses('redis://10.0.0.1:6379/0 then ws://h/x')).toBe('<url> then <url>');
    expect(maskAddresses('node v20.20.2 ran 3 jobs in 1.5 s')).toBe('node v20.20.2 ran 3 jobs in 1.5 s');
  });
});
