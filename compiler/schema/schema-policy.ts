/**
 * What a tenant schema must satisfy before Ajv sees it (docs/rule-language.md).
 *
 * Two walks, both iterative so that no input can overflow the stack:
 * - `measureSchema` over every JSON value: depth (TOO_DEEP), JSON size in
 *   UTF-8 bytes (TOO_LONG), and no `__proto__` key anywhere (Ajv silently
 *   drops `properties.__proto__`, so such a rule would never apply).
 * - `checkSchemaKeywords` over schema positions only (it knows which
 *   keywords hold subschemas, so `{"const": {"$id": 1}}` is data, not a
 *   schema): no `$id`, no `$data`, only local `$ref`/`$dynamicRef`, `$schema`
 *   only at the root and only draft 2020-12, `uniqueItems` only with a small
 *   `maxItems`, and every `pattern`/`patternProperties` through the regex
 *   policy.
 *
 * Names of Object.prototype members (`required: ["toString"]`) are allowed:
 * with `ownProperties: true` Ajv checks own properties for `required`,
 * `properties` and `dependentRequired` (see the schema tests).
 */
import type { CompilerLimits } from '../types.ts';
import { compilePattern } from '../regex/index.ts';
import { MAX_FIELD_PATTERN_WEIGHT, type PatternWeights } from '../regex/pattern-size.ts';

/** A policy refusal, in the codes of `compileSchema`. */
export interface PolicyViolation {
  code: 'INVALID_SCHEMA' | 'UNSAFE_PATTERN' | 'TOO_LONG' | 'TOO_DEEP';
  message: string;
}

/** The only `$schema` accepted. */
export const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/**
 * `uniqueItems` compares items pairwise when they are objects or arrays:
 * quadratic in the array length, so the array length must be bounded.
 */
export const MAX_UNIQUE_ITEMS = 1000;

/** Keywords whose value is one schema. */
const SCHEMA_KEYWORDS = new Set([
  'additionalProperties', 'propertyNames', 'items', 'additionalItems', 'contains', 'not', 'if', 'then',
  'else', 'unevaluatedItems', 'unevaluatedProperties', 'contentSchema',
]);
/** Keywords whose value is an array of schemas. */
const SCHEMA_ARRAY_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

const NAME_OR_DATA_KEYWORDS = new Set(['dependencies', 'dependentRequired', 'const', 'enum', 'default', 'examples']);

/**
 * Depth, size and `__proto__` checks over the whole value. Returns the JSON
 * text (for the deep copy) or the violation.
 */
export function measureSchema(
  schema: unknown,
  limits: Pick<CompilerLimits, 'maxSchemaBytes' | 'maxSchemaDepth'>,
): { ok: true; json: string } | { ok: false; violation: PolicyViolation } {
  if (typeof schema !== 'boolean' && !isPlainObject(schema)) {
    return refuse('INVALID_SCHEMA', 'a schema must be a JSON object or a boolean');
  }
  // The root is level 1; each nested object or array adds one. Checked
  // before JSON.stringify, which recurses and would overflow on deep input.
  const stack: { value: unknown; depth: number; pointer: string }[] = [{ value: schema, depth: 1, pointer: '#' }];
  while (stack.length > 0) {
    const { value, depth, pointer } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth > limits.maxSchemaDepth) {
      return refuse('TOO_DEEP', `the schema is nested deeper than ${limits.maxSchemaDepth} levels (at ${pointer})`);
    }
    if (Array.isArray(value)) {
      value.forEach((item, index) => stack.push({ value: item, depth: depth + 1, pointer: `${pointer}/${index}` }));
      continue;
    }
    for (const key of Object.keys(value)) {
      if (key === '__proto__') return refuse('INVALID_SCHEMA', `"__proto__" is not allowed as a key (at ${pointer})`);
      stack.push({
        value: (value as Record<string, unknown>)[key],
        depth: depth + 1,
        pointer: `${pointer}/${escapePointer(key)}`,
      });
    }
  }
  let json: string;
  try {
    json = JSON.stringify(schema);
  } catch {
    return refuse('INVALID_SCHEMA', 'the schema is not JSON');
  }
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > limits.maxSchemaBytes) {
    return refuse('TOO_LONG', `the schema is ${bytes} bytes of JSON; the limit is ${limits.maxSchemaBytes}`);
  }
  return { ok: true, json };
}

