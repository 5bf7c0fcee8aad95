// Builds the package from the service's own operation registry, so the client
// can never drift from the API: the OpenAPI document -> TypeScript types
// (openapi-typescript) -> JavaScript and declarations in dist/ (tsc).
// Runs on the Node 24 the repository pins (npm puts it first on PATH).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { publicOpenApi } from '../../../src/app.ts';
import { openApiTypes } from './openapi-types.ts';

const root = path.join(import.meta.dirname, '..');
const dist = path.join(root, 'dist');

const document = publicOpenApi('http://localhost:3000');
const types = await openApiTypes(document);
const header = '// Generated from the Merx OpenAPI document by scripts/build.ts. Do not edit.\n';
fs.writeFileSync(path.join(root, 'src/schema.ts'), header + types);

fs.rmSync(dist, { recursive: true, force: true });
// Emit only: `npm run typecheck` checks these sources, and the package's tests check the emitted types from a customer's project.
execFileSync(path.join(root, 'node_modules/.bin/tsc'), ['-p', path.join(root, 'tsconfig.json'), '--noCheck'], { stdio: ['ignore', 2, 2] });
fs.writeFileSync(path.join(dist, 'openapi.json'), `${JSON.stringify(document, null, 2)}\n`);
process.stderr.write(`merx-client: built ${path.relative(process.cwd(), dist) || 'dist'} (${Object.keys(document.paths).length} paths)\n`);
