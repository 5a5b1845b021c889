/**
 * `npm run openapi:types`: writes the TypeScript types of the OpenAPI
 * document to src/openapi/generated/api-types.ts and to the typed client
 * package's copy, clients/typescript/src/generated/api-types.ts.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { API_TYPES_FILE, CLIENT_API_TYPES_FILE, defaultDocument, generateApiTypes } from './api-types.ts';

const types = await generateApiTypes(await defaultDocument());
for (const file of [API_TYPES_FILE, CLIENT_API_TYPES_FILE]) {
  writeFileSync(file, types);
  console.log(`wrote ${fileURLToPath(file)}`);
}
