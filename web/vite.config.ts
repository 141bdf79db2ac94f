/**
 * Builds the dashboard (web/) into dist/dashboard, which the service serves at
 * `/` (src/service/dashboard.ts). `npm run build` runs it after tsc.
 */
import { defineConfig } from 'vite';

const here = (path: string) => decodeURIComponent(new URL(path, import.meta.url).pathname);

export default defineConfig({
  root: here('.'),
  base: '/',
  publicDir: here('public'),
  // The service's CSP allows this origin only: nothing inlined as data: URIs, no inline scripts.
  build: {
    outDir: here('../dist/dashboard'),
    emptyOutDir: true,
    assetsDir: 'assets',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
    reportCompressedSize: false,
  },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  resolve: { alias: { react: 'preact/compat', 'react-dom': 'preact/compat' } },
});
