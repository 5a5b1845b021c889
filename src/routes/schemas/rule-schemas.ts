/**
 * JSON Schemas of the rule resource for request validation and response
 * serialization, built on the schema of a rule's content
 * (compiler/rule-schema.ts). Request schemas are strict
 * (`additionalProperties: false`, no coercion in the app's ajv); response
 * schemas double as an output allow-list for fast-json-stringify, so a
 * field that is not listed here never leaves the server.
 *
 * The response schemas are shared schemas (`$id`, registered by
 * shared-schemas.ts) and so components of the OpenAPI document.
 */
import { CODE_PATTERN, MAX_TAG_LENGTH, ruleContentProperties, type RuleContentField } from '../../../compiler/rule-schema.ts';

/** The tag bounds, for callers that check tags outside the schema. */
export { MAX_TAG_LENGTH, MAX_TAGS } from '../../../compiler/rule-schema.ts';

/** Context names: 1-100 chars of `[A-Za-z0-9_.:-]`, starting with a letter or digit. */
export const CONTEXT_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$';

/** Compiled once for the checks handlers make outside JSON Schema (URL params). */
export const CONTEXT_REGEX = new RegExp(CONTEXT_PATTERN);

const contextDescription = 'The rule context: 1-100 characters of letters, digits, `_ . : -`, starting with a letter or digit.';
const codeDescription = 'The rule\'s code, unique in its context among rules that are not archived: 1-64 characters of letters, digits, `_ . -`.';

const ignoredOnInput = { description: 'Managed by the server; accepted and ignored, so a rule read with GET can be sent back.' } as const;

/**
 * Fields the server manages. POST, PUT and PATCH (and the rule of POST
 * /rules/test) accept and ignore them, so a rule fetched with GET can be
 * edited and sent back, or posted to another context, as is. `version` is
 * one of them too, except where it says what an edit is based on.
 */
const serverManagedProperties = {
  id: ignoredOnInput,
  status: ignoredOnInput,
  publishedVersion: ignoredOnInput,
  createdAt: ignoredOnInput,
  updatedAt: ignoredOnInput,
  publishedAt: ignoredOnInput,
  warnings: ignoredOnInput,
} as const;

const ruleBodyExample = {
  context: 'loan-application',
  code: 'AMOUNT_LIMIT',
  name: 'Loan amount limit',
  fieldPath: 'amount',
  expression: 'amount <= 50000',
  message: 'Amount {{ $value }} exceeds the limit of {{ $expected }}',
  priority: 2,
} as const;

/** POST /rules. */
export const createRuleBodySchema = {
  type: 'object',
  description: 'A new rule. It needs at least one of expression, schema, table or required: true, and must compile. '
    + 'Server-managed fields are ignored, so a rule read with GET can be posted to another context as it is.',
  required: ['context', 'code', 'name'],
  additionalProperties: false,
  properties: {
    context: { type: 'string', pattern: CONTEXT_PATTERN, description: `${contextDescription} Immutable.`, examples: ['loan-application'] },
    code: { type: 'string', pattern: CODE_PATTERN, description: `${codeDescription} Immutable.`, examples: ['AMOUNT_LIMIT'] },
    ...ruleContentProperties,
    version: ignoredOnInput,
    ...serverManagedProperties,
  },
  examples: [ruleBodyExample],
} as const;

/** PUT /rules/{id}: the content plus the version it was based on. */
export const updateRuleBodySchema = {
  type: 'object',
  description: 'The rule\'s whole new content: omitted optional fields return to their defaults.',
  required: ['name', 'version'],
  additionalProperties: false,
  properties: {
    context: { type: 'string', description: 'May be sent, but must equal the rule\'s context.' },
    code: { type: 'string', description: 'May be sent, but must equal the rule\'s code.' },
    ...ruleContentProperties,
    version: { type: 'integer', minimum: 1, description: 'The version this edit is based on; a stale one is 409.', examples: [1] },
    ...serverManagedProperties,
  },
  examples: [{ ...ruleBodyExample, expression: 'amount <= 60000', version: 1 }],
} as const;

