/**
 * JSON Schemas of the context routes (product.md section 4).
 */

/** `:context`; its format is checked in handlers, where a malformed name is simply unknown (404). */
export const contextParamsSchema = {
  type: 'object',
  required: ['context'],
  properties: { context: { type: 'string' } },
} as const;

/** POST /contexts/{context}/rollback. */
export const rollbackBodySchema = {
  type: 'object',
  required: ['rulesetVersion'],
  additionalProperties: false,
  properties: { rulesetVersion: { type: 'integer', minimum: 1, maximum: 2147483647 } },
} as const;

/** GET /contexts/{context}/validator query. */
export const validatorQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { format: { type: 'string', enum: ['source', 'module'] } },
} as const;

/** Publish and rollback answer the same body. */
export const publishResultResponseSchema = {
  type: 'object',
  required: ['context', 'rulesetVersion', 'published'],
  properties: {
    context: { type: 'string' },
    rulesetVersion: { type: 'integer' },
    published: { type: 'array', items: { type: 'string' } },
  },
} as const;

/** GET /contexts. */
export const contextListResponseSchema = {
  type: 'object',
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      items: {
        type: 'object',
        required: ['context', 'rulesetVersion', 'rules', 'compiledAt', 'compileMs'],
        properties: {
          context: { type: 'string' },
          rulesetVersion: { type: ['integer', 'null'] },
          rules: {
            type: 'object',
            required: ['draft', 'published', 'archived'],
            properties: {
              draft: { type: 'integer' },
              published: { type: 'integer' },
              archived: { type: 'integer' },
            },
          },
          compiledAt: { type: ['string', 'null'] },
          compileMs: { type: ['number', 'null'] },
        },
      },
    },
  },
} as const;

/** POST /contexts/{context}/recompile. */
export const recompileResponseSchema = {
  type: 'object',
  required: ['context', 'rulesetVersion', 'rules', 'compileMs'],
  properties: {
    context: { type: 'string' },
    rulesetVersion: { type: 'integer' },
    rules: { type: 'integer' },
    compileMs: { type: 'number' },
  },
} as const;

/**
 * GET /contexts/{context}/validator: JavaScript text. A string reply with a
 * non-JSON content type is sent as is; the schema documents it.
 */
export const validatorSourceResponseSchema = {
  type: 'string',
  description: 'The generated validator source (text/javascript).',
} as const;
