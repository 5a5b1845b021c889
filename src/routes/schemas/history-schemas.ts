/**
 * JSON Schemas of a context's history: the note publish and rollback
 * accept, what publishes changed, the versions list, one version's rules,
 * and the diff between two rulesets. Response schemas are shared schemas
 * (`$id`), components of the OpenAPI document.
 */
import { contentResponseProperties, ruleResponseSchema } from './rule-schemas.ts';

/** The most characters a note may have. */
export const MAX_NOTE_LENGTH = 500;

/** The note kept with a ruleset version. */
export const noteProperty = {
  type: 'string',
  maxLength: MAX_NOTE_LENGTH,
  description: `Why the change was made (at most ${MAX_NOTE_LENGTH} characters), kept with the new ruleset version and listed by GET /contexts/{context}/versions.`,
  examples: ['Raise the amount limit for Q3'],
} as const;

/** POST /contexts/{context}/publish and POST /rules/{id}/publish: an optional body. */
export const publishBodySchema = {
  type: 'object',
  description: 'Optional. A note to keep with the new ruleset version.',
  additionalProperties: false,
  properties: { note: noteProperty },
  examples: [{ note: 'Raise the amount limit for Q3' }],
} as const;

const codeList = (description: string) => ({
  type: 'array',
  description,
  items: { type: 'string', description: 'A rule code.' },
  examples: [['AMOUNT_LIMIT']],
}) as const;

/** One changed row of a decision table (src/storage/table-row-diff.ts), after the properties given. */
function tableRowChangeSchema<const P extends object>(before: P) {
  return {
    type: 'object',
    required: ['change', 'path'],
    properties: {
      ...before,
      change: {
        type: 'string',
        enum: ['added', 'removed', 'changed', 'moved'],
        description: '`added` and `removed`: a row only on one side; `changed`: the same cells with other outputs; `moved`: the same row at another place.',
      },
      path: { type: 'string', description: 'The row on the `to` side (on the `from` side for a removed row).', examples: ['table.rows[3]'] },
      fromPath: { type: 'string', description: 'For a changed or moved row: the row on the `from` side.', examples: ['table.rows[2]'] },
    },
  } as const;
}

/** The changes of a publish or rollback, by code. */
export const rulesetChangesSchema = {
  $id: 'RulesetChanges',
  type: 'object',
  description: 'What the new ruleset version changed compared with the one before it, by rule code; all empty when nothing was published.',
  required: ['added', 'changed', 'removed'],
  properties: {
    added: codeList('Codes live now that were not live before.'),
    changed: codeList('Codes live before and now whose live content differs.'),
    removed: codeList('Codes live before that are not live now.'),
    tableRows: {
      type: 'array',
      description: 'Present when decision-table rows of changed rules changed: each row, with its rule\'s code (at most 1000 a rule).',
      items: tableRowChangeSchema({ code: { type: 'string', description: 'The rule code.', examples: ['AMOUNT_LIMIT'] } }),
    },
  },
  examples: [{ added: ['NEW_CHECK'], changed: ['AMOUNT_LIMIT'], removed: [] }],
} as const;

/** POST /rules/{id}/publish: the rule, and the ruleset version its publish made. */
export const publishedRuleResponseSchema = {
  $id: 'PublishedRule',
  type: 'object',
  description: 'The rule, now published, with the ruleset version of its context this publish made and what that version changed.',
  properties: {
    ...ruleResponseSchema.properties,
    rulesetVersion: { type: 'integer', description: 'The context\'s ruleset version now live.', examples: [5] },
    changes: { $ref: 'RulesetChanges#' },
  },
} as const;

/** `:context/versions/:n`. */
export const versionParamsSchema = {
  type: 'object',
  required: ['context', 'n'],
  properties: {
    context: { type: 'string', description: 'The context name.', examples: ['loan-application'] },
    n: { type: 'string', description: 'A ruleset version of the context.', examples: ['3'] },
  },
} as const;

/** GET /contexts/{context}/versions query. */
export const versionsQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'string', description: 'Page size, 1 to 500 (default 50).', examples: ['50'] },
    cursor: { type: 'string', description: 'The nextCursor of the previous page: the versions older than those listed.' },
  },
} as const;

/** GET /contexts/{context}/diff query. */
export const diffQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    from: { type: 'string', description: 'A ruleset version number, or `live` (default).', examples: ['live', '3'] },
    to: { type: 'string', description: 'A ruleset version number, `live`, or `draft` (default): what a context publish would make live now.', examples: ['draft', '4'] },
  },
} as const;

const actorSchema = {
  type: ['object', 'null'],
  description: 'The API key that made the version; null when none did (the CLI, startup seeding, versions recorded before history was kept).',
  required: ['keyId', 'keyName'],
  properties: {
    keyId: { type: 'string', description: 'The key\'s id.', examples: ['7c1e2f4a-1b2c-4d5e-8f90-a1b2c3d4e5f6'] },
    keyName: { type: 'string', description: 'The key\'s name when it made the change.', examples: ['ci-pipeline'] },
  },
} as const;

