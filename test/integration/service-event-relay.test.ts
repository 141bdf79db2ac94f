import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/service/db/database.js';
import { openPglite } from '../../src/service/db/pglite.js';
import { openPostgres } from '../../src/service/db/postgres.js';
import { relayEvents, type EventRelay } from '../../src/service/event-relay.js';
import { ServiceEvents } from '../../src/service/events.js';
import type { SessionRow } from '../../src/service/store/sessions.js';
import { eventually } from '../support/agent.js';
import { createTestDatabase } from '../support/databases.js';
import { captureLogger } from '../support/logs.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

interface Instance {
  events: ServiceEvents;
  relay: EventRelay;
  heard: { jobsQueued: string[]; sessionFinished: string[]; sessionCompleted: string[] };
}

async function instance(db: Database): Promise<Instance> {
  const events = new ServiceEvents();
  const heard: Instance['heard'] = { jobsQueued: [], sessionFinished: [], sessionCompleted: [] };
  events.on('jobsQueued', (id) => heard.jobsQueued.push(id));
  events.on('sessionFinished', (id) => heard.sessionFinished.push(id));
  events.on('sessionCompleted', (session) => heard.sessionCompleted.push(session.id));
  const relay = await relayEvents(db, events, captureLogger('relay').logger);
  cleanup.push(() => relay.close());
  return { events, relay, heard };
}

const session = (id: string) => ({ id }) as SessionRow;

async function postgresDatabase(): Promise<{ url: string; open: (url?: string) => Database }> {
  const database = await createTestDatabase('postgres');
  cleanup.push(() => database.drop());
  return {
    url: database.url!,
    open: (url = database.url!) => {
      const db = openPostgres(url, { connectTimeoutMs: 1000 });
      cleanup.push(() => db.close());
      return db;
    },
  };
}

describe('the event relay between service instances', () => {
  it('wakes the waiters of every other instance on PostgreSQL, and never echoes an instance its own news', async () => {
    const database = await postgresDatabase();
    const a = await instance(database.open());
    const b = await instance(database.open());
    const c = await instance(database.open());

    a.events.emit('jobsQueued', 'location-1');
    a.events.emit('jobsQueued', 'location-2');
    a.events.emit('sessionCompleted', session('session-1'));
    for (const other of [b, c]) {
      await eventually(() => (other.heard.jobsQueued.length === 2 && other.heard.sessionFinished.length === 1 ? true : undefined), 5000, 'the news');
      expect(other.heard.jobsQueued.sort()).toEqual(['location-1', 'location-2']);
      expect(other.heard.sessionFinished).toEqual(['session-1']);
      // Alerts and group runs follow a completion once, on the instance that made it.
      expect(other.heard.sessionCompleted).toEqual([]);
    }
    // What b heard from a is not sent on again: a round later, each heard each thing once.
    b.events.emit('jobsQueued', 'location-3');
    await eventually(() => (a.heard.jobsQueued.includes('location-3') && c.heard.jobsQueued.includes('location-3') ? true : undefined), 5000, 'b’s news');
    expect(a.heard).toEqual({ jobsQueued: ['location-1', 'location-2', 'location-3'], sessionFinished: ['session-1'], sessionCompleted: ['session-1'] });
    expect(c.heard.jobsQueued.sort()).toEqual(['location-1', 'location-2', 'location-3']);
    expect(b.heard.jobsQueued.sort()).toEqual(['location-1', 'location-2', 'location-3']);
  });

  it('splits more news than one NOTIFY holds over several', async () => {
    const database = await postgresDatabase();
    const a = await instance(database.open());
    const b = await instance(database.open());
    const ids = Array.from({ length: 1000 }, (_, index) => `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`);
    for (const id of ids) a.events.emit('jobsQueued', id);
    await eventually(() => (b.heard.jobsQueued.length === ids.length ? true : undefined), 5000, 'all 1000 ids');
    expect(new Set(b.heard.jobsQueued)).toEqual(new Set(ids));
  });

  it('hears again after its listening connection was cut', async () => {
    const database = await postgresDatabase();
    const address = new URL(database.url);
    const proxy = await startTcpProxy(Number(address.port || 5432), address.hostname);
    cleanup.push(() => proxy.close());
    const viaProxy = new URL(database.url);
    viaProxy.port = String(proxy.port);
    const a = await instance(database.open());
    const b = await instance(database.open(viaProxy.toString()));

    proxy.cutConnections();
    // Sent until one arrives: news sent while b was reconnecting is lost, by design.
    await eventually(
      async () => {
        a.events.emit('jobsQueued', 'after-the-cut');
        await new Promise((resolve) => setTimeout(resolve, 200));
        return b.heard.jobsQueued.includes('after-the-cut') ? true : undefined;
      },
      15_000,
      'b hearing again',
    );
    expect(proxy.accepted).toBeGreaterThan(1);
  });

  it('works in-process on PGlite', async () => {
    const db = await openPglite();
    cleanup.push(() => db.close());
    const a = await instance(db);
    const b = await instance(db);
    a.events.emit('jobsQueued', 'location-1');
    await eventually(() => (b.heard.jobsQueued.length > 0 ? true : undefined), 5000, 'the news');
    expect(b.heard.jobsQueued).toEqual(['location-1']);
    expect(a.heard.jobsQueued).toEqual(['location-1']);
  });
});