/**
 * Keyword checks over the schema positions of an already measured, plain
 * JSON schema. Values of the wrong type are left to Ajv's meta-schema check.
 */
export function checkSchemaKeywords(
  schema: unknown,
  limits: Pick<CompilerLimits, 'maxPatternLength'>,
  /** Receives every pattern that passed the policy, with its weight; a schema's may weigh MAX_FIELD_PATTERN_WEIGHT. */
  patterns?: PatternWeights,
): PolicyViolation | undefined {
  return visitSchemaPositions(schema, (node, pointer) => checkKeywords(node, pointer, limits, patterns));
}

/**
 * Calls `visit` on every object at a schema position (the root and what
 * the keywords that hold subschemas hold), with its JSON Pointer (`#`,
 * `#/properties/a`), until it returns something; returns that. Iterative:
 * no input can overflow the stack.
 *
 * @example
 * visitSchemaPositions({ properties: { a: { minLenght: 1 } } }, (node, at) => ('minLenght' in node ? at : undefined));
 * // '#/properties/a'
 */
export function visitSchemaPositions<T>(
  schema: unknown,
  visit: (node: Record<string, unknown>, pointer: string) => T | undefined,
): T | undefined {
  const stack: { schema: unknown; pointer: string }[] = [{ schema, pointer: '#' }];
  while (stack.length > 0) {
    const { schema: node, pointer } = stack.pop()!;
    if (!isPlainObject(node)) continue;
    const found = visit(node, pointer);
    if (found !== undefined) return found;
    for (const [keyword, value] of Object.entries(node)) {
      const at = `${pointer}/${escapePointer(keyword)}`;
      if (SCHEMA_KEYWORDS.has(keyword)) {
        if (Array.isArray(value)) value.forEach((item, i) => stack.push({ schema: item, pointer: `${at}/${i}` }));
        else stack.push({ schema: value, pointer: at });
      } else if (SCHEMA_ARRAY_KEYWORDS.has(keyword) && Array.isArray(value)) {
        value.forEach((item, i) => stack.push({ schema: item, pointer: `${at}/${i}` }));
      } else if ((SCHEMA_MAP_KEYWORDS.has(keyword) || keyword === 'dependencies') && isPlainObject(value)) {
        for (const [name, item] of Object.entries(value)) {
          // `dependencies` maps to a schema or, like dependentRequired, to names.
          if (!Array.isArray(item)) stack.push({ schema: item, pointer: `${at}/${escapePointer(name)}` });
        }
      }
    }
  }
  return undefined;
}

