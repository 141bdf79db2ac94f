/**
 * The URL probe reports the certificate a server presented (details.tls),
 * against real HTTPS servers on loopback: valid, self-signed and refused,
 * expired, and reached through a redirect.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProbeOutcome } from '../../src/agent/probes/probe.js';
import { urlProbe } from '../../src/agent/probes/url.js';

interface Credentials {
  key: string;
  cert: string;
}

const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), 'outpost-tls-'));
const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });

/** Valid for `days` from now, for localhost and 127.0.0.1. */
function currentCertificate(days: number): Credentials {
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', String(days),
    '-subj', '/CN=localhost/O=Outpost Test', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-keyout', 'current-key.pem', '-out', 'current.pem');
  return { key: readFileSync(join(dir, 'current-key.pem'), 'utf8'), cert: readFileSync(join(dir, 'current.pem'), 'utf8') };
}

/** Valid in January 2020 only: `openssl req` cannot date a certificate in the past, `openssl ca` can. */
function expiredCertificate(): Credentials {
  writeFileSync(join(dir, 'ca.cnf'), [
    '[ ca ]', 'default_ca = own', '[ own ]', 'database = index.txt', 'new_certs_dir = .', 'serial = serial',
    'default_md = sha256', 'policy = any', 'copy_extensions = copy', 'unique_subject = no', '[ any ]', 'commonName = supplied',
  ].join('\n'));
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '01\n');
  openssl('req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', 'expired-key.pem', '-out', 'expired.csr');
  openssl('ca', '-batch', '-config', 'ca.cnf', '-selfsign', '-keyfile', 'expired-key.pem', '-in', 'expired.csr',
    '-out', 'expired.pem', '-startdate', '20200101000000Z', '-enddate', '20200201000000Z');
  return { key: readFileSync(join(dir, 'expired-key.pem'), 'utf8'), cert: readFileSync(join(dir, 'expired.pem'), 'utf8') };
}

const servers: (http.Server | https.Server)[] = [];

async function listen(server: http.Server | https.Server): Promise<string> {
  servers.push(server);
  if (server instanceof https.Server) server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return `${server instanceof https.Server ? 'https' : 'http'}://localhost:${port}/`;
}

function run(url: string, request: Record<string, unknown> = {}): Promise<ProbeOutcome> {
  const settings = urlProbe.parseSettings({ request: { url, ...request } });
  return urlProbe.run(settings, { signal: new AbortController().signal, timeoutMs: 10_000 });
}

describe('urlProbe.run reports the server certificate', () => {
  let current: Credentials;
  let expired: Credentials;
  let currentUrl: string;
  let expiredUrl: string;

  beforeAll(async () => {
    current = currentCertificate(30);
    expired = expiredCertificate();
    currentUrl = await listen(https.createServer(current, (_req, res) => res.end('secure')));
    expiredUrl = await listen(https.createServer(expired, (_req, res) => res.end('stale')));
  });

  afterAll(async () => {
    await Promise.all(servers.map((server) => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); })));
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives subject, issuer, validity, days remaining and fingerprint of a certificate it accepted', async () => {
    const outcome = await run(currentUrl, { skipSSL: true });
    expect(outcome.error).toBeNull();
    const x509 = new X509Certificate(current.cert);
    expect(outcome.details.tls).toEqual({
      subject: 'CN=localhost, O=Outpost Test',
      issuer: 'CN=localhost, O=Outpost Test',
      validFrom: new Date(x509.validFrom).toISOString(),
      validTo: new Date(x509.validTo).toISOString(),
      daysRemaining: Math.floor((Date.parse(x509.validTo) - Date.now()) / DAY),
      fingerprint256: x509.fingerprint256,
    });
    expect((outcome.details.tls as { daysRemaining: number }).daysRemaining).toBe(29);
  });

  it('still reports the certificate when it refuses it, and an expired one with negative days', async () => {
    const untrusted = await run(currentUrl);
    expect(untrusted.error?.code).toBe('TLS_FAILURE');
    expect(untrusted.details.tls).toMatchObject({ subject: 'CN=localhost, O=Outpost Test', daysRemaining: 29 });

    const stale = await run(expiredUrl);
    expect(stale.error?.code).toBe('TLS_FAILURE');
    expect(stale.details.tls).toMatchObject({
      subject: 'CN=localhost',
      validFrom: '2020-01-01T00:00:00.000Z',
      validTo: '2020-02-01T00:00:00.000Z',
    });
    const days = (stale.details.tls as { daysRemaining: number }).daysRemaining;
    expect(days).toBe(Math.floor((Date.parse('2020-02-01T00:00:00Z') - Date.now()) / DAY));
    expect(days).toBeLessThan(-2000);
  });

  it('reports the HTTPS hop a plain-HTTP address redirects to, and nothing for plain HTTP alone', async () => {
    const plain = await listen(http.createServer((_req, res) => res.end('plain')));
    const redirecting = await listen(
      http.createServer((_req, res) => res.writeHead(301, { location: currentUrl }).end()),
    );
    expect((await run(plain)).details).not.toHaveProperty('tls');
    const outcome = await run(redirecting, { skipSSL: true });
    expect(outcome.statusCode).toBe(200);
    expect(outcome.details.redirects).toBe(1);
    expect(outcome.details.tls).toMatchObject({ subject: 'CN=localhost, O=Outpost Test', daysRemaining: 29 });
  });
});