/**
 * The schema of a content field in a merge patch: its own, or null to
 * remove it (it then returns to its default). A `schema` or an object
 * `expectedValue` is merged into the stored one (RFC 7396), nulls inside
 * removing keys, so their values here are patches too.
 */
function removable<const T extends { type?: string }>(property: T) {
  return property.type === undefined ? property : { ...property, type: [property.type, 'null'] as const };
}

const removableSeverity = {
  ...ruleContentProperties.severity,
  type: ['string', 'null'],
  enum: [...ruleContentProperties.severity.enum, null],
} as const;

const { name: nameProperty, ...optional } = ruleContentProperties;

/** Every content field, as a merge patch may send it: all but the name may be null. */
const patchContentProperties = {
  name: { ...nameProperty, description: `${nameProperty.description} Cannot be removed.` },
  description: removable(optional.description),
  severity: removableSeverity,
  errorCode: removable(optional.errorCode),
  fieldPath: removable(optional.fieldPath),
  required: removable(optional.required),
  table: removable(optional.table),
  expression: removable(optional.expression),
  schema: removable(optional.schema),
  when: removable(optional.when),
  forEach: removable(optional.forEach),
  message: removable(optional.message),
  expectedValue: optional.expectedValue,
  priority: removable(optional.priority),
  enabled: removable(optional.enabled),
  tags: removable(optional.tags),
} as const satisfies Record<RuleContentField, object>;

/** PATCH /rules/{id}: a JSON merge patch (RFC 7396) of the content, plus the version it was based on. */
export const patchRuleBodySchema = {
  type: 'object',
  description: 'A JSON merge patch (RFC 7396) of the rule\'s content: the fields sent change, the others stay; null removes an '
    + 'optional field (it returns to its default); `schema` and object `expectedValue`s are merged key by key. `version` is required.',
  required: ['version'],
  additionalProperties: false,
  properties: {
    context: { type: 'string', description: 'May be sent, but must equal the rule\'s context.' },
    code: { type: 'string', description: 'May be sent, but must equal the rule\'s code.' },
    ...patchContentProperties,
    version: { type: 'integer', minimum: 1, description: 'The version this edit is based on; a stale one is 409.', examples: [1] },
    ...serverManagedProperties,
  },
  examples: [{ priority: 50, message: null, version: 2 }],
} as const;

/** The `rule` of POST /rules/test: a create body whose context is optional. */
export const testRuleSchema = {
  type: 'object',
  description: 'A rule as it would be saved (code uniqueness is not checked); context is optional.',
  required: ['code', 'name'],
  additionalProperties: false,
  properties: {
    context: { type: 'string', pattern: CONTEXT_PATTERN, description: contextDescription },
    code: { type: 'string', pattern: CODE_PATTERN, description: codeDescription },
    ...ruleContentProperties,
    version: ignoredOnInput,
    ...serverManagedProperties,
  },
} as const;

/** GET /rules query. Query values are strings: the app's ajv never coerces. */
export const listRulesQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    context: { type: 'string', pattern: CONTEXT_PATTERN, description: 'Only rules of this context.', examples: ['loan-application'] },
    status: {
      type: 'string',
      enum: ['draft', 'published', 'archived', 'all'],
      description: 'Only rules with this status; `all` includes archived rules. Default: every rule that is not archived.',
    },
    tag: { type: 'string', minLength: 1, maxLength: MAX_TAG_LENGTH, description: 'Only rules with this tag.', examples: ['loans'] },
    limit: { type: 'string', pattern: '^[0-9]{1,9}$', description: 'Page size, 1 to 500 (default 50).', examples: ['50'] },
    cursor: {
      type: 'string',
      minLength: 1,
      maxLength: 512,
      pattern: '^[A-Za-z0-9_-]+$',
      description: 'The nextCursor of the previous page.',
    },
  },
} as const;

/**
 * Response properties of the content, in the order of the rule resource:
 * the request's, but `schema` and `table` are serialized as any JSON value
 * (a bare `type: object` would let fast-json-stringify drop their keys).
 */
