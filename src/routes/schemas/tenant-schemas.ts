/**
 * JSON Schemas of the tenant settings routes: the tenant as its admins see
 * it, and the body that sets its rate-limit budget.
 */

/** The largest budget and window the database keeps (a PostgreSQL integer). */
const MAX_INT4 = 2_147_483_647;

const max = {
  type: 'integer', minimum: 1, maximum: MAX_INT4,
  description: 'Requests allowed per window, per client address.', examples: [6000],
} as const;
const windowMs = {
  type: 'integer', minimum: 100, maximum: MAX_INT4,
  description: 'The window, in milliseconds.', examples: [60000],
} as const;

/** The rate-limit budget in force for a tenant. */
export const rateLimitSchema = {
  $id: 'TenantRateLimit',
  type: 'object',
  description: 'The tenant\'s rate-limit budget: its own, or the service\'s default (RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_MS).',
  required: ['max', 'windowMs', 'default'],
  properties: {
    max,
    windowMs,
    default: { type: 'boolean', description: 'True when the tenant has no budget of its own and the service\'s default applies.', examples: [false] },
  },
} as const;

/** GET /tenant. */
export const tenantSchema = {
  $id: 'Tenant',
  type: 'object',
  description: 'The tenant of the calling key and its settings.',
  required: ['id', 'rateLimit', 'sampling'],
  properties: {
    id: { type: 'string', description: 'The tenant id (the X-Tenant-Id header).', examples: ['demo'] },
    rateLimit: { $ref: 'TenantRateLimit#' },
    sampling: {
      type: 'object',
      description: 'Traffic sampling: off in this version (rate 0); no payload is recorded.',
      required: ['rate'],
      properties: { rate: { type: 'number', description: 'The share of validations recorded, 0 to 1.', examples: [0] } },
    },
  },
} as const;

/** PUT /tenant/rate-limit: a budget of the tenant's own, or back to the default. */
export const setRateLimitBodySchema = {
  type: 'object',
  description: 'Either `max` and `windowMs` (a budget of the tenant\'s own) or `{ "default": true }` (back to the service\'s default).',
  additionalProperties: false,
  properties: {
    max,
    windowMs,
    default: { type: 'boolean', const: true, description: 'Back to the service\'s default budget.' },
  },
  examples: [{ max: 100, windowMs: 60000 }],
} as const;

export const tenantSchemas = [rateLimitSchema, tenantSchema] as const;
