/**
 * JSON Schemas of rules files (docs/api.md, "Rules as files"): the document
 * export answers and import takes, the import's query and its answer.
 */
import { RULES_FILE_FORMAT } from '../../rules/rules-file.ts';
import { TUNING } from '../../tuning.ts';
import { createRuleBodySchema } from './rule-schemas.ts';

const payloadSchemaDescription = 'The context\'s payload schema (a JSON Schema), or null when it has none.';

const example = {
  format: RULES_FILE_FORMAT,
  context: 'loan-application',
  rulesetVersion: 3,
  payloadSchema: { type: 'object', properties: { amount: { type: 'number' } } },
  rules: [{ code: 'AMOUNT_LIMIT', name: 'Loan amount limit', fieldPath: 'amount', expression: 'amount <= 50000', priority: 2 }],
  tests: [{ name: 'small loan passes', payload: { amount: 500 }, expect: { isValid: true } }],
} as const;

/** GET /contexts/{context}/export. */
export const rulesFileSchema = {
  $id: 'RulesFile',
  type: 'object',
  description: 'A context\'s rules, payload schema and stored tests as one document, for keeping in version control and importing anywhere.',
  required: ['format', 'context', 'rulesetVersion', 'payloadSchema', 'rules', 'tests'],
  properties: {
    format: { type: 'string', description: `The document's layout: \`${RULES_FILE_FORMAT}\`.`, examples: [RULES_FILE_FORMAT] },
    context: { type: 'string', description: 'The context exported.', examples: ['loan-application'] },
    rulesetVersion: {
      type: ['integer', 'null'],
      description: 'The live ruleset version exported, or, for a draft export, the live version the drafts are based on (null: never published).',
      examples: [3],
    },
    // Any JSON value: a bare `type: object` would let the serializer drop its keys.
    payloadSchema: { description: payloadSchemaDescription },
    rules: { type: 'array', items: { $ref: 'RuleContent#' }, description: 'The rules, as POST /rules takes them less the context, sorted by code.' },
    tests: { type: 'array', items: { $ref: 'StoredTest#' }, description: 'The stored tests, in the order they run.' },
  },
  examples: [example],
} as const;

/** GET /contexts/{context}/export's query. */
export const exportQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    from: { type: 'string', enum: ['live', 'draft'], description: '`live` (default): the live rules; `draft`: what a context publish would make live.', examples: ['draft'] },
  },
} as const;

const { context: _context, ...ruleProperties } = createRuleBodySchema.properties;

/** A rule of an imported file: as POST /rules takes it, the context optional and ignored. */
const importedRuleSchema = {
  type: 'object',
  description: 'A rule as POST /rules takes it. Its `context`, when present, is ignored: the URL names the context.',
  required: ['code', 'name'],
  additionalProperties: false,
  properties: {
    context: { type: 'string', description: 'Ignored: the rule goes to the context of the URL.' },
    ...ruleProperties,
  },
} as const;

/** POST /contexts/{context}/import. */
export const importBodySchema = {
  type: 'object',
  description: 'A rules file as export answers it. `context` and `rulesetVersion` are ignored; `payloadSchema` and `tests`, when present, '
    + 'replace the context\'s (a null payloadSchema removes it), and when absent leave them as they are.',
  required: ['format', 'rules'],
  additionalProperties: false,
  properties: {
    format: { type: 'string', const: RULES_FILE_FORMAT, description: `Must be \`${RULES_FILE_FORMAT}\`.` },
    context: { type: 'string', description: 'Ignored: the URL names the context.' },
    rulesetVersion: { type: ['integer', 'null'], description: 'Ignored.' },
    payloadSchema: { type: ['object', 'null'], description: payloadSchemaDescription },
    rules: { type: 'array', items: importedRuleSchema, description: 'The rules the context\'s drafts are to equal, codes unique.' },
    tests: {
      type: 'array',
      maxItems: TUNING.maxStoredTests.value,
      items: { $ref: 'StoredTest#' },
      description: `The stored tests to keep (at most ${TUNING.maxStoredTests.value}); an empty list removes them.`,
    },
  },
  examples: [example],
} as const;

const flag = (description: string) => ({ type: 'string', enum: ['true', 'false'], description, examples: ['true'] }) as const;

/** POST /contexts/{context}/import's query. */
export const importQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    dryRun: flag('`true`: answer what would change, and change nothing.'),
    prune: flag('`true`: archive the context\'s rules whose codes the file does not have.'),
    publish: flag('`true`: publish the drafts in the same transaction (ruleset action `import`).'),
    force: flag('`true`: with `publish`, go live even when stored tests fail.'),
  },
} as const;

const codeList = (description: string) => ({ type: 'array', items: { type: 'string' }, description, examples: [['AMOUNT_LIMIT']] }) as const;

/** The answer of an import. */
export const importResultSchema = {
  $id: 'ImportResult',
  type: 'object',
  description: 'What the import changed (or, in a dry run, would change), by rule code, each list sorted.',
  required: ['dryRun', 'create', 'update', 'archive', 'unchanged', 'rulesetVersion', 'warnings'],
  properties: {
    dryRun: { type: 'boolean', description: 'Whether nothing was changed.', examples: [false] },
    create: codeList('Codes new to the context: created as drafts.'),
    update: codeList('Codes whose content differs: a new draft version each.'),
    archive: codeList('Codes the file does not have, archived (with `prune=true` only).'),
    unchanged: codeList('Codes whose content is already the file\'s.'),
    rulesetVersion: { type: ['integer', 'null'], description: 'The context\'s live ruleset version afterwards (null: none).', examples: [4] },
    warnings: {
      type: 'array',
      items: { $ref: 'RuleWarning#' },
      description: 'Save-time warnings of the file\'s rules, paths such as `rules[3].expression`.',
    },
  },
} as const;

export const contextFileSchemas = [rulesFileSchema, importResultSchema] as const;
