/**
 * Artifact uploads through the agent's real client: streamed, retried while
 * the service falters, never attempted over the limit, and always answered
 * with what the result should say.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ArtifactUploader } from '../../src/agent/artifact-uploader.js';
import { AgentMetrics } from '../../src/agent/metrics.js';
import { ServiceClient } from '../../src/agent/service-client.js';
import { Secret } from '../../src/config/secret.js';

const KEY = `pl_${'a'.repeat(40)}`;
let directory: string;
let server: Server;
let client: ServiceClient;
let handler: (request: IncomingMessage, response: ServerResponse, body: Buffer) => void;
const received: { path: string; body: Buffer; contentType?: string }[] = [];

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'outpost-uploader-'));
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handler(request, response, Buffer.concat(chunks)));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  client = new ServiceClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, new Secret(KEY));
});

afterEach(() => {
  received.length = 0;
});

afterAll(async () => {
  await client.close();
  server.close();
  await rm(directory, { recursive: true, force: true });
});

async function file(name: string, bytes: number): Promise<{ path: string; digest: string }> {
  const data = Buffer.alloc(bytes, 7);
  const path = join(directory, name);
  await writeFile(path, data);
  return { path, digest: createHash('sha256').update(data).digest('hex') };
}

const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('ArtifactUploader', () => {
  it('uploads a file whole, with its type and length, and says so', async () => {
    handler = (request, response, body) => {
      received.push({ path: request.url!, body, contentType: request.headers['content-type'] });
      response.writeHead(201, { 'content-type': 'application/json' }).end('{}');
    };
    const { path, digest } = await file('trace.zip', 300_000);
    const ref = await new ArtifactUploader(client).upload('job-1', 'trace.zip', 'application/zip', path);
    expect(ref).toEqual({ name: 'trace.zip', contentType: 'application/zip', size: 300_000, uploaded: true, error: null });
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ path: '/v1/agent/jobs/job-1/artifacts/trace.zip', contentType: 'application/zip' });
    expect(sha(received[0]!.body)).toBe(digest);
  });

  it('retries while the service answers 503, then succeeds', async () => {
    let calls = 0;
    handler = (request, response, body) => {
      calls += 1;
      if (calls < 3) return response.writeHead(503).end('busy');
      received.push({ path: request.url!, body });
      response.writeHead(201).end('{}');
    };
    const { path, digest } = await file('shot.png', 10_000);
    const ref = await new ArtifactUploader(client).upload('job-2', 'shot.png', 'image/png', path);
    expect(ref.uploaded).toBe(true);
    expect(calls).toBe(3);
    expect(sha(received[0]!.body)).toBe(digest);
  });

  it('gives up after its attempts and says why', async () => {
    let calls = 0;
    handler = (_request, response) => {
      calls += 1;
      response.writeHead(503).end('down for maintenance');
    };
    const { path } = await file('video.webm', 1000);
    const ref = await new ArtifactUploader(client, { attempts: 2 }).upload('job-3', 'video.webm', 'video/webm', path);
    expect(calls).toBe(2);
    expect(ref).toMatchObject({ uploaded: false, size: 1000 });
    expect(ref.error).toMatch(/upload failed: .*503/);
  });

  it('does not retry what the service refused for good', async () => {
    let calls = 0;
    handler = (_request, response) => {
      calls += 1;
      response.writeHead(413, { 'content-type': 'application/json' }).end('{"message":"too large"}');
    };
    const { path } = await file('big.zip', 1000);
    const ref = await new ArtifactUploader(client).upload('job-4', 'big.zip', 'application/zip', path);
    expect(calls).toBe(1);
    expect(ref.uploaded).toBe(false);
  });

  it('counts the bytes it sent and the files it did not, by reason', async () => {
    const metrics = new AgentMetrics();
    let calls = 0;
    handler = (_request, response) => {
      calls += 1;
      response.writeHead(calls === 1 ? 201 : 400).end('{}');
    };
    const uploader = new ArtifactUploader(client, { metrics, limitBytes: 5000 });
    await uploader.upload('job-6', 'a.zip', 'application/zip', (await file('a.zip', 1234)).path);
    await uploader.upload('job-6', 'b.zip', 'application/zip', (await file('b.zip', 100)).path);
    await uploader.upload('job-6', 'c.zip', 'application/zip', (await file('c.zip', 6000)).path);
    await uploader.upload('job-6', 'd.zip', 'application/zip', join(directory, 'missing.zip'));
    const text = await metrics.registry.metrics();
    expect(text).toContain('outpost_artifact_bytes_total 1234');
    expect(text).toContain('outpost_artifact_failures_total{reason="upload_failed"} 1');
    expect(text).toContain('outpost_artifact_failures_total{reason="too_large"} 1');
    expect(text).toContain('outpost_artifact_failures_total{reason="unreadable"} 1');
  });

  it('does not send a file over the limit, and names it, its size and the limit', async () => {
    handler = () => {
      throw new Error('nothing may be sent');
    };
    const { path } = await file('huge-trace.zip', 4097);
    const ref = await new ArtifactUploader(client, { limitBytes: 4096 }).upload('job-5', 'huge-trace.zip', 'application/zip', path);
    expect(ref).toEqual({
      name: 'huge-trace.zip',
      contentType: 'application/zip',
      size: 4097,
      uploaded: false,
      error: 'huge-trace.zip is 4097 bytes, over the 4096-byte artifact limit; not uploaded',
    });
  });
});