export const contentResponseProperties = {
  ...ruleContentProperties,
  table: { description: ruleContentProperties.table.description, examples: ruleContentProperties.table.examples },
  schema: { description: ruleContentProperties.schema.description, examples: ruleContentProperties.schema.examples },
} as const;

// Timestamps are ISO-8601 strings. No `format: date-time`: fast-json-stringify
// would serialize them through another path (one that also takes Date objects).
const timestamp = (description: string) => ({ type: 'string', description: `${description} ISO-8601.`, examples: ['2025-01-31T09:30:00.000Z'] }) as const;
const nullableTimestamp = (description: string) => ({ type: ['string', 'null'], description: `${description} ISO-8601.`, examples: ['2025-01-31T09:30:00.000Z'] }) as const;

const ruleStatus = {
  type: 'string',
  enum: ['draft', 'published', 'archived'],
  description: 'archived after DELETE; else published when the latest version is live, draft when it is not.',
  examples: ['published'],
} as const;

const ruleExample = {
  id: '0f8d6c3e-8a47-4b8e-9a55-3b1c2d4e5f60',
  ...ruleBodyExample,
  severity: 'Error',
  required: false,
  enabled: true,
  tags: [],
  status: 'published',
  version: 1,
  publishedVersion: 1,
  createdAt: '2025-01-31T09:30:00.000Z',
  updatedAt: '2025-01-31T09:30:00.000Z',
  publishedAt: '2025-01-31T09:31:00.000Z',
} as const;

const warningExample = {
  code: 'UNKNOWN_FIELD',
  path: 'fieldPath',
  message: '`amont` is not in the payload schema: did you mean `amount`?',
  line: 1,
  column: 1,
  suggestion: 'amount',
} as const;

/** One save-time warning (compiler/analysis/warnings.ts); docs/rule-language.md lists the codes. */
export const ruleWarningSchema = {
  $id: 'RuleWarning',
  type: 'object',
  description: 'Something the rule probably does not mean, though it compiles. Warnings never block a save.',
  required: ['code', 'path', 'message'],
  properties: {
    code: {
      type: 'string',
      enum: [
        'CONSTANT', 'TYPE_MISMATCH', 'UNKNOWN_FIELD', 'BARE_NAME', 'NEVER_EVALUATED', 'NO_FOREACH',
        'TABLE_OVERLAP', 'TABLE_UNREACHABLE', 'TABLE_GAP', 'TABLE_INCOMPLETE', 'MISSING_VALUE_MESSAGE',
      ],
      description: 'What kind of finding; programs branch on it (docs/rule-language.md, "Warnings").',
      examples: ['UNKNOWN_FIELD'],
    },
    path: {
      type: 'string',
      pattern: '^(expression|when|fieldPath|forEach|message|enabled|table([.[].*)?)$',
      description: 'The rule field it is about (`expression`, `when`, `fieldPath`, `forEach`, `message`, `enabled`), or the place in its decision table '
        + '(`table`, `table.rows`, `table.rows[12]`, `table.rows[12].when[2]`, `table.inputs[0].path`).',
      examples: ['fieldPath', 'table.rows[12].when[2]'],
    },
    message: { type: 'string', description: 'What is wrong, and why.', examples: [warningExample.message] },
    line: { type: 'integer', minimum: 1, description: '1-based line inside the field\'s text, when the finding has a place.', examples: [1] },
    column: { type: 'integer', minimum: 1, description: '1-based column inside the field\'s text, when the finding has a place.', examples: [1] },
    suggestion: {
      type: 'string',
      description: 'Text to put in place of what the warning points at: the closest declared path, the quoted string, the operation on the right type.',
      examples: ['amount'],
    },
    witness: {
      type: 'object',
      additionalProperties: true,
      description: 'Decision table warnings: an input that shows the finding (matching both rows, or no row), as the payload fragment the table\'s path inputs read.',
      examples: [{ loan: { product: 'auto' }, applicant: { country: 'FR' } }],
    },
  },
  examples: [warningExample],
} as const;

