/**
 * Ajv errors as failure fields (docs/rule-language.md): one record per error, in
 * Ajv's order, with the offending field's path in docs/rule-language.md's syntax.
 */
import { appendPath } from '../paths.ts';

/** The failure fields a schema error contributes to a failure record. */
export interface SchemaFailure {
  fieldPath: string;
  /**
   * The value at fieldPath; null when missing, and when the error is at the
   * payload root (fieldPath `""`: docs/rule-language.md has no actualValue when there
   * is no fieldPath, and the whole payload in every such record only made
   * answers larger). The rule's message still names the value as `$value`.
   */
  actualValue: unknown;
  expectedValue: unknown;
  message: string;
}

/** Keywords whose error names a missing property (`params.missingProperty`). */
const MISSING_PROPERTY_KEYWORDS = new Set(['required', 'dependentRequired', 'dependencies']);

/**
 * Params that carry "the keyword's limit", in the order they are looked for.
 * `multipleOf` is the limit of its keyword as much as `limit` is of `maximum`.
 */
const EXPECTED_PARAMS = ['limit', 'allowedValues', 'allowedValue', 'type', 'pattern', 'format', 'multipleOf'];

/**
 * At most this many records per schema check. Ajv (with `allErrors`)
 * reports every subschema that fails, and each record carries the value it
 * failed on: a schema applying many subschemas to one large string turned
 * a 300 KB request into thousands of copies of it (a 500 once the answer
 * passed V8's string limit). The first hundred say what is wrong.
 */
export const MAX_SCHEMA_FAILURES = 100;

/**
 * One record per Ajv error, in Ajv's order, the first MAX_SCHEMA_FAILURES. `basePath` is the rule's
 * fieldPath (already element-resolved, `""` for the payload root) and
 * `value` the value the schema was applied to.
 *
 * @example
 * schemaFailures(validate.errors, 'applicant', applicant);
 * // [{ fieldPath: 'applicant.age', actualValue: 15, expectedValue: 18, message: 'must be >= 18' }]
 */
export function schemaFailures(errors: unknown[], basePath: string, value: unknown): SchemaFailure[] {
  const count = Math.min(errors.length, MAX_SCHEMA_FAILURES);
  const failures = new Array<SchemaFailure>(count);
  for (let i = 0; i < count; i++) {
    const error = errors[i];
    failures[i] = failureOf(isRecord(error) ? error : {}, basePath, value);
  }
  return failures;
}

function failureOf(error: Record<string, unknown>, basePath: string, root: unknown): SchemaFailure {
  let fieldPath = basePath;
  let current: unknown = root;
  for (const step of pointerSteps(error.instancePath)) {
    if (Array.isArray(current) && /^(0|[1-9][0-9]*)$/.test(step)) {
      fieldPath = appendPath(fieldPath, Number(step));
      current = current[Number(step)];
    } else {
      fieldPath = appendPath(fieldPath, step);
      current = isRecord(current) && Object.hasOwn(current, step) ? current[step] : undefined;
    }
  }
  const params = isRecord(error.params) ? error.params : {};
  const keyword = typeof error.keyword === 'string' ? error.keyword : '';
  if (MISSING_PROPERTY_KEYWORDS.has(keyword) && typeof params.missingProperty === 'string') {
    fieldPath = appendPath(fieldPath, params.missingProperty);
    current = undefined;
  }
  let expectedValue: unknown = null;
  for (const name of EXPECTED_PARAMS) {
    if (Object.hasOwn(params, name)) {
      expectedValue = params[name];
      break;
    }
  }
  return {
    fieldPath,
    actualValue: current === undefined || fieldPath === '' ? null : current,
    expectedValue: expectedValue === undefined ? null : expectedValue,
    message: typeof error.message === 'string' ? error.message : 'is invalid',
  };
}

/** The unescaped steps of a JSON Pointer (`/a~1b/0` is `a/b`, `0`). */
function pointerSteps(pointer: unknown): string[] {
  if (typeof pointer !== 'string' || pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((step) => step.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object';
}
