// The operator console: a React single-page app served by the service at /admin
// (src/operator/console.ts). Built at install (npm's prepare) into console/dist.
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  root: import.meta.dirname,
  base: '/admin/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1000 },
  // `npm run console:dev`: the API calls go to a service on :3000.
  server: { proxy: { '/admin/api': 'http://localhost:3000', '/api': 'http://localhost:3000' } },
});
