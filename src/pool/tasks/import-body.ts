/**
 * An import's body read on a management thread (POST /contexts/{c}/import):
 * a rules file of thousands of rules is a megabyte of JSON, and parsing it,
 * screening it and checking it against the route's schema held the event
 * loop for tens of milliseconds per request. The route keeps the raw bytes
 * (json-body-parser.ts `RawJsonBody`, still bounded by the body limit) and
 * the thread does here, in the same order and with the same problems, what
 * the main thread did for every other JSON body: UTF-8, JSON, poisoning
 * keys (parseJsonBody), text the database cannot store (the stored routes'
 * preValidation hook), then the body schema (Fastify's validation, with the
 * same Ajv options and shared schemas).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { PROBLEMS, ProblemError } from '../../errors.ts';
import { decodeUtf8Body, parseJsonBody } from '../../http/json-body-parser.ts';
import { schemaErrorsToFieldErrors } from '../../http/schema-errors.ts';
import { assertStorableText } from '../../http/storable-text.ts';
import type { IncomingRulesFile } from '../../rules/rules-file.ts';
import { importBodySchema } from '../../routes/schemas/context-file-schemas.ts';
import { SHARED_SCHEMAS } from '../../routes/schemas/shared-schemas.ts';

// The plugin's CommonJS export is the function itself (as compiler/schema/shared-ajv.ts reads it).
const addFormats = addFormatsPlugin as unknown as typeof addFormatsPlugin.default;

// Compiled once per thread, when the first import comes.
let validateImportBody: ValidateFunction<IncomingRulesFile> | undefined;

/** The route's body validator: Fastify's options for this app (src/app.ts `ajv.customOptions`), formats and shared schemas as Fastify has them. */
function importBodyValidator(): ValidateFunction<IncomingRulesFile> {
  if (validateImportBody === undefined) {
    const ajv = new Ajv({ removeAdditional: false, coerceTypes: false, allErrors: true, useDefaults: false, addUsedSchema: false });
    addFormats(ajv);
    for (const schema of SHARED_SCHEMAS) ajv.addSchema(schema);
    validateImportBody = ajv.compile<IncomingRulesFile>(importBodySchema);
  }
  return validateImportBody;
}

/**
 * The rules file a body holds; a ProblemError 400 naming what is wrong and where, as for any JSON body.
 *
 * @example
 * readImportBody(new TextEncoder().encode('{"format":"rules/v1","rules":[]}')); // { format: 'rules/v1', rules: [] }
 */
export function readImportBody(bytes: Uint8Array): IncomingRulesFile {
  const body: unknown = parseJsonBody(decodeUtf8Body(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)));
  assertStorableText(body);
  const validate = importBodyValidator();
  if (!validate(body)) throw new ProblemError(PROBLEMS.invalidBody(schemaErrorsToFieldErrors(validate.errors ?? [])));
  return body;
}
