/**
 * JSON Schemas of the context routes. The response schemas are shared
 * schemas (`$id`, registered by shared-schemas.ts) and so components of the
 * OpenAPI document.
 */

import { noteProperty } from './history-schemas.ts';

const contextName = { type: 'string', description: 'The context.', examples: ['loan-application'] } as const;

/** `:context`; its format is checked in handlers, where a malformed name is simply unknown (404). */
export const contextParamsSchema = {
  type: 'object',
  required: ['context'],
  properties: { context: { type: 'string', description: 'The context name.', examples: ['loan-application'] } },
} as const;

/** POST /contexts/{context}/rollback. */
export const rollbackBodySchema = {
  type: 'object',
  description: 'The ruleset version to make live again, and an optional note to keep with the new ruleset version.',
  required: ['rulesetVersion'],
  additionalProperties: false,
  properties: {
    rulesetVersion: {
      type: 'integer',
      minimum: 1,
      maximum: 2147483647,
      description: 'An earlier ruleset version of the context.',
      examples: [3],
    },
    note: noteProperty,
  },
  examples: [{ rulesetVersion: 3, note: 'Back to the limits before the Q3 change' }],
} as const;

/** GET /contexts/{context}/validator query. */
export const validatorQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    format: {
      type: 'string',
      enum: ['source', 'module'],
      description: '`source` (default): the generated validator as the service runs it; `module`: a self-contained ES module exporting `validate(payload)`.',
    },
  },
} as const;

/** Publish and rollback answer the same body. */
export const publishResultResponseSchema = {
  $id: 'PublishResult',
  type: 'object',
  description: 'What a publish or rollback made live.',
  required: ['context', 'rulesetVersion', 'published', 'changes'],
  properties: {
    context: contextName,
    rulesetVersion: { type: 'integer', description: 'The context\'s ruleset version now live (unchanged when nothing was published).', examples: [4] },
    published: {
      type: 'array',
      description: 'Ids of the rules whose new version went live; empty when there was nothing to publish.',
      items: { type: 'string', description: 'A rule id.' },
      examples: [['0f8d6c3e-8a47-4b8e-9a55-3b1c2d4e5f60']],
    },
    changes: { $ref: 'RulesetChanges#' },
  },
  examples: [{
    context: 'loan-application',
    rulesetVersion: 4,
    published: ['0f8d6c3e-8a47-4b8e-9a55-3b1c2d4e5f60'],
    changes: { added: [], changed: ['AMOUNT_LIMIT'], removed: [] },
  }],
} as const;

/** One context of GET /contexts. */
export const contextSummarySchema = {
  $id: 'ContextSummary',
  type: 'object',
  description: 'A context of the tenant, its rules by status and the state of its compiled validator in this process.',
  required: ['context', 'rulesetVersion', 'rules', 'compiledAt', 'compileMs'],
  properties: {
    context: contextName,
    rulesetVersion: { type: ['integer', 'null'], description: 'The live ruleset version; null when nothing was ever published.', examples: [4] },
    rules: {
      type: 'object',
      description: 'How many rules of the context have each status.',
      required: ['draft', 'published', 'archived'],
      properties: {
        draft: { type: 'integer', description: 'Rules whose latest version is not live.', examples: [1] },
        published: { type: 'integer', description: 'Rules whose latest version is live.', examples: [5] },
        archived: { type: 'integer', description: 'Archived rules.', examples: [0] },
      },
    },
    compiledAt: {
      type: ['string', 'null'],
      description: 'When this process compiled the live validator (ISO-8601); null when it holds none of this version.',
      examples: ['2025-01-31T09:31:00.000Z'],
    },
    compileMs: { type: ['number', 'null'], description: 'How long that compile took, in milliseconds; null as compiledAt.', examples: [3.2] },
  },
} as const;

/** GET /contexts. */
export const contextListResponseSchema = {
  $id: 'ContextList',
  type: 'object',
  description: 'The tenant\'s contexts.',
  required: ['items'],
  properties: {
    items: { type: 'array', description: 'One entry per context that has rules.', items: { $ref: 'ContextSummary#' } },
  },
} as const;

/** POST /contexts/{context}/recompile. */
export const recompileResponseSchema = {
  $id: 'RecompileResult',
  type: 'object',
  description: 'The validator rebuilt from the database.',
  required: ['context', 'rulesetVersion', 'rules', 'compileMs'],
  properties: {
    context: contextName,
    rulesetVersion: { type: 'integer', description: 'The ruleset version compiled.', examples: [4] },
    rules: { type: 'integer', description: 'Rules compiled into the validator.', examples: [6] },
    compileMs: { type: 'number', description: 'Compile time in milliseconds.', examples: [3.2] },
  },
  examples: [{ context: 'loan-application', rulesetVersion: 4, rules: 6, compileMs: 3.2 }],
} as const;

/**
 * GET /contexts/{context}/validator: JavaScript text. A string reply with a
 * non-JSON content type is sent as is; the schema documents it.
 */
export const validatorSourceResponseSchema = {
  content: {
    'text/javascript': {
      schema: { type: 'string', description: 'JavaScript source.' },
    },
  },
} as const;

/** The shared schemas of this module. */
export const contextSchemas = [
  publishResultResponseSchema, contextSummarySchema, contextListResponseSchema, recompileResponseSchema,
] as const;
