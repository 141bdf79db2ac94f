import { describe, expect, it } from 'vitest';
import { DatabaseConnectionLostError, DatabaseUnavailableError } from '../../src/errors/index.js';
import {
  classifyConnectionFailure,
  connectionErrorCode,
  databaseError,
  isConnectionError,
  isDatabaseOutage,
  reportDatabaseFailure,
} from '../../src/service/db/connection-errors.js';
import { databaseAddress } from '../../src/service/db/open.js';
import { createOutageLog } from '../../src/outage-log.js';
import { loadServiceConfig } from '../../src/service/config.js';
import { captureLogger } from '../support/logs.js';

const coded = (code: string, message = `failed with ${code}`) => Object.assign(new Error(message), { code });

const refused = coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432');
const reset = coded('ECONNRESET', 'read ECONNRESET');
const pipe = coded('EPIPE', 'write EPIPE');
const terminatedByAdmin = coded('57P01', 'terminating connection due to administrator command');
const crashShutdown = coded('57P02', 'terminating connection because of crash of another server process');
const starting = coded('57P03', 'the database system is starting up');
const connectionFailure = coded('08006', 'connection failure');
const unexpectedEnd = new Error('Connection terminated unexpectedly');
const poolTimeout = new Error('timeout exceeded when trying to connect');
const connectTimeout = new Error('Connection terminated due to connection timeout', { cause: new Error('Connection terminated unexpectedly') });
const notQueryable = new Error('Client has encountered a connection error and is not queryable');

const uniqueViolation = coded('23505', 'duplicate key value violates unique constraint');
const deadlock = coded('40P01', 'deadlock detected');
const syntax = coded('42601', 'syntax error at or near "SELEC"');
const fileMissing = coded('ENOENT', 'no such file');

describe('connection errors', () => {
  it('knows socket errors, server shutdowns, class 08 and pg’s own words as connection errors', () => {
    for (const error of [refused, reset, pipe, terminatedByAdmin, crashShutdown, starting, connectionFailure, unexpectedEnd, poolTimeout, connectTimeout, notQueryable]) {
      expect(isConnectionError(error), error.message).toBe(true);
    }
    expect(isConnectionError(new AggregateError([refused, coded('ECONNREFUSED')], 'all failed'))).toBe(true);
    for (const error of [uniqueViolation, deadlock, syntax, new Error('boom'), undefined, 'text']) {
      expect(isConnectionError(error)).toBe(false);
    }
    // A missing unix socket is a connection failure only while connecting.
    expect(isConnectionError(fileMissing, 'connect')).toBe(true);
    expect(isConnectionError(fileMissing, 'statement')).toBe(false);
    expect(isConnectionError(coded('53300', 'too many clients'), 'connect')).toBe(true);
  });

  it('never reached the server: failures getting a connection, and statements pg would not send', () => {
    for (const error of [refused, poolTimeout, connectTimeout, starting, terminatedByAdmin, reset]) {
      expect(classifyConnectionFailure(error, 'connect'), error.message).toBe('never-reached');
    }
    expect(classifyConnectionFailure(notQueryable, 'statement')).toBe('never-reached');
  });

  it('lost before commit: the connection broke inside a transaction before COMMIT was sent', () => {
    for (const error of [reset, pipe, terminatedByAdmin, crashShutdown, connectionFailure, unexpectedEnd]) {
      expect(classifyConnectionFailure(error, 'transaction'), error.message).toBe('lost-before-commit');
    }
    // COMMIT that pg refused to send (its client had already failed) never committed.
    expect(classifyConnectionFailure(notQueryable, 'commit')).toBe('lost-before-commit');
    // The work turned the broken connection into an error of its own: the client's report decides.
    expect(classifyConnectionFailure(new Error('could not load the check'), 'transaction', true)).toBe('lost-before-commit');
  });

  it('ambiguous: the connection broke while COMMIT or a single statement was on its way', () => {
    for (const error of [reset, pipe, terminatedByAdmin, unexpectedEnd, connectionFailure]) {
      expect(classifyConnectionFailure(error, 'commit'), error.message).toBe('ambiguous');
      expect(classifyConnectionFailure(error, 'statement'), error.message).toBe('ambiguous');
    }
  });

  it('leaves the server’s own answers alone, even when the connection broke afterwards', () => {
    for (const phase of ['transaction', 'commit', 'statement'] as const) {
      expect(classifyConnectionFailure(uniqueViolation, phase)).toBeUndefined();
      expect(classifyConnectionFailure(deadlock, phase)).toBeUndefined();
      expect(classifyConnectionFailure(uniqueViolation, phase, true)).toBeUndefined();
    }
    expect(classifyConnectionFailure(new Error('password authentication failed'), 'connect')).toBeUndefined();
    expect(classifyConnectionFailure(coded('28P01', 'password authentication failed for user "x"'), 'connect')).toBeUndefined();
  });

  it('becomes DATABASE_UNAVAILABLE when nothing was saved, DATABASE_CONNECTION_LOST when it may have been', () => {
    const unavailable = databaseError(refused, 'never-reached');
    expect(unavailable).toBeInstanceOf(DatabaseUnavailableError);
    expect(unavailable.code).toBe('DATABASE_UNAVAILABLE');
    expect(unavailable.message).toBe('The database is unreachable (ECONNREFUSED)');
    expect(databaseError(reset, 'lost-before-commit').code).toBe('DATABASE_UNAVAILABLE');
    const lost = databaseError(reset, 'ambiguous');
    expect(lost).toBeInstanceOf(DatabaseConnectionLostError);
    expect(lost.code).toBe('DATABASE_CONNECTION_LOST');
    expect(isDatabaseOutage(unavailable) && isDatabaseOutage(lost)).toBe(true);
    expect(isDatabaseOutage(reset)).toBe(false);
    expect(connectionErrorCode(connectTimeout)).toBe('CONNECT_TIMEOUT');
    expect(connectionErrorCode(unexpectedEnd)).toBe('CONNECTION_TERMINATED');
    expect(connectionErrorCode(new DatabaseUnavailableError('x', { cause: terminatedByAdmin }))).toBe('DATABASE_UNAVAILABLE');
  });

  it('names a database by host and port, never by its credentials', () => {
    expect(databaseAddress('postgres://user:secret@db.example.com:6543/outpost')).toBe('db.example.com:6543');
    expect(databaseAddress('postgresql://user:secret@db.example.com/outpost')).toBe('db.example.com:5432');
    expect(databaseAddress('postgres://user@[::1]:5433/outpost')).toBe('[::1]:5433');
    expect(databaseAddress('postgres:///outpost?host=/var/run/postgresql')).toBe('/var/run/postgresql (port 5432)');
    expect(databaseAddress('postgres://%2Fvar%2Frun%2Fpostgresql:5433/outpost')).toBe('/var/run/postgresql (port 5433)');
  });
});

