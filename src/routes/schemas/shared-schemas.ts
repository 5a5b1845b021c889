/**
 * The shared schemas: every response body (and the problem body) has an
 * `$id`, is added to the app with `addSchema`, and is referred to from
 * routes with `$ref: '<id>#'`. Fastify's serializers resolve the references
 * (the code fast-json-stringify generates is the same as for the schemas
 * written inline), and @fastify/swagger turns each into a component of the
 * OpenAPI document, so clients get named types.
 */
import type { FastifyInstance } from 'fastify';
import { apiKeySchemas } from './api-key-schemas.ts';
import { auditSchemas } from './audit-schemas.ts';
import { contextFileSchemas } from './context-file-schemas.ts';
import { contextSchemas } from './context-schemas.ts';
import { contextTestSchemas } from './context-test-schemas.ts';
import { healthStatusSchema } from './health-schemas.ts';
import { historySchemas } from './history-schemas.ts';
import { impactSchemas } from './impact-schemas.ts';
import { fieldErrorSchema, problemSchema } from './problem-schemas.ts';
import { payloadSchemaSchemas } from './payload-schema-schemas.ts';
import { resultSchemas } from './result-schemas.ts';
import { ruleCheckSchemas } from './rule-check-schemas.ts';
import { ruleTestSchemas } from './rule-test-schemas.ts';
import { ruleSchemas } from './rule-schemas.ts';
import { tenantSchemas } from './tenant-schemas.ts';
import { traceSchemas } from './trace-schemas.ts';

/** Every shared schema, in the order the document lists its components. */
export const SHARED_SCHEMAS = [
  ...resultSchemas,
  ...ruleSchemas,
  ...ruleCheckSchemas,
  ...traceSchemas,
  ...ruleTestSchemas,
  ...contextSchemas,
  ...contextTestSchemas,
  ...historySchemas,
  ...contextFileSchemas,
  ...impactSchemas,
  ...payloadSchemaSchemas,
  ...apiKeySchemas,
  ...tenantSchemas,
  ...auditSchemas,
  healthStatusSchema,
  problemSchema,
  fieldErrorSchema,
] as const;

/** The `$id` of a shared schema. */
export type SharedSchemaId = (typeof SHARED_SCHEMAS)[number]['$id'];

/**
 * The shared schemas by `$id`: the `schema` option of a serializer compiled
 * outside Fastify (the validation fast lane), so its `$ref`s resolve as the
 * route's do.
 */
export const SHARED_SCHEMAS_BY_ID: Readonly<Record<SharedSchemaId, object>> = Object.fromEntries(
  SHARED_SCHEMAS.map((schema) => [schema.$id, schema]),
) as Record<SharedSchemaId, object>;

/**
 * A reference to a shared schema, for route schemas.
 *
 * @example
 * app.get('/rules/:id', { schema: { response: { 200: sharedRef('Rule') } } }, handler);
 */
export function sharedRef<Id extends SharedSchemaId>(id: Id): { readonly $ref: `${Id}#` } {
  return { $ref: `${id}#` };
}

/**
 * Adds every shared schema to the app. Call before any route that refers
 * to one.
 *
 * @example
 * registerSharedSchemas(app);
 */
export function registerSharedSchemas(app: FastifyInstance): void {
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
}
