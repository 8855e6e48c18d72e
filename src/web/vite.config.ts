import path from 'node:path';
import { defineConfig } from 'vite';

/** Where the service finds the built UI (src/server/web/web-directory.ts looks for it there). */
export const webOutDir = path.resolve(import.meta.dirname, '../../dist/web');

// Everything under /ui/: the API owns the other top-level paths (/assets, /experiments, …), so no UI file or
// client route can ever shadow one of them.
export default defineConfig({
  root: import.meta.dirname,
  base: '/ui/',
  // esbuild compiles the JSX; no Babel plugin is needed for React's automatic runtime.
  // keepNames: the client's errors name themselves after their class (ValidationError, …), which minifying
  // would otherwise turn into two letters on screen.
  esbuild: { jsx: 'automatic', keepNames: true },
  logLevel: 'warn',
  build: {
    outDir: webOutDir,
    emptyOutDir: true,
    // The polyfill is injected as an inline script, which the Content-Security-Policy refuses.
    modulePreload: { polyfill: false },
    target: 'es2022',
    // The chunk graph (.vite/manifest.json), read by the benchmarks to size what a first look loads.
    manifest: true,
    chunkSizeWarningLimit: 400,
    rollupOptions: {
      // React Server Components' "use client" markers mean nothing in a client-only bundle.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
      // Each page is its own chunk (app.tsx): the small modules pages share are merged into bigger chunks
      // rather than each fetched on its own, since a first look waits for every chunk its page imports.
      output: { experimentalMinChunkSize: 20_000 },
    },
  },
});