describe('reporting a failure the database caused', () => {
  it('tells an unreachable database to the outage log, a lost connection as one warning, and leaves the rest to the caller', () => {
    const { logger, logs } = captureLogger('report');
    const outage = createOutageLog({ logger, subject: 'the database' });

    expect(reportDatabaseFailure(outage, logger, 'scheduler tick', databaseError(refused, 'never-reached'))).toBe(true);
    expect(reportDatabaseFailure(outage, logger, 'e-mail delivery round', databaseError(refused, 'never-reached'))).toBe(true);
    expect(outage.current?.failures).toBe(2);
    expect(reportDatabaseFailure(outage, logger, 'GET /v1/checks', databaseError(terminatedByAdmin, 'ambiguous', 'statement'))).toBe(true);
    expect(reportDatabaseFailure(outage, logger, 'scheduler tick', uniqueViolation)).toBe(false);
    expect(reportDatabaseFailure(outage, logger, 'scheduler tick', reset)).toBe(false);

    const messages = logs.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toEqual([
      expect.stringMatching(/^the database is unreachable: scheduler tick failed \(.*ECONNREFUSED/),
      'GET /v1/checks failed: The database connection was lost (57P01) while a statement was on its way; whether it took effect is unknown',
    ]);
    expect(databaseError(reset, 'ambiguous', 'commit').message).toBe(
      'The database connection was lost (ECONNRESET) while COMMIT was on its way; whether it took effect is unknown',
    );
  });
});

describe('DATABASE_CONNECT_TIMEOUT_SECONDS', () => {
  it('waits 60 s by default, takes 0 for not at all, and refuses what is not a whole number of seconds', () => {
    expect(loadServiceConfig({}).databaseConnectTimeoutSeconds).toBe(60);
    expect(loadServiceConfig({ DATABASE_CONNECT_TIMEOUT_SECONDS: '0' }).databaseConnectTimeoutSeconds).toBe(0);
    expect(() => loadServiceConfig({ DATABASE_CONNECT_TIMEOUT_SECONDS: 'soon' })).toThrow(/DATABASE_CONNECT_TIMEOUT_SECONDS/);
    expect(() => loadServiceConfig({ DATABASE_CONNECT_TIMEOUT_SECONDS: '-1' })).toThrow(/DATABASE_CONNECT_TIMEOUT_SECONDS/);
  });
});
