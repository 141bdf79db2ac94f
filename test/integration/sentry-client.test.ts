import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createSentryClient } from '../../src/agent/error-reporting/sentry-client.js';
import { startSentryReceiver } from '../support/sentry-receiver.js';

const cleanup: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe("the error reporter's Sentry client", () => {
  it('posts each event in an envelope with the headers it was given, and Node.js stack frames', async () => {
    const receiver = await startSentryReceiver();
    cleanup.push(() => receiver.close());
    const client = createSentryClient({ dsn: receiver.dsn, release: '9.9.9', headers: { authorization: 'Bearer k' }, beforeSend: (event) => event });
    client.captureException(new Error('first'));
    client.captureMessage('second');
    await client.close(5000);
    expect(receiver.envelopes.map((envelope) => envelope.headers.authorization)).toEqual(['Bearer k', 'Bearer k']);
    const [exception, message] = receiver.events();
    expect(exception.release).toBe('9.9.9');
    expect(exception.exception.values[0]).toMatchObject({ type: 'Error', value: 'first' });
    expect(exception.exception.values[0].stacktrace.frames.at(-1).filename).toContain('sentry-client.test.ts');
    expect(message).toMatchObject({ message: 'second', level: 'error' });
  });

  it('compresses a large envelope, which arrives whole', async () => {
    const receiver = await startSentryReceiver();
    cleanup.push(() => receiver.close());
    const client = createSentryClient({ dsn: receiver.dsn, release: '1', headers: {}, beforeSend: (event) => event });
    const long = 'x'.repeat(64 * 1024);
    client.captureMessage(long);
    await client.close(5000);
    expect(receiver.envelopes[0]?.headers['content-encoding']).toBe('gzip');
    expect(receiver.events()[0].message).toBe(long);
  });

  it('sends nothing more while the receiver says it is rate-limited (x-sentry-rate-limits)', async () => {
    let posts = 0;
    const server = createServer((request, response) => {
      posts += 1;
      request.resume();
      // Accepted, with every category limited for a minute: only the header says so.
      response.writeHead(200, { 'x-sentry-rate-limits': '60::organization' });
      response.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise((resolve) => server.close(resolve)));
    const client = createSentryClient({
      dsn: `http://k@127.0.0.1:${(server.address() as AddressInfo).port}/1`,
      release: '1',
      headers: {},
      beforeSend: (event) => event,
    });
    client.captureMessage('one');
    await expect.poll(() => posts).toBe(1);
    client.captureMessage('two');
    client.captureMessage('three');
    await client.close(2000);
    expect(posts).toBe(1);
  });

  it('goes nowhere when beforeSend drops the event', async () => {
    const receiver = await startSentryReceiver();
    cleanup.push(() => receiver.close());
    const client = createSentryClient({ dsn: receiver.dsn, release: '1', headers: {}, beforeSend: () => null });
    client.captureMessage('dropped');
    await client.close(2000);
    expect(receiver.envelopes).toEqual([]);
  });
});
