/**
 * The schema validation of a route whose body is kept as its bytes
 * (json-body-parser.ts `RawJsonBody`) and checked against the body schema
 * where it is read (a management thread): its params and query string are
 * validated here, as Fastify validates them elsewhere (the app's Ajv options,
 * src/app.ts), and its body schema is left to that reader; it stays in the
 * route's schema, which the OpenAPI document describes.
 */
import { Ajv } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * A route's `validatorCompiler` that passes the body through and validates the other parts.
 *
 * @example
 * app.post('/contexts/:context/import', { validatorCompiler: validatorSkippingBody(), schema }, handler);
 */
export function validatorSkippingBody(): FastifySchemaCompiler<object> {
  const ajv = new Ajv({ removeAdditional: false, coerceTypes: false, allErrors: true, useDefaults: false, addUsedSchema: false });
  return ({ schema, httpPart }) => (httpPart === 'body' ? () => true : ajv.compile(schema));
}
