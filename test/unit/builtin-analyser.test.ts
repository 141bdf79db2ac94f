import { describe, expect, it } from 'vitest';
import { BuiltinAnalyser } from '../../src/service/rca/builtin-analyser.js';
import { fingerprintOf, type ErrorGroup, type FailedResult } from '../../src/service/rca/error-groups.js';
import type { AnalysisInput } from '../../src/service/rca/provider.js';

const result = (overrides: Partial<FailedResult> = {}): FailedResult => ({
  resultId: 'r',
  checkSessionId: 's',
  runLocation: 'rack-1',
  checkType: 'URL',
  startedAt: '2026-11-21T10:00:00.000Z',
  stoppedAt: '2026-11-21T10:00:01.000Z',
  responseTime: null,
  statusCode: null,
  timings: null,
  error: null,
  failedAssertions: [],
  logTail: [],
  ...overrides,
});

function input(results: FailedResult[], locations = ['rack-1']): AnalysisInput {
  const { code, message, fingerprint } = fingerprintOf(results[0]!);
  const group: ErrorGroup = {
    id: 'g',
    checkId: 'c',
    checkSessionId: null,
    fingerprint,
    code,
    message,
    count: results.length,
    locations,
    firstSeen: '2026-11-21T10:00:01.000Z',
    lastSeen: '2026-11-21T10:05:01.000Z',
  };
  return { subject: 'CHECK_ERROR_GROUP', check: { id: 'c', name: 'Shop', checkType: 'URL' }, errorGroup: group, results, lastPassedAt: null };
}

const analyse = (results: FailedResult[], locations?: string[]) => new BuiltinAnalyser().analyse(input(results, locations));

describe('the built-in analyser', () => {
  it('tells an expired certificate from one it cannot verify and one for another host', async () => {
    const tls = (message: string) => analyse([result({ error: { code: 'TLS_FAILURE', message } })]);
    expect((await tls('certificate has expired')).likelyCause).toMatch(/expired/);
    expect((await tls('self-signed certificate in certificate chain')).likelyCause).toMatch(/not signed by an authority/);
    expect((await tls("Hostname/IP does not match certificate's altnames")).likelyCause).toMatch(/does not name the host/);
  });

  it('names the phase a timeout spent its time in', async () => {
    const slow = result({
      error: { code: 'TIMEOUT', message: 'The run took longer than 30000 ms' },
      timings: { dns: 1, tcp: 1, tls: 5, firstByte: 29_000, download: null, total: null },
    });
    const analysis = await analyse([slow, slow]);
    expect(analysis.category).toBe('TIMEOUT');
    expect(analysis.likelyCause).toBe('Most of the time went into waiting for the first byte of the response (median 29000 ms).');
  });

  it('tells a missing name from an unreachable resolver', async () => {
    const missing = await analyse([result({ error: { code: 'DNS_FAILURE', message: 'queryA ENOTFOUND shop.internal' } })]);
    expect(missing.likelyCause).toMatch(/does not exist/);
    const silent = await analyse([result({ error: { code: 'DNS_FAILURE', message: 'queryA ETIMEOUT shop.internal' } })]);
    expect(silent.likelyCause).toMatch(/did not answer usefully/);
  });

  it('reads 401 and 404 responses differently from 5xx', async () => {
    const status = (statusCode: number) =>
      analyse([
        result({
          statusCode,
          failedAssertions: [{ source: 'STATUS_CODE', property: '', comparison: 'EQUALS', target: '200', actual: statusCode }],
        }),
      ]);
    expect((await status(401)).likelyCause).toMatch(/credentials/);
    expect((await status(404)).likelyCause).toMatch(/no longer exists/);
    expect((await status(502)).category).toBe('SERVER_ERROR');
  });

  it('says whether it fails everywhere or at one place', async () => {
    const refused = result({ error: { code: 'CONNECTION_FAILED', message: 'connect ECONNREFUSED 10.0.0.1:443' } });
    expect((await analyse([refused], ['rack-1', 'rack-2'])).evidence).toContainEqual(expect.stringMatching(/^It fails at 2 locations/));
    expect((await analyse([refused], ['rack-1'])).evidence).toContainEqual(expect.stringMatching(/^It fails at one location \(rack-1\)/));
  });

  it('groups messages that differ only in numbers, addresses and ids', () => {
    const a = fingerprintOf(result({ error: { code: 'HTTP_FAILURE', message: 'request 1b4e28ba-2fa1-11d2-883f-0016d3cca427 to 10.1.2.3:8443 failed after 1200 ms' } }));
    const b = fingerprintOf(result({ error: { code: 'HTTP_FAILURE', message: 'request 6fa459ea-ee8a-3ca4-894e-db77e160355e to 10.9.9.9:443 failed after 35 ms' } }));
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(a.fingerprint).toBe('HTTP_FAILURE: request <id> to <address> failed after <n> ms');
  });
});