function checkKeywords(
  node: Record<string, unknown>,
  pointer: string,
  limits: Pick<CompilerLimits, 'maxPatternLength'>,
  patterns: PatternWeights | undefined,
): PolicyViolation | undefined {
  if (Object.hasOwn(node, '$id')) return refuse('INVALID_SCHEMA', `"$id" is not allowed (at ${pointer})`).violation;
  if (Object.hasOwn(node, '$data')) return refuse('INVALID_SCHEMA', `"$data" is not allowed (at ${pointer})`).violation;
  for (const [keyword, value] of Object.entries(node)) {
    if (isPlainObject(value) && Object.hasOwn(value, '$data') && !holdsNamesOrData(keyword)) {
      return refuse('INVALID_SCHEMA', `"$data" references are not allowed (at ${pointer}/${escapePointer(keyword)})`)
        .violation;
    }
  }
  if (Object.hasOwn(node, '$schema') && (pointer !== '#' || node.$schema !== DRAFT_2020_12)) {
    return refuse(
      'INVALID_SCHEMA',
      pointer === '#'
        ? `"$schema" must be "${DRAFT_2020_12}" or absent`
        : `"$schema" is only allowed at the root of the schema (at ${pointer})`,
    ).violation;
  }
  for (const keyword of ['$ref', '$dynamicRef']) {
    const ref = node[keyword];
    if (typeof ref === 'string' && !ref.startsWith('#')) {
      return refuse(
        'INVALID_SCHEMA',
        `only local references starting with "#" are allowed: ${keyword} ${JSON.stringify(ref)} (at ${pointer})`,
      ).violation;
    }
  }
  if (node.uniqueItems === true && !(typeof node.maxItems === 'number' && node.maxItems <= MAX_UNIQUE_ITEMS)) {
    return refuse(
      'INVALID_SCHEMA',
      `"uniqueItems" needs "maxItems" of at most ${MAX_UNIQUE_ITEMS} beside it (at ${pointer})`,
    ).violation;
  }
  for (const names of namesIn(node)) {
    if (names.includes('__proto__')) {
      return refuse('INVALID_SCHEMA', `"__proto__" is not allowed as a property name (at ${pointer})`).violation;
    }
  }
  if (typeof node.pattern === 'string') {
    const violation = checkPattern(node.pattern, `${pointer}/pattern`, limits, patterns);
    if (violation !== undefined) return violation;
  }
  if (isPlainObject(node.patternProperties)) {
    for (const pattern of Object.keys(node.patternProperties)) {
      const violation = checkPattern(pattern, `${pointer}/patternProperties`, limits, patterns);
      if (violation !== undefined) return violation;
    }
  }
  return undefined;
}

function checkPattern(
  pattern: string,
  pointer: string,
  limits: Pick<CompilerLimits, 'maxPatternLength'>,
  patterns: PatternWeights | undefined,
): PolicyViolation | undefined {
  if (patterns?.has(pattern)) return undefined;
  const result = compilePattern(pattern, limits);
  if (result.ok) {
    if (patterns === undefined || patterns.add(pattern, result.weight) <= MAX_FIELD_PATTERN_WEIGHT) return undefined;
    return {
      code: 'TOO_LONG',
      message: `the schema's patterns weigh more than ${MAX_FIELD_PATTERN_WEIGHT} together (at ${pointer}) (a pattern weighs the steps of its program on the linear-time engine, a tenth of them on the native engine)`,
    };
  }
  const code = result.code === 'INVALID_PATTERN' ? 'INVALID_SCHEMA' : result.code;
  return { code, message: `pattern ${describePattern(pattern)} (at ${pointer}): ${result.message}` };
}

/** The pattern as quoted in messages; a very long one is cut short. */
function describePattern(pattern: string): string {
  return JSON.stringify(pattern.length > 80 ? `${pattern.slice(0, 77)}...` : pattern);
}

/** Property-name lists of `required`, `dependentRequired` and array-valued `dependencies`. */
function namesIn(node: Record<string, unknown>): unknown[][] {
  const lists: unknown[][] = [];
  if (Array.isArray(node.required)) lists.push(node.required);
  for (const keyword of ['dependentRequired', 'dependencies']) {
    const map = node[keyword];
    if (isPlainObject(map)) for (const names of Object.values(map)) if (Array.isArray(names)) lists.push(names);
  }
  return lists;
}

/** Keywords whose object value is keyed by property names, or is payload-like data. */
function holdsNamesOrData(keyword: string): boolean {
  return SCHEMA_MAP_KEYWORDS.has(keyword) || NAME_OR_DATA_KEYWORDS.has(keyword);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function refuse(code: PolicyViolation['code'], message: string): { ok: false; violation: PolicyViolation } {
  return { ok: false, violation: { code, message } };
}
