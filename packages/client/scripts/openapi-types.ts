// An OpenAPI document -> its TypeScript types (openapi-typescript): `paths`,
// `operations` and the named schemas. This package's build writes the public
// API's; the operator console's typecheck writes the operator API's with it
// (console/scripts/operator-schema.ts), so both are generated the same way.
import openapiTS, { astToString } from 'openapi-typescript';

export async function openApiTypes(document: object): Promise<string> {
  return astToString(await openapiTS(document as never, { alphabetize: false, exportType: false }));
}
