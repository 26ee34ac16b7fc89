import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The dashboard is served by edge at /dashboard/ on the API's own origin (same-origin cookies,
// no CORS). The contract is read from its TypeScript source so the bundle carries only it.
export default defineConfig({
  base: '/dashboard/',
  plugins: [react()],
  resolve: {
    // `@gateway/contracts/<module>`: that module's source (browser-safe ones only for values).
    alias: [
      {
        find: /^@gateway\/contracts\/(.+)$/,
        replacement: fileURLToPath(new URL('../../packages/contracts/src/$1.ts', import.meta.url)),
      },
    ],
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No inline scripts or data: URLs in the output: the CSP allows scripts from 'self' only.
    assetsInlineLimit: 0,
    // No source maps in the served files: nothing to publish beyond what runs.
    sourcemap: false,
    chunkSizeWarningLimit: 1500,
  },
  server: { host: '127.0.0.1' },
  preview: { host: '127.0.0.1' },
});
