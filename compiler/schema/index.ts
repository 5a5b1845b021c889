/**
 * Schema rules (docs/rule-language.md): a tenant's JSON Schema (draft 2020-12)
 * checked against the schema policy, deep-copied, and compiled on the one
 * shared Ajv instance; Ajv's errors turned into failure fields.
 *
 * Pipeline: `measureSchema` (depth, size, `__proto__`) -> JSON copy ->
 * `checkSchemaKeywords` (`$id`, `$data`, remote refs, `$schema`,
 * `uniqueItems`, patterns through the regex policy) -> `schemaApplications`
 * (no reference cycle on one value, at most MAX_SCHEMA_APPLICATIONS
 * subschemas applied to any one value) -> Ajv (strict mode;
 * its refusals are INVALID_SCHEMA with its message and schema path).
 * Every refusal says where in the schema it is (`pointer`, schema-error-place.ts).
 */
import type { CompilerLimits } from '../types.ts';
import { MAX_SCHEMA_APPLICATIONS, schemaApplications } from './schema-expansion.ts';
import { checkSchemaKeywords, measureSchema } from './schema-policy.ts';
import { compileOnSharedAjv, withoutRootId } from './shared-ajv.ts';
import { placeSchemaError } from './schema-error-place.ts';
import { PatternWeights } from '../regex/pattern-size.ts';

export { MAX_SCHEMA_FAILURES, schemaFailures, type SchemaFailure } from './schema-failures.ts';
export { MAX_SCHEMA_APPLICATIONS, schemaApplications, type SchemaApplications } from './schema-expansion.ts';
export { createStandaloneAjv, withRootId } from './shared-ajv.ts';
export { DRAFT_2020_12, MAX_UNIQUE_ITEMS } from './schema-policy.ts';

/** A compiled schema: Ajv's validate function, with `errors` after a failed call. */
export interface SchemaValidator {
  (value: unknown): boolean;
  errors?: unknown[] | null;
  /** The schema Ajv compiled (set by Ajv); the standalone module compiles it again. */
  readonly schema?: unknown;
}

/** Why a schema was refused at save time. */
export interface SchemaCompileError {
  ok: false;
  code: 'INVALID_SCHEMA' | 'UNSAFE_PATTERN' | 'TOO_LONG' | 'TOO_DEEP';
  message: string;
  /** Where in the schema: a JSON Pointer without `#` (`/properties/street/minLenght`), '' for the schema as a whole. */
  pointer: string;
}

/**
 * Compiles a tenant schema under the policy of docs/rule-language.md. Never throws.
 *
 * @example
 * const result = compileSchema({ type: 'integer', minimum: 18 }, DEFAULT_LIMITS);
 * if (result.ok && !result.validate(15)) schemaFailures(result.validate.errors ?? [], 'age', 15);
 */
export function compileSchema(
  schema: unknown,
  limits: CompilerLimits,
): { ok: true; validate: SchemaValidator; patterns: PatternWeights } | SchemaCompileError {
  const compiled = compileUnplaced(schema, limits);
  if (compiled.ok) return compiled;
  return { ok: false, code: compiled.code, ...placeSchemaError(schema, compiled.message) };
}

function compileUnplaced(
  schema: unknown,
  limits: CompilerLimits,
): { ok: true; validate: SchemaValidator; patterns: PatternWeights } | Omit<SchemaCompileError, 'pointer'> {
  const measured = measureSchema(schema, limits);
  if (!measured.ok) return { ok: false, ...measured.violation };
  // Ajv keeps references into the schema it compiles; the tenant's object
  // must not be one of them.
  const copy = JSON.parse(measured.json) as object | boolean;
  const patterns = new PatternWeights();
  const violation = checkSchemaKeywords(copy, limits, patterns);
  if (violation !== undefined) return { ok: false, ...violation };
  const applications = schemaApplications(copy);
  if (!applications.ok) return { ok: false, code: 'INVALID_SCHEMA', message: applications.message };
  if (applications.count > MAX_SCHEMA_APPLICATIONS) {
    return {
      ok: false,
      code: 'INVALID_SCHEMA',
      message: `the schema can apply more than ${MAX_SCHEMA_APPLICATIONS} subschemas to one value (through $ref, allOf, anyOf, oneOf and the like), so one validation could take minutes; share less, or nest less`,
    };
  }
  try {
    return { ok: true, validate: compileOnSharedAjv(copy), patterns };
  } catch (error) {
    return { ok: false, code: 'INVALID_SCHEMA', message: ajvMessage(error) };
  }
}

function ajvMessage(error: unknown): string {
  // Ajv names schema locations after the id the schema was compiled under, which the tenant never wrote.
  const message = withoutRootId(error instanceof Error ? error.message : String(error));
  // Ajv's meta-schema errors read "schema is invalid: data/properties/a/maximum
  // must be number"; its "data" is the schema itself, so say so.
  if (!message.startsWith('schema is invalid: ')) return message;
  return message.replace(/(^schema is invalid: |, )data(?=[/ ])/g, '$1#');
}
