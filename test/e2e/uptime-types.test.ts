import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestAgent, type TestAgent } from '../support/agent.js';
import { startTestService, type TestService } from '../support/service.js';
import { createAndRunToFinal } from '../support/sessions.js';
import { closedPort } from '../support/target.js';


/** TCP, DNS and ICMP monitors through the whole path: API, scheduler, agent, probe, session. */
describe('TCP, DNS and ICMP monitors end to end', () => {
  let service: TestService;
  let agent: TestAgent;
  let echo: Server;
  let nameServer: Socket;
  let slug: string;

  beforeAll(async () => {
    echo = createServer((socket) => socket.on('data', (data) => socket.end(data)));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    // A one-zone name server on loopback: intranet.test has an A record, anything else is NXDOMAIN.
    nameServer = createSocket('udp4');
    nameServer.on('message', (message, peer) => {
      const query = dnsPacket.decode(message);
      const question = query.questions?.[0];
      const known = question?.name === 'intranet.test' && question.type === 'A';
      const answer = dnsPacket.encode({
        id: query.id,
        type: 'response',
        flags: dnsPacket.AUTHORITATIVE_ANSWER | (known ? 0 : 3),
        questions: query.questions,
        answers: known ? [{ type: 'A', name: 'intranet.test', ttl: 60, data: '127.0.0.42' }] : [],
      });
      nameServer.send(answer, peer.port, peer.address);
    });
    await new Promise<void>((resolve) => nameServer.bind(0, '127.0.0.1', resolve));
    service = await startTestService('pglite');
    const location = await service.privateLocation();
    slug = location.slugName;
    agent = await startTestAgent({ apiKey: location.rawKey, apiUrl: service.url });
    await eventually(async () => ((await agent.health('/-/readiness')).status === 200 ? true : undefined), 15_000);
  });

  afterAll(async () => {
    await agent?.stop();
    await service?.close();
    await new Promise((resolve) => echo?.close(resolve));
    nameServer?.close();
  });

  const run = (type: string, body: Record<string, unknown>) =>
    createAndRunToFinal(service, type, { name: `${type} e2e`, privateLocations: [slug], ...body }, 20_000);

  it('passes a TCP monitor whose echo answers what it was sent', async () => {
    const port = (echo.address() as AddressInfo).port;
    const { session, detail } = await run('tcp', {
      request: {
        hostname: '127.0.0.1',
        port,
        data: 'ping outpost',
        assertions: [{ source: 'RESPONSE_DATA', comparison: 'EQUALS', target: 'ping outpost' }],
      },
    });
    expect(session.status).toBe('PASSED');
    expect(detail.details.response).toBe('ping outpost');
    expect(detail.assertions[0]).toMatchObject({ source: 'RESPONSE_DATA', passed: true });
  });

  it('fails a TCP monitor when nothing listens', async () => {
    const { session } = await run('tcp', { request: { hostname: '127.0.0.1', port: await closedPort() } });
    expect(session.status).toBe('FAILED');
    expect(session.results[0].error.code).toBe('CONNECTION_FAILED');
  });

  it('passes a DNS monitor whose name server answers as asserted, and fails on NXDOMAIN', async () => {
    const port = nameServer.address().port;
    const found = await run('dns', {
      request: {
        query: 'intranet.test',
        nameServer: '127.0.0.1',
        port,
        assertions: [{ source: 'JSON_ANSWER', property: '$.answers[0].data', comparison: 'EQUALS', target: '127.0.0.42' }],
      },
    });
    expect(found.session.status).toBe('PASSED');
    expect(found.detail.details.rcode).toBe('NOERROR');
    const missing = await run('dns', { request: { query: 'nowhere.intranet.test', nameServer: '127.0.0.1', port } });
    expect(missing.session.status).toBe('FAILED');
    expect(missing.session.results[0].error.code).toBe('DNS_RCODE');
  });

  it('passes an ICMP monitor to the loopback address with the real ping', async () => {
    const { session, detail } = await run('icmp', {
      request: {
        hostname: '127.0.0.1',
        pingCount: 3,
        assertions: [{ source: 'LATENCY', property: 'avg', comparison: 'LESS_THAN', target: '100' }],
      },
    });
    expect(session.status).toBe('PASSED');
    expect(detail.details).toMatchObject({ transmitted: 3, received: 3, packetLoss: 0 });
  });

  it('refuses a LATENCY assertion on a property ping does not report', async () => {
    const created = await service.api('POST', '/v1/checks/icmp', {
      name: 'bad latency',
      request: { hostname: '127.0.0.1', assertions: [{ source: 'LATENCY', property: 'median', comparison: 'LESS_THAN', target: '1' }] },
    });
    expect(created.status).toBe(400);
    expect(Object.keys(created.body.attributes)).toEqual(['request.assertions.0.property']);
  });
});
