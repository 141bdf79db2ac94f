import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import spectralCore, { type RulesetDefinition } from '@stoplight/spectral-core';
import { Json as JsonParser } from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

// Code generators read /openapi.json; a linter with the recommended rules is how
// we know they can. The figure is the number of errors still left: lower it, never raise it.
const MAX_LINT_ERRORS = 0;
const { Document, Spectral } = spectralCore;
/** Spectral's severities, as @stoplight/types numbers them. */
const SPECTRAL_ERROR = 0;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every object key in the document, with the JSON pointer that reaches it. */
function* keysIn(node: Json, pointer = ''): Generator<[string, string]> {
  if (Array.isArray(node)) {
    for (const [index, item] of node.entries()) yield* keysIn(item, `${pointer}/${index}`);
  } else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      yield [key, `${pointer}/${key}`];
      yield* keysIn(value, `${pointer}/${key}`);
    }
  }
}

function operationsIn(document: { paths: Record<string, Record<string, { operationId?: string }>> }) {
  const methods = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => methods.has(method))
      .map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, operationId: operation.operationId })),
  );
}

function describeProblem(problem: NormalizedProblem): string {
  const where = problem.location[0]?.pointer ?? '';
  return `${problem.ruleId}: ${problem.message} at ${where}`;
}