/** One entry of GET /contexts/{context}/versions. */
export const rulesetVersionSummarySchema = {
  $id: 'RulesetVersionSummary',
  type: 'object',
  description: 'A ruleset version of the context: what made it, when, by whom, and how many rules it has live.',
  required: ['rulesetVersion', 'action', 'note', 'rules', 'createdAt', 'actor'],
  properties: {
    rulesetVersion: { type: 'integer', description: 'The ruleset version.', examples: [4] },
    action: {
      type: 'string',
      enum: ['publish', 'archive', 'rollback', 'import'],
      description: 'What made it: a publish (of a rule or the context), the archive of a live rule, a rollback, or an import that published.',
      examples: ['publish'],
    },
    note: { type: ['string', 'null'], description: 'The note given with the change; null when none was.', examples: ['Raise the amount limit for Q3'] },
    rules: { type: 'integer', description: 'How many rules were live in this version.', examples: [6] },
    createdAt: { type: 'string', description: 'When the version went live. ISO-8601.', examples: ['2025-01-31T09:30:00.000Z'] },
    actor: actorSchema,
  },
} as const;

/** GET /contexts/{context}/versions. */
export const rulesetVersionListSchema = {
  $id: 'RulesetVersionList',
  type: 'object',
  description: 'The context\'s ruleset versions, newest first, a page at a time.',
  required: ['items', 'nextCursor'],
  properties: {
    items: { type: 'array', items: { $ref: 'RulesetVersionSummary#' }, description: 'Newest first.' },
    nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next (older) page; null on the last page.' },
  },
} as const;

/**
 * A rule as a POST takes it. `schema` is any JSON value here, as in the
 * rule resource (a bare `type: object` would let the serializer drop its keys).
 */
export const ruleContentResponseSchema = {
  $id: 'RuleContent',
  type: 'object',
  description: 'A rule\'s content as POST /rules takes it: its context, code and content, without ids, statuses, versions or times.',
  properties: {
    context: { type: 'string', description: 'The context.', examples: ['loan-application'] },
    code: { type: 'string', description: 'The rule code.', examples: ['AMOUNT_LIMIT'] },
    ...contentResponseProperties,
  },
} as const;

/** GET /contexts/{context}/versions/{n}. */
export const rulesetVersionRulesSchema = {
  $id: 'RulesetVersionRules',
  type: 'object',
  description: 'The rules that were live in a ruleset version, sorted by code.',
  required: ['rulesetVersion', 'rules'],
  properties: {
    rulesetVersion: { type: 'integer', description: 'The ruleset version.', examples: [3] },
    rules: { type: 'array', items: { $ref: 'RuleContent#' }, description: 'Its live rules, as POST /rules takes them, sorted by code.' },
  },
} as const;

const rulesetSide = (description: string) => ({
  anyOf: [{ type: 'integer' }, { type: 'string', enum: ['live', 'draft'] }],
  description,
  examples: ['live'],
}) as const;

/** GET /contexts/{context}/diff. */
export const rulesetDiffSchema = {
  $id: 'RulesetDiff',
  type: 'object',
  description: 'What differs from one ruleset of the context to another, rules matched by code, each list sorted by code.',
  required: ['from', 'to', 'added', 'removed', 'changed'],
  properties: {
    from: rulesetSide('The ruleset compared from, as asked: a version number, or `live`.'),
    to: rulesetSide('The ruleset compared to, as asked: a version number, `live` or `draft`.'),
    added: { type: 'array', items: { $ref: 'RuleContent#' }, description: 'Rules whose code is only in `to`.' },
    removed: { type: 'array', items: { $ref: 'RuleContent#' }, description: 'Rules whose code is only in `from`.' },
    changed: {
      type: 'array',
      description: 'Rules in both whose content differs.',
      items: {
        type: 'object',
        required: ['code', 'fields'],
        properties: {
          code: { type: 'string', description: 'The rule code.', examples: ['AMOUNT_LIMIT'] },
          fields: {
            type: 'object',
            description: 'Each content field that differs, with its value on each side (JSON values; null where the field is not set).',
            additionalProperties: {
              type: 'object',
              required: ['from', 'to'],
              properties: { from: { description: 'The value in `from`.' }, to: { description: 'The value in `to`.' } },
            },
            examples: [{ expression: { from: 'amount <= 50000', to: 'amount <= 60000' } }],
          },
          tableRows: {
            type: 'array',
            description: 'When the rule\'s table changed and both sides have rows: each row added, removed, changed or moved, in row order (at most 1000).',
            items: tableRowChangeSchema({}),
          },
          tableRowsTruncated: { type: 'boolean', description: 'Present, true, when more rows changed than `tableRows` lists.' },
        },
      },
    },
  },
} as const;

/** The shared schemas of this module. */
export const historySchemas = [
  rulesetChangesSchema, publishedRuleResponseSchema, rulesetVersionSummarySchema, rulesetVersionListSchema,
  ruleContentResponseSchema, rulesetVersionRulesSchema, rulesetDiffSchema,
] as const;
