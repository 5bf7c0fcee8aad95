// The operator API's types for the console (console/src/operator-schema.ts),
// generated from the operator OpenAPI document as merx-client's are from the
// public one, so a call in the console cannot drift from its route. `npm run
// typecheck` writes them first; the console's build needs none (types erase).
import fs from 'node:fs';
import path from 'node:path';
import { operatorOpenApi } from '../../src/app.ts';
import { openApiTypes } from '../../packages/client/scripts/openapi-types.ts';

const file = path.join(import.meta.dirname, '../src/operator-schema.ts');
const header = '// Generated from the Merx operator OpenAPI document by console/scripts/operator-schema.ts. Do not edit.\n';
fs.writeFileSync(file, header + (await openApiTypes(operatorOpenApi('http://localhost:3000'))));