describe('OpenAPI document for code generators', () => {
  let service: TestService;
  let document: any;
  beforeAll(async () => {
    service = await startTestService('pglite');
    document = (await service.raw('GET', '/openapi.json')).body;
  });
  afterAll(async () => service?.close());

  it('carries none of the schema library’s internal "~" keys anywhere', () => {
    const leaked = [...keysIn(document)].filter(([key]) => key.startsWith('~')).map(([, pointer]) => pointer);
    expect(leaked.slice(0, 20), `${leaked.length} internal keys`).toEqual([]);
  });

  it('names every operation with a unique camelCase operationId', () => {
    const operations = operationsIn(document);
    expect(operations.length).toBeGreaterThan(20);
    expect(operations.filter((operation) => !operation.operationId).map((operation) => operation.route)).toEqual([]);
    for (const operation of operations) expect(operation.operationId, operation.route).toMatch(/^[a-z][A-Za-z0-9]*$/);
    const ids = operations.map((operation) => operation.operationId);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
  });

  it('keeps operationIds stable for the routes clients already call', () => {
    const byRoute = new Map(operationsIn(document).map((operation) => [operation.route, operation.operationId]));
    expect(byRoute.get('GET /v1/checks')).toBe('listChecks');
    expect(byRoute.get('GET /v1/checks/{id}')).toBe('getCheck');
    expect(byRoute.get('POST /v1/checks/url')).toBe('createUrlCheck');
    expect(byRoute.get('PUT /v1/checks/dns/{id}')).toBe('updateDnsCheck');
    expect(byRoute.get('DELETE /v1/checks/{id}')).toBe('deleteCheck');
    expect(byRoute.get('POST /v1/check-sessions/{checkSessionId}/cancel')).toBe('cancelCheckSession');
    expect(byRoute.get('GET /v2/check-results/{checkId}')).toBe('listCheckResultsV2');
  });

  it('marks timestamps as date-time and lists the spec’s enums', () => {
    const session = document.components.schemas.CheckSession;
    expect(session.properties.startedAt).toEqual(expect.objectContaining({ type: 'string', format: 'date-time' }));
    expect(session.properties.stoppedAt.anyOf).toContainEqual(expect.objectContaining({ format: 'date-time' }));
    expect(session.properties.runSource.anyOf).toContainEqual(expect.objectContaining({ enum: expect.arrayContaining(['TRIGGER_API', 'SCHEDULER']) }));
    expect(session.properties.checkType).toEqual({ $ref: '#/components/schemas/CheckType' });
    expect(document.components.schemas.CheckType.enum).toEqual(expect.arrayContaining(['API', 'BROWSER', 'URL']));
    const check = document.components.schemas.UrlCheck;
    expect(check.properties.created_at.format).toBe('date-time');
    expect(check.properties.checkType.enum).toEqual(['URL']);
  });

  it('lists the spec’s enums for analytics metrics and status filters, as comma-separated lists', () => {
    const parameters: { name: string; style?: string; explode?: boolean; schema: any }[] =
      document.paths['/v1/analytics/url-monitors/{id}'].get.parameters;
    const metrics = parameters.find((parameter) => parameter.name === 'metrics')!;
    expect(metrics).toMatchObject({ style: 'form', explode: false, schema: { type: 'array' } });
    expect(metrics.schema.items.enum).toEqual(expect.arrayContaining(['responseTime', 'availability', 'retries', 'responseTime_p99', 'dns_stddev']));
    const statuses = parameters.find((parameter) => parameter.name === 'filterByStatus')!;
    expect(statuses.schema.items.enum).toEqual(['success', 'failure']);
  });

  it('names shared schemas once in components and refers to them from every route', () => {
    const schemas = document.components.schemas;
    for (const name of ['Check', 'UrlCheck', 'ApiCheck', 'CheckGroup', 'CheckSession', 'CheckSessionResult', 'CheckResult', 'AlertChannel', 'PrivateLocation', 'StatusPage', 'MaintenanceWindow', 'Location', 'CheckType', 'Error', 'ErrorWithAttributes']) {
      expect(schemas[name], name).toBeDefined();
    }
    const json = (node: unknown) => JSON.stringify(node);
    const response = (path: string, method: string, status: string) => document.paths[path][method].responses[status].content['application/json'].schema;
    expect(response('/v1/checks/{id}', 'get', '200')).toEqual({ $ref: '#/components/schemas/Check' });
    expect(response('/v1/checks', 'get', '200')).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Check' } });
    expect(response('/v1/checks/url', 'post', '201')).toEqual({ $ref: '#/components/schemas/UrlCheck' });
    expect(response('/v1/check-groups/{id}', 'get', '200')).toEqual({ $ref: '#/components/schemas/CheckGroup' });
    expect(response('/v1/check-sessions/{checkSessionId}', 'get', '200')).toEqual({ $ref: '#/components/schemas/CheckSession' });
    expect(response('/v1/checks/{id}', 'get', '404')).toEqual({ $ref: '#/components/schemas/Error' });
    expect(json(schemas.Check)).toContain('"$ref":"#/components/schemas/BrowserCheck"');
    expect(json(schemas.CheckSession)).toContain('"$ref":"#/components/schemas/CheckSessionResult"');
    // Every reference resolves.
    const refs = [...json(document).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((match) => match[1]!);
    expect(refs.filter((name) => !schemas[name])).toEqual([]);
  });

  it('describes the fields of every successful JSON answer: no open object without properties', () => {
    const schemas = document.components.schemas;
    const resolve = (node: any): any => (node?.$ref ? resolve(schemas[node.$ref.split('/').pop()]) : node);
    const undescribed = (node: any, where: string, depth = 0): string[] => {
      const schema = resolve(node);
      if (!schema || typeof schema !== 'object' || depth > 8) return [];
      const found: string[] = [];
      const open = schema.additionalProperties === undefined || schema.additionalProperties === true;
      if (schema.type === 'object' && !schema.properties && !schema.patternProperties && open) found.push(where || '(body)');
      for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) found.push(...undescribed(branch, where, depth + 1));
      if (schema.items) found.push(...undescribed(schema.items, `${where}[]`, depth + 1));
      for (const [name, property] of Object.entries(schema.properties ?? {})) found.push(...undescribed(property, `${where}.${name}`, depth + 1));
      return found;
    };
    const found = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) =>
        Object.entries((operation?.responses ?? {}) as Record<string, any>)
          .filter(([status]) => status.startsWith('2'))
          .flatMap(([status, response]) =>
            undescribed(response.content?.['application/json']?.schema, '').map((where) => `${method.toUpperCase()} ${path} ${status} ${where}`),
          ),
      ),
    );
    expect(found).toEqual([]);
  });

  it('passes Spectral’s spectral:oas ruleset with no errors', async () => {
    const spectral = new Spectral();
    spectral.setRuleset({ extends: [[oas as RulesetDefinition, 'all']] });
    const problems = await spectral.run(new Document(JSON.stringify(document), JsonParser, 'openapi.json'));
    const errors = problems.filter((problem) => Number(problem.severity) === SPECTRAL_ERROR);
    const where = (problem: (typeof problems)[number]) => `${problem.code}: ${problem.message} at ${problem.path.join('.')}`;
    expect(errors.map(where).slice(0, 15)).toEqual([]);
  });

  it('passes the recommended lint rules with at most the known number of errors', async () => {
    // The agent's error reporter posts to Sentry's envelope route, whose trailing slash the SDK fixes.
    const config = await createConfig({ extends: ['recommended'], rules: { 'no-path-trailing-slash': 'off' } });
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config });
    const errors = problems.filter((problem) => problem.severity === 'error');
    expect(errors.length, errors.slice(0, 15).map(describeProblem).join('\n')).toBeLessThanOrEqual(MAX_LINT_ERRORS);
  });
});
