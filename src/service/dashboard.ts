/**
 * The web dashboard: the static files `npm run build` bundles from web/ into
 * dist/dashboard (Vite), served at `/` (index.html) and `/assets/…` (hashed
 * names, cached for a year). Read once at start and kept in memory, gzipped
 * ahead for clients that take it. The page talks only to this service's API
 * with the key the user types in; nothing here needs one.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { sendErrorA } from './http-errors.js';

/**
 * Only this origin, for everything: scripts, styles, images, media and API
 * calls. Artifacts (screenshots, videos) come from /v1/artifacts on the same
 * origin; the page is never framed.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "media-src 'self'",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.svg', '.json', '.map', '.txt']);
/** Vite names built assets `name-<hash>.ext`: their content never changes under a name. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

interface StaticFile {
  body: Buffer;
  gzipped: Buffer | undefined;
  contentType: string;
  cacheControl: string;
}

/** Where the built dashboard is: beside the compiled service (dist/), or the checkout's dist/ when run from src/. */
export function defaultDashboardDir(): string | undefined {
  const candidates = [new URL('../dashboard/', import.meta.url), new URL('../../dist/dashboard/', import.meta.url)];
  return candidates.map((url) => fileURLToPath(url)).find((dir) => existsSync(join(dir, 'index.html')));
}

function load(path: string, cacheControl: string): StaticFile {
  const body = readFileSync(path);
  const extension = extname(path).toLowerCase();
  const gzipped = COMPRESSIBLE.has(extension) && body.length > 1024 ? gzipSync(body, { level: 9 }) : undefined;
  return {
    body,
    gzipped: gzipped && gzipped.length < body.length ? gzipped : undefined,
    contentType: CONTENT_TYPES[extension] ?? 'application/octet-stream',
    cacheControl,
  };
}

/** Every regular file under `dir`, by its path relative to it with `/` separators. */
function walk(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const relative = `${prefix}${entry.name}`;
    if (entry.isDirectory()) return walk(join(dir, entry.name), `${relative}/`);
    return entry.isFile() ? [relative] : [];
  });
}

function send(request: FastifyRequest, reply: FastifyReply, file: StaticFile): FastifyReply {
  const gzip = file.gzipped !== undefined && /\bgzip\b/i.test(request.headers['accept-encoding'] ?? '');
  const body = gzip ? file.gzipped! : file.body;
  void reply
    .header('content-type', file.contentType)
    .header('cache-control', file.cacheControl)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('content-security-policy', DASHBOARD_CSP)
    .header('x-frame-options', 'DENY')
    .header('cross-origin-opener-policy', 'same-origin')
    .header('content-length', String(body.length));
  if (file.gzipped !== undefined) void reply.header('vary', 'accept-encoding');
  if (gzip) void reply.header('content-encoding', 'gzip');
  return reply.send(body);
}

/**
 * Registers `/`, `/index.html`, `/assets/*` and the files at the top of the
 * build (the icon). Without a build (a checkout where `npm run build` has not
 * run) `/` says how to make one; the API is unaffected either way.
 */
export const dashboardRoutes =
  (dir: string | undefined = defaultDashboardDir()): FastifyPluginAsync =>
  async (app) => {
    const files = new Map<string, StaticFile>();
    if (dir !== undefined && existsSync(join(dir, 'index.html'))) {
      for (const relative of walk(dir)) {
        const path = join(dir, relative);
        if (!statSync(path).isFile()) continue;
        // index.html names the current assets: always asked again (it is small), never kept stale.
        const cacheControl = relative.startsWith('assets/') ? IMMUTABLE : 'no-cache';
        files.set(relative, load(path, cacheControl));
      }
    }
    const index = files.get('index.html');
    const root = async (request: FastifyRequest, reply: FastifyReply) => {
      if (index) return send(request, reply, index);
      return reply
        .code(503)
        .header('content-type', 'text/plain; charset=utf-8')
        .header('cache-control', 'no-store')
        .send('The dashboard is not built: run `npm run build` (it bundles web/ into dist/dashboard).\n');
    };
    app.get('/', { schema: { hide: true } }, root);
    app.get('/index.html', { schema: { hide: true } }, root);
    app.get<{ Params: { '*': string } }>('/assets/*', { schema: { hide: true } }, async (request, reply) => {
      const file = files.get(`assets/${request.params['*']}`);
      return file ? send(request, reply, file) : sendErrorA(reply, 404, `Route ${request.method} ${request.url} not found`);
    });
    // Top-level files of the build other than index.html (favicon.svg): a fixed list, nothing from the path itself.
    for (const [relative, file] of files) {
      if (relative.includes('/') || relative === 'index.html') continue;
      app.get(`/${relative}`, { schema: { hide: true } }, async (request, reply) => send(request, reply, file));
    }
  };
