import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentImportGraph, specifiersOf } from '../support/import-graph.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('the modules `outpost agent` loads', () => {
  const agent = agentImportGraph(ROOT);

  // On Node.js 24 an import of node:http loads Node.js's bundled undici (src/node-http.ts says why).
  it('take node:http from src/node-http.ts, never by import', () => {
    expect(agent.files).toContain(resolve(ROOT, 'src/node-http.ts'));
    const importers = [...agent.files].filter((file) => specifiersOf(file).some((specifier) => /^(node:)?http$/.test(specifier)));
    expect(importers.map((file) => file.slice(ROOT.length + 1))).toEqual([]);
  });
});
