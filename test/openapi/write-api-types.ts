/**
 * `npm run openapi:types`: writes the TypeScript types of the OpenAPI
 * document to src/openapi/generated/api-types.ts.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { API_TYPES_FILE, defaultDocument, generateApiTypes } from './api-types.ts';

writeFileSync(API_TYPES_FILE, await generateApiTypes(await defaultDocument()));
console.log(`wrote ${fileURLToPath(API_TYPES_FILE)}`);
