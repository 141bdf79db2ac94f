/**
 * What leaves the agent of an artifact: scrubbed whatever the script declared
 * it to be, zips entry by entry whatever they are called, and named and typed
 * with the secrets gone — through the real scrubber, real files and the real
 * uploader, with only the service's end of the upload replaced.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { safeArtifactLabel } from '../../src/agent/artifact-label.js';
import { ArtifactUploader } from '../../src/agent/artifact-uploader.js';
import { scrubAndUpload } from '../../src/agent/scrub-and-upload.js';
import { createJobScrubber } from '../../src/agent/script-scrubber.js';
import { SCRUB_MARKER } from '../../src/scrub/index.js';
import { secretSpellings, spellingsFound } from '../support/secret-spellings.js';
import { readZip } from '../support/zip.js';

const SECRET = 'tok-3f9a-secret-value';
/** One whose plain form has characters a name may not hold, and whose base64 has a '+'. */
const ODD_SECRET = 'tok?3f9a>secret~value';
const BASE64 = Buffer.from(SECRET).toString('base64');
const ODD_BASE64 = Buffer.from(ODD_SECRET).toString('base64');
const spellings = [...secretSpellings(SECRET), ...secretSpellings(ODD_SECRET)];

interface Sent {
  name: string;
  contentType: string;
  data: Buffer;
}

let directory: string;
let root: string;
let sent: Sent[];
const failures: string[] = [];
const scrubber = createJobScrubber([SECRET, ODD_SECRET], { sensitiveHeaders: true });
const uploader = new ArtifactUploader(
  {
    uploadArtifact: async (_jobId, name, body, contentType) => {
      sent.push({ name, contentType, data: Buffer.isBuffer(body) ? body : await buffer(body) });
    },
  },
  {
    metrics: {
      artifactBytes: { inc: () => undefined },
      artifactFailures: { inc: (labels: { reason: string }) => failures.push(labels.reason) },
    } as never,
  },
);

function upload(name: string, contentType: string, path: string) {
  return scrubAndUpload(scrubber, uploader, { jobId: 'job-1', name, contentType, path, root });
}

function expectNoSecret(data: Buffer | string, what: string): void {
  expect(spellingsFound(data, spellings), what).toEqual([]);
  expect(data.toString().includes(BASE64), what).toBe(false);
  expect(data.toString().includes(ODD_BASE64), what).toBe(false);
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'outpost-artifact-scrub-'));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

beforeEach(async () => {
  sent = [];
  failures.length = 0;
  root = await mkdtemp(join(directory, 'job-'));
});

const leakyText = [
  `token=${SECRET}`,
  `Authorization: Basic ${Buffer.from(`alice:${SECRET}`).toString('base64')}`,
  `bearer ${BASE64}`,
  `{"password":"${ODD_SECRET}"}`,
  '',
].join('\n');

