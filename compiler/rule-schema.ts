/**
 * The one schema of a rule's content: a JSON Schema, and the TypeScript
 * types derived from it with json-schema-to-ts. Everything else builds on
 * it: the bodies of POST and PUT /rules, the Rule component of the OpenAPI
 * document and the stored content (src/), and what the compiler takes
 * (RuleDefinition). toRuleDefinition is the one conversion from stored to
 * compiled form.
 *
 * Pure data and types, like the rest of the compiler: no I/O, nothing from `src/`.
 */
import type { FromSchema } from 'json-schema-to-ts';
import type { TableDefinition } from './table/table-definition.ts';

/** Rule codes: 1-64 chars of `[A-Za-z0-9_.-]`. */
export const CODE_PATTERN = '^[A-Za-z0-9_.-]{1,64}$';

/** At most 20 tags per rule, each 1-50 chars. */
export const MAX_TAGS = 20;
export const MAX_TAG_LENGTH = 50;

/**
 * Priorities are stored and compared as JavaScript numbers; 32-bit bounds
 * keep them exact everywhere (JSON, PostgreSQL, generated code).
 */
const INT32 = { minimum: -2147483648, maximum: 2147483647 } as const;

/**
 * The editable content of a rule, in the order of the rule resource (stored
 * content and answers keep it). Descriptions and examples are what the
 * OpenAPI document shows.
 */
export const ruleContentProperties = {
  name: {
    type: 'string',
    minLength: 1,
    maxLength: 200,
    description: 'Human-readable name (at most 200 characters); failures report it as ruleName.',
    examples: ['Loan amount limit'],
  },
  description: { type: 'string', maxLength: 2000, description: 'Free text for authors (at most 2000 characters); not evaluated.' },
  severity: {
    type: 'string',
    enum: ['Error', 'Warning', 'Info'],
    description: 'Reported with each failure. Default Error. Any failure makes the payload invalid, whatever its severity.',
  },
  errorCode: {
    type: 'string',
    maxLength: 100,
    description: 'Machine-readable code reported with each failure (at most 100 characters). Default: the rule\'s code.',
    examples: ['AMOUNT_TOO_HIGH'],
  },
  fieldPath: {
    type: 'string',
    description: 'Path of the field the rule is about (`loan.amount`, `items[].qty` with forEach, `$["first-name"]`); its value is `$value`.',
    examples: ['amount'],
  },
  required: {
    type: 'boolean',
    description: 'When true, a missing (or null) value at fieldPath fails the rule; when false, it skips the rule. Default false.',
  },
  // A table's shape, cells and limits are checked by the compiler
  // (compiler/table/plan-table.ts), so that every refusal names its row and
  // column (`table.rows[3].when[1]`); the schema only checks the type.
  table: {
    type: 'object',
    description: 'A decision table (docs/rule-language.md, "Decision tables"): `hitPolicy` (first, unique, any, collect), '
      + '`inputs` (each `{ name, path }` or `{ name, expression }`), `outputs` (names), `rows` (each `{ when: [one cell per input], '
      + 'then: [one value per output] }`) and `noMatch` ("fail", "pass" or `{ then: [...] }`). The matched row is `$row` in the expression and message.',
    examples: [{
      hitPolicy: 'first',
      inputs: [{ name: 'product', path: 'loan.product' }, { name: 'country', path: 'applicant.country' }],
      outputs: ['maxAmount'],
      rows: [{ when: ['"auto"', 'in ["US", "CA"]'], then: [50000] }, { when: ['-', '-'], then: [10000] }],
    }],
  },
  // Length, grammar and position errors come from the compiler (checkRule),
  // so that they name line and column; the schema only checks the type.
  expression: {
    type: 'string',
    description: 'Rule-language expression that must be true for the payload to pass.',
    examples: ['amount <= 50000'],
  },
  schema: {
    type: 'object',
    description: 'JSON Schema (draft 2020-12) the value at fieldPath, or the whole payload, must satisfy.',
    examples: [{ type: 'integer', maximum: 50000 }],
  },
  when: {
    type: 'string',
    description: 'Precondition expression: the rule is evaluated only when it is true.',
    examples: ['applicant.age >= 18'],
  },
  forEach: {
    type: 'string',
    description: 'Path of an array: the rule runs once per element (`$item`, `$index`).',
    examples: ['items'],
  },
  message: {
    type: 'string',
    maxLength: 2000,
    description: 'Failure message template with `{{ expression }}` placeholders (at most 2000 characters). Default "<name> failed".',
    examples: ['Amount {{ $value }} exceeds the limit of {{ $expected }}'],
  },
  expectedValue: { description: 'Any JSON value, reported as expectedValue; inferred from simple comparisons when omitted or null.' },
  priority: { type: 'integer', ...INT32, description: 'Failures are reported by ascending priority, then code. Default 0.', examples: [10] },
  enabled: { type: 'boolean', description: 'A disabled rule is never evaluated nor counted. Default true.' },
  tags: {
    type: 'array',
    maxItems: MAX_TAGS,
    description: 'At most 20 tags of 1-50 characters; GET /rules filters on them.',
    items: { type: 'string', minLength: 1, maxLength: MAX_TAG_LENGTH },
    examples: [['loans']],
  },
} as const;

/** A rule's content as a client writes it: only the name is required. */
export const ruleContentSchema = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: ruleContentProperties,
} as const;

/** The content fields, in the resource's order. */
export type RuleContentField = keyof typeof ruleContentProperties;
export const RULE_CONTENT_FIELDS = Object.keys(ruleContentProperties) as RuleContentField[];

/**
 * Content as sent: optional fields may be left out (they take their
 * defaults). The schema only says a table is an object; its type is the
 * compiler's, which checks every part of it before anything runs.
 */
export type RuleContentInput = Omit<FromSchema<typeof ruleContentSchema>, 'table'> & { table?: TableDefinition };

export type Severity = NonNullable<RuleContentInput['severity']>;

/** The defaults of the optional fields that always have a value once stored. */
export const RULE_CONTENT_DEFAULTS = {
  severity: 'Error',
  required: false,
  priority: 0,
  enabled: true,
  tags: [],
} as const satisfies Partial<RuleContentInput>;

type DefaultedField = keyof typeof RULE_CONTENT_DEFAULTS;

/** Content as stored: the defaulted fields always set. */
export type RuleContent = Omit<RuleContentInput, DefaultedField> & Required<Pick<RuleContentInput, DefaultedField>>;

/**
 * The content of one rule as the compiler sees it: its code and the fields
 * that change evaluation (no description or tags). Optional fields take
 * their defaults when omitted.
 */
export type RuleDefinition = { code: string } & Omit<RuleContentInput, 'description' | 'tags'>;

/** The fields of RuleDefinition taken from stored content. */
const EVALUATED_FIELDS = RULE_CONTENT_FIELDS.filter((field) => field !== 'description' && field !== 'tags');

/**
 * What the compiler sees of stored content: the code and the evaluated
 * fields that are set.
 *
 * @example
 * toRuleDefinition('MAX_AMOUNT', { name: 'Max', severity: 'Error', required: false, priority: 0, enabled: true, tags: ['x'], expression: 'amount < 5' });
 * // { code: 'MAX_AMOUNT', name: 'Max', severity: 'Error', required: false, expression: 'amount < 5', priority: 0, enabled: true }
 */
export function toRuleDefinition(code: string, content: RuleContent): RuleDefinition {
  const rule: Record<string, unknown> = { code };
  for (const field of EVALUATED_FIELDS) {
    if (content[field] !== undefined) rule[field] = content[field];
  }
  return rule as RuleDefinition;
}
