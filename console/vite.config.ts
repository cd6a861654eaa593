import { defineConfig } from 'vite';

// The console is served at /console (by npm start, and from S3 behind CloudFront in AWS); its
// build (dist/) is committed, so `npm start` needs no build step. `npm run console:build` remakes it.
export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', sourcemap: false, chunkSizeWarningLimit: 200 },
  server: { proxy: { '/v1': 'http://localhost:3000', '/platform': 'http://localhost:3000' } },
});