describe('scrubAndUpload', () => {
  it.each(['image/png', 'application/octet-stream', 'video/webm'])('scrubs a text file with secrets declared %s', async (declared) => {
    await writeFile(join(root, 'thing'), leakyText);
    const ref = await upload('thing.bin', declared, join(root, 'thing'));
    expect(ref).toMatchObject({ uploaded: true, contentType: declared });
    expect(sent).toHaveLength(1);
    expectNoSecret(sent[0]!.data, declared);
    expect(sent[0]!.data.toString()).toContain(`token=${SCRUB_MARKER}`);
  });

  it('scrubs a binary file declared image/png and leaves its other bytes as they were', async () => {
    const pixels = Buffer.from(Array.from({ length: 5000 }, (_unused, index) => (index * 37) % 256));
    const png = Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), pixels, Buffer.from(`tEXtComment\0${SECRET}`), pixels]);
    await writeFile(join(root, 'shot.png'), png);
    await upload('shot.png', 'image/png', join(root, 'shot.png'));
    const expected = Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), pixels, Buffer.from(`tEXtComment\0${SCRUB_MARKER}`), pixels]);
    expect(sent[0]!.data.equals(expected)).toBe(true);
  });

  it('scrubs a real zip declared image/png entry by entry, names included', async () => {
    const zip = new yazl.ZipFile();
    zip.addBuffer(Buffer.from(leakyText), 'trace.trace', { compress: true });
    zip.addBuffer(Buffer.from(`${SECRET}\n`.repeat(1000)), `resources/${SECRET}.txt`, { compress: true });
    zip.end();
    await pipeline(zip.outputStream, createWriteStream(join(root, 'shot.png')));
    await upload('shot.png', 'image/png', join(root, 'shot.png'));
    // Compressed, the secret would not show in the raw bytes: read what was sent as a zip.
    await writeFile(join(directory, 'sent.zip'), sent[0]!.data);
    const entries = await readZip(join(directory, 'sent.zip'));
    expect(entries.map((entry) => entry.name)).toEqual(['trace.trace', `resources/${SCRUB_MARKER}.txt`]);
    for (const entry of entries) expectNoSecret(entry.data, entry.name);
    expect(entries[1]!.data.toString()).toBe(`${SCRUB_MARKER}\n`.repeat(1000));
  });

  it('scrubs an empty zip declared application/zip into an empty zip', async () => {
    const zip = new yazl.ZipFile();
    zip.end();
    await pipeline(zip.outputStream, createWriteStream(join(root, 'trace.zip')));
    const ref = await upload('trace.zip', 'application/zip', join(root, 'trace.zip'));
    expect(ref.uploaded).toBe(true);
    expect(sent[0]!.data.subarray(0, 4).toString('latin1')).toBe('PK\x05\x06');
  });

  it('scrubs as bytes a file that starts like a zip but is not one', async () => {
    await writeFile(join(root, 'trace.zip'), `PK\x03\x04 not really a zip ${leakyText}`);
    const ref = await upload('trace.zip', 'application/zip', join(root, 'trace.zip'));
    expect(ref.uploaded).toBe(true);
    expectNoSecret(sent[0]!.data, 'fake zip');
    expect(sent[0]!.data.toString()).toContain('not really a zip');
  });

  it('uploads nothing for a link out of the job directory, and says why', async () => {
    await writeFile(join(directory, 'agent-secret'), `AGENT_KEY=${SECRET}-agent`);
    await symlink(join(directory, 'agent-secret'), join(root, 'trace.zip'));
    const ref = await upload('trace.zip', 'application/zip', join(root, 'trace.zip'));
    expect(ref).toMatchObject({ name: 'trace.zip', uploaded: false, size: 0 });
    expect(ref.error).toMatch(/not uploaded: .*leads out of the job's directory/);
    expect(sent).toEqual([]);
    expect(failures).toEqual(['unreadable']);
  });

  it('uploads nothing for a file over the limit, counted as too large', async () => {
    await writeFile(join(root, 'video.webm'), Buffer.alloc(2048));
    const ref = await scrubAndUpload(
      scrubber,
      uploader,
      { jobId: 'job-1', name: 'video.webm', contentType: 'video/webm', path: join(root, 'video.webm'), root },
      undefined,
      { limitBytes: 1024 },
    );
    expect(ref).toMatchObject({ uploaded: false });
    expect(ref.error).toContain('over the 1024-byte limit');
    expect(failures).toEqual(['too_large']);
  });

  it('never lets a secret out in a name or content type, even one passed as is', async () => {
    await writeFile(join(root, 'a'), 'nothing to see');
    const ref = await upload(`${SECRET}.png`, `image/${SECRET}`, join(root, 'a'));
    expectNoSecret(JSON.stringify(ref), 'ref');
    expectNoSecret(`${sent[0]!.name} ${sent[0]!.contentType}`, 'upload');
    expect(sent[0]!.contentType).toBe('application/octet-stream');
    expect(sent[0]!.name).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/);
  });

  it('sends the name and type an attachment\'s label made, with no secret in its name, extension or type', async () => {
    // As the runners do: the attachment's name, its path's extension and its declared type, all the script's.
    await writeFile(join(root, `shot.${SECRET}`), leakyText);
    const label = safeArtifactLabel(
      scrubber,
      { name: `login ${SECRET} ${ODD_BASE64}`, extension: `.${SECRET}`, contentType: `text/plain; token=${SECRET}` },
      { suffix: '-0' },
    );
    await upload(label.name, label.contentType, join(root, `shot.${SECRET}`));
    expect(sent[0]!.name).toBe('login-0.bin');
    expect(sent[0]!.contentType).toBe('text/plain');
    expectNoSecret(`${sent[0]!.name} ${sent[0]!.contentType}`, 'label');
    expectNoSecret(sent[0]!.data, 'data');
  });
});
