import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

// Code generators read /openapi.json; a linter with the recommended rules is how
// we know they can. The figure is the number of errors still left: lower it, never raise it.
const MAX_LINT_ERRORS = 0;

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
    const session = document.paths['/v1/check-sessions/{checkSessionId}'].get.responses['200'].content['application/json'].schema;
    expect(session.properties.startedAt).toEqual(expect.objectContaining({ type: 'string', format: 'date-time' }));
    expect(session.properties.stoppedAt.anyOf).toContainEqual(expect.objectContaining({ format: 'date-time' }));
    expect(session.properties.runSource.anyOf).toContainEqual(expect.objectContaining({ enum: expect.arrayContaining(['TRIGGER_API', 'SCHEDULER']) }));
    expect(session.properties.checkType.enum).toEqual(expect.arrayContaining(['API', 'BROWSER', 'URL']));
    const check = document.paths['/v1/checks/{id}'].get.responses['200'].content['application/json'].schema;
    expect(check.properties.created_at.format).toBe('date-time');
  });

  it('passes the recommended lint rules with at most the known number of errors', async () => {
    // The agent's error reporter posts to Sentry's envelope route, whose trailing slash the SDK fixes.
    const config = await createConfig({ extends: ['recommended'], rules: { 'no-path-trailing-slash': 'off' } });
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config });
    const errors = problems.filter((problem) => problem.severity === 'error');
    expect(errors.length, errors.slice(0, 15).map(describeProblem).join('\n')).toBeLessThanOrEqual(MAX_LINT_ERRORS);
  });
});
