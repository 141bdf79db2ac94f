/**
 * node:http, required rather than imported. On Node.js 24 an `import` of a
 * built-in module builds its ESM view by reading every export, and
 * node:http's WebSocket, CloseEvent and MessageEvent are getters that load
 * Node.js's own bundled undici, which the agent never uses: 14 MB of
 * resident memory in a bare node. Measured in docs/performance.md; a unit
 * test keeps the agent's modules from importing node:http any other way.
 */
import type * as NodeHttp from 'node:http';
import { createRequire } from 'node:module';

const http = createRequire(import.meta.url)('node:http') as typeof NodeHttp;

export const { createServer, request } = http;
export type { ClientRequest, IncomingHttpHeaders, Server } from 'node:http';