/** `warnings` of the answers that carry a saved or tested rule. */
export const warningsProperty = {
  type: 'array',
  description: 'Save-time warnings of the rule\'s content against its context\'s payload schema as it is now; empty when there is nothing to say. '
    + 'Given on create, replace, patch, restore and read of one rule, not in lists.',
  items: { $ref: 'RuleWarning#' },
} as const;

/** The rule resource as every rule route answers it, keys in the resource's order. */
export const ruleResponseSchema = {
  $id: 'Rule',
  type: 'object',
  description: 'A rule: its content, and the fields the server manages. Optional content fields that were not set are absent.',
  // No `required` list: fast-json-stringify writes required keys first, and
  // the resource reads best in its own order. The document states which
  // keys are always present (RULE_KEYS_ALWAYS_PRESENT).
  properties: {
    id: { type: 'string', format: 'uuid', description: 'Assigned by the server.', examples: [ruleExample.id] },
    context: { type: 'string', description: contextDescription, examples: ['loan-application'] },
    code: { type: 'string', description: codeDescription, examples: ['AMOUNT_LIMIT'] },
    ...contentResponseProperties,
    status: ruleStatus,
    version: { type: 'integer', description: 'Starts at 1 and rises by 1 with each content change.', examples: [1] },
    publishedVersion: {
      type: ['integer', 'null'],
      description: 'The version validation evaluates now; null when none is live.',
      examples: [1],
    },
    createdAt: timestamp('When the rule was created.'),
    updatedAt: timestamp('When its content last changed.'),
    publishedAt: nullableTimestamp('When a version of it was last made live; null if never.'),
    warnings: warningsProperty,
  },
  examples: [{ ...ruleExample, warnings: [] }],
} as const;

/** The keys every rule has, whatever its content; the OpenAPI document marks them required. */
export const RULE_KEYS_ALWAYS_PRESENT = [
  'id', 'context', 'code', 'name', 'severity', 'required', 'priority', 'enabled', 'tags',
  'status', 'version', 'publishedVersion', 'createdAt', 'updatedAt', 'publishedAt',
] as const;

/** GET /rules. */
export const ruleListResponseSchema = {
  $id: 'RulePage',
  type: 'object',
  description: 'A page of rules, by creation time then id.',
  required: ['items', 'nextCursor'],
  properties: {
    items: { type: 'array', description: 'The rules of this page.', items: { $ref: 'Rule#' } },
    nextCursor: {
      type: ['string', 'null'],
      description: 'Pass as `cursor` for the next page; null on the last page.',
      examples: ['MjAyNS0wMS0zMVQwOTozMDowMC4wMDBa'],
    },
  },
} as const;

/** One immutable version of a rule. */
export const ruleVersionSchema = {
  $id: 'RuleVersion',
  type: 'object',
  description: 'One version of a rule\'s content, as it was saved.',
  // No `required` list, for the same reason as the rule's (RULE_VERSION_KEYS_ALWAYS_PRESENT).
  properties: {
    version: { type: 'integer', description: 'The version number.', examples: [1] },
    ...contentResponseProperties,
    createdAt: timestamp('When this version was saved.'),
    publishedAt: nullableTimestamp('When this version was last made live; null if never.'),
  },
} as const;

/** The keys every rule version has; the OpenAPI document marks them required. */
export const RULE_VERSION_KEYS_ALWAYS_PRESENT = [
  'version', 'name', 'severity', 'required', 'priority', 'enabled', 'tags', 'createdAt', 'publishedAt',
] as const;

/** GET /rules/{id}/versions. */
export const ruleVersionsResponseSchema = {
  $id: 'RuleVersionList',
  type: 'object',
  description: 'Every version of a rule, newest first.',
  required: ['items'],
  properties: {
    items: { type: 'array', description: 'The versions, newest first.', items: { $ref: 'RuleVersion#' } },
  },
} as const;

/** The shared schemas of this module. */
export const ruleSchemas = [ruleWarningSchema, ruleResponseSchema, ruleListResponseSchema, ruleVersionSchema, ruleVersionsResponseSchema] as const;
