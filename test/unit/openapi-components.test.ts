import { describe, expect, it } from 'vitest';
import { declareTags, hoistNamedSchemas } from '../../src/service/openapi-components.js';
import { liftParameterSerialization } from '../../src/service/openapi-parameters.js';

const body = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const point = { title: 'Point', type: 'object', properties: { x: { type: 'number' } } };

describe('hoistNamedSchemas', () => {
  it('moves a titled schema into components, innermost first, and refers to it everywhere it occurs', () => {
    const line = { title: 'Line', type: 'object', properties: { from: point, to: { ...point } } };
    const document = {
      paths: {
        '/lines': { get: { responses: { 200: body({ type: 'array', items: line }) } } },
        '/points': { post: { requestBody: body(point), responses: { 201: body(point) } } },
      },
    };
    const hoisted = hoistNamedSchemas(document) as any;
    expect(hoisted.components.schemas.Point).toEqual(point);
    expect(hoisted.components.schemas.Line.properties).toEqual({
      from: { $ref: '#/components/schemas/Point' },
      to: { $ref: '#/components/schemas/Point' },
    });
    expect(hoisted.paths['/lines'].get.responses[200].content['application/json'].schema.items).toEqual({ $ref: '#/components/schemas/Line' });
    expect(hoisted.paths['/points'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Point' });
  });

  it('leaves a schema inline when its title names a different schema, so no route changes meaning', () => {
    const other = { ...point, properties: { y: { type: 'string' } } };
    const document = { paths: { '/a': { get: { responses: { 200: body(point) } } }, '/b': { get: { responses: { 200: body(other) } } } } };
    const hoisted = hoistNamedSchemas(document) as any;
    expect(hoisted.paths['/a'].get.responses[200].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Point' });
    expect(hoisted.paths['/b'].get.responses[200].content['application/json'].schema).toEqual(other);
  });

  it('does not look into examples or defaults, nor treat a property named title as a name', () => {
    const schema = {
      type: 'object',
      properties: { title: { type: 'string' } },
      default: { title: 'Point', type: 'object' },
      examples: [{ title: 'Point', type: 'object' }],
    };
    const hoisted = hoistNamedSchemas({ paths: { '/c': { get: { responses: { 200: body(schema) } } } } }) as any;
    expect(hoisted.paths['/c'].get.responses[200].content['application/json'].schema).toEqual(schema);
    expect(hoisted.components.schemas).toEqual({});
  });
});

describe('declareTags and liftParameterSerialization', () => {
  it('declares each tag operations use once, sorted', () => {
    const document = { paths: { '/a': { get: { tags: ['Checks'] }, post: { tags: ['Alerts', 'Checks'] } } } };
    expect(declareTags(document as any).tags).toEqual([{ name: 'Alerts' }, { name: 'Checks' }]);
  });

  it('moves style and explode from a parameter’s schema onto the parameter', () => {
    const document = {
      paths: { '/a': { get: { parameters: [{ name: 'metrics', in: 'query', schema: { type: 'array', style: 'form', explode: false } }] } } },
    };
    expect(liftParameterSerialization(document).paths['/a'].get.parameters[0]).toEqual({
      name: 'metrics',
      in: 'query',
      style: 'form',
      explode: false,
      schema: { type: 'array' },
    });
  });
});
