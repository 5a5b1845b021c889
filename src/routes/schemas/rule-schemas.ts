/**
 * JSON Schemas of the rule resource (product.md section 2) for request
 * validation and response serialization. Request schemas are strict
 * (`additionalProperties: false`, no coercion in the app's ajv); response
 * schemas double as an output allow-list for fast-json-stringify, so a field
 * that is not listed here never leaves the server.
 */

/** Context names: 1-100 chars of `[A-Za-z0-9_.:-]`, starting with a letter or digit. */
export const CONTEXT_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$';
/** Rule codes: 1-64 chars of `[A-Za-z0-9_.-]`. */
export const CODE_PATTERN = '^[A-Za-z0-9_.-]{1,64}$';

/** Compiled once for the checks handlers make outside JSON Schema (URL params). */
export const CONTEXT_REGEX = new RegExp(CONTEXT_PATTERN);

/** At most 20 tags per rule, each 1-50 chars (product.md 2). */
export const MAX_TAGS = 20;
export const MAX_TAG_LENGTH = 50;

/**
 * Priorities are stored and compared as JavaScript numbers; 32-bit bounds
 * keep them exact everywhere (JSON, PostgreSQL, generated code).
 */
const INT32 = { minimum: -2147483648, maximum: 2147483647 } as const;

/** The editable content of a rule: what POST, PUT and POST /rules/test accept. */
const contentProperties = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  description: { type: 'string', maxLength: 2000 },
  severity: { type: 'string', enum: ['Error', 'Warning', 'Info'] },
  errorCode: { type: 'string', maxLength: 100 },
  fieldPath: { type: 'string' },
  required: { type: 'boolean' },
  // Length, grammar and position errors come from the compiler (checkRule),
  // so that they name line and column; the schema only checks the type.
  expression: { type: 'string' },
  schema: { type: 'object' },
  when: { type: 'string' },
  forEach: { type: 'string' },
  message: { type: 'string', maxLength: 2000 },
  expectedValue: {},
  priority: { type: 'integer', ...INT32 },
  enabled: { type: 'boolean' },
  tags: {
    type: 'array',
    maxItems: MAX_TAGS,
    items: { type: 'string', minLength: 1, maxLength: MAX_TAG_LENGTH },
  },
} as const;

/**
 * Fields the server manages. PUT (and the rule of POST /rules/test) accept
 * and ignore them, so a rule fetched with GET can be edited and sent back
 * as is; POST /rules refuses them like any unknown field.
 */
const serverManagedProperties = {
  id: {},
  status: {},
  publishedVersion: {},
  createdAt: {},
  updatedAt: {},
  publishedAt: {},
} as const;

/** POST /rules. */
export const createRuleBodySchema = {
  type: 'object',
  required: ['context', 'code', 'name'],
  additionalProperties: false,
  properties: {
    context: { type: 'string', pattern: CONTEXT_PATTERN },
    code: { type: 'string', pattern: CODE_PATTERN },
    ...contentProperties,
  },
} as const;

/** PUT /rules/{id}: the content plus the version it was based on. */
export const updateRuleBodySchema = {
  type: 'object',
  required: ['name', 'version'],
  additionalProperties: false,
  properties: {
    context: { type: 'string' },
    code: { type: 'string' },
    ...contentProperties,
    version: { type: 'integer', minimum: 1 },
    ...serverManagedProperties,
  },
} as const;

/** The `rule` of POST /rules/test: a create body whose context is optional. */
export const testRuleSchema = {
  type: 'object',
  required: ['code', 'name'],
  additionalProperties: false,
  properties: {
    context: { type: 'string', pattern: CONTEXT_PATTERN },
    code: { type: 'string', pattern: CODE_PATTERN },
    ...contentProperties,
    version: {},
    ...serverManagedProperties,
  },
} as const;

/** GET /rules query. Query values are strings: the app's ajv never coerces. */
export const listRulesQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    context: { type: 'string', pattern: CONTEXT_PATTERN },
    status: { type: 'string', enum: ['draft', 'published', 'archived', 'all'] },
    tag: { type: 'string', minLength: 1, maxLength: MAX_TAG_LENGTH },
    limit: { type: 'string', pattern: '^[0-9]{1,9}$' },
    cursor: { type: 'string', minLength: 1, maxLength: 512, pattern: '^[A-Za-z0-9_-]+$' },
  },
} as const;

/** Response properties of the content, in the order of product.md's table. */
const contentResponseProperties = {
  name: { type: 'string' },
  description: { type: 'string' },
  severity: { type: 'string' },
  errorCode: { type: 'string' },
  fieldPath: { type: 'string' },
  required: { type: 'boolean' },
  expression: { type: 'string' },
  schema: {},
  when: { type: 'string' },
  forEach: { type: 'string' },
  message: { type: 'string' },
  expectedValue: {},
  priority: { type: 'integer' },
  enabled: { type: 'boolean' },
  tags: { type: 'array', items: { type: 'string' } },
} as const;

const nullableString = { type: ['string', 'null'] } as const;

/** The rule resource as every rule route answers it, keys in the order of product.md's table. */
export const ruleResponseSchema = {
  type: 'object',
  // No `required` list: fast-json-stringify writes required keys first,
  // and the resource reads best in the order of product.md's table.
  properties: {
    id: { type: 'string' },
    context: { type: 'string' },
    code: { type: 'string' },
    ...contentResponseProperties,
    status: { type: 'string' },
    version: { type: 'integer' },
    publishedVersion: { type: ['integer', 'null'] },
    createdAt: { type: 'string' },
    updatedAt: { type: 'string' },
    publishedAt: nullableString,
  },
} as const;

/** GET /rules. */
export const ruleListResponseSchema = {
  type: 'object',
  required: ['items', 'nextCursor'],
  properties: {
    items: { type: 'array', items: ruleResponseSchema },
    nextCursor: nullableString,
  },
} as const;

/** GET /rules/{id}/versions. */
export const ruleVersionsResponseSchema = {
  type: 'object',
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          version: { type: 'integer' },
          ...contentResponseProperties,
          createdAt: { type: 'string' },
          publishedAt: nullableString,
        },
      },
    },
  },
} as const;
