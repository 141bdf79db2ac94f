/**
 * A client generated from /openapi.json, as a user would make one: types from
 * openapi-typescript, calls through openapi-fetch. The client compiles under
 * strict TypeScript (and refuses calls the document forbids), then runs
 * against the service it was generated from.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

/** Inside the project's node_modules, so the generated client resolves openapi-fetch as a user's project would. */
const CACHE = join(process.cwd(), 'node_modules', '.cache');

const CLIENT = `
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

type Check = components['schemas']['Check'];

export async function createAndRead(baseUrl: string, headers: Record<string, string>, privateLocation: string) {
  const client = createClient<paths>({ baseUrl, headers });
  const created = await client.POST('/v1/checks/url', {
    params: { query: { autoAssignAlerts: false } },
    body: { name: 'generated client', activated: false, privateLocations: [privateLocation], request: { url: 'http://127.0.0.1:9/' } },
  });
  if (!created.data) throw new Error('create failed: ' + JSON.stringify(created.error));
  const id: string = created.data.id;
  const frequency: number = created.data.frequency;
  const method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | undefined = created.data.request?.method;
  const read = await client.GET('/v1/checks/{id}', { params: { path: { id } } });
  const check: Check | undefined = read.data;
  const missing = await client.GET('/v1/checks/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } });
  const message: string | undefined = missing.error?.message;
  const sessions = await client.POST('/v2/check-sessions/trigger', { body: { target: { checkId: [id] } } });
  const runSource = sessions.data?.sessions[0]?.runSource;
  return { id, frequency, method, checkType: check?.checkType, missingStatus: missing.response.status, message, runSource };
}

export function misuses(client: ReturnType<typeof createClient<paths>>) {
  // @ts-expect-error the path has no such route
  void client.GET('/v1/no-such-route');
  // @ts-expect-error a check id is a path parameter named id
  void client.GET('/v1/checks/{id}', { params: { path: { checkId: 'x' } } });
  // @ts-expect-error a check type the spec does not name
  const type: components['schemas']['CheckType'] = 'SMOKE_SIGNAL';
  // @ts-expect-error runSource is one of the spec's values
  const source: components['schemas']['CheckSession']['runSource'] = 'WHENEVER';
  return [type, source];
}
`;

/** What the compiled client module exports, as this test calls it. */
interface GeneratedClient {
  createAndRead(
    baseUrl: string,
    headers: Record<string, string>,
    privateLocation: string,
  ): Promise<{ id: string; frequency: number; method?: string; checkType?: string; missingStatus: number; message?: string; runSource?: string | null }>;
}

function diagnostics(files: string[]): string[] {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
  });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where = diagnostic.file ? `${diagnostic.file.fileName.split('/').pop()}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1} ` : '';
    return `${where}${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
  });
}

describe('a TypeScript client generated from /openapi.json', () => {
  let service: TestService;
  let dir: string;

  beforeAll(async () => {
    service = await startTestService('pglite');
    await mkdir(CACHE, { recursive: true });
    dir = await mkdtemp(join(CACHE, 'outpost-openapi-client-'));
    const document = (await service.raw('GET', '/openapi.json')).body;
    await writeFile(join(dir, 'schema.d.ts'), astToString(await openapiTS(document)));
    await writeFile(join(dir, 'client.ts'), CLIENT);
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('compiles under strict TypeScript, and refuses what the document forbids', () => {
    expect(diagnostics([join(dir, 'client.ts')])).toEqual([]);
  }, 60_000);

  it('calls the service it was generated from', async () => {
    const compiled = ts.transpileModule(CLIENT, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
    await writeFile(join(dir, 'client.mjs'), compiled.outputText);
    const client = (await import(pathToFileURL(join(dir, 'client.mjs')).href)) as GeneratedClient;
    const location = await service.privateLocation();
    const answer = await client.createAndRead(service.url, { authorization: `Bearer ${service.apiKey}`, 'x-service-account': service.accountId }, location.slugName);
    expect(answer).toMatchObject({ frequency: 10, method: 'GET', checkType: 'URL', missingStatus: 404, runSource: 'TRIGGER_API' });
    expect(answer.message).toContain('not found');
  }, 60_000);
});
