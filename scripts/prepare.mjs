// npm's prepare step (npm install / npm ci): builds the operator console
// (console/dist, served at /admin). Plain JavaScript: with `npm ci --omit=dev`
// this runs on the machine's own Node, the build tools are absent, and it says
// what is skipped instead of failing the install. (merx-client builds when it
// is packed, and `npm run typecheck` generates its types first.)
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const has = (/** @type {string} */ relative) => existsSync(path.join(root, relative));
const run = (/** @type {string[]} */ args) => execFileSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
const major = Number(process.versions.node.split('.')[0]);

if (!has('node_modules/vite') || major < 22) {
  console.log('merx: dev dependencies not installed, so the operator console is not built (/admin will say so).');
} else {
  run([path.join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'console/vite.config.ts', '--logLevel', 'warn']);
  console.log('merx: operator console built into console/dist');
}
