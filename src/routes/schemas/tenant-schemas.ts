/**
 * JSON Schemas of the tenant settings routes: the tenant as its admins see
 * it, the bodies that set its rate-limit budget and its traffic sampling,
 * and the answer to deleting its samples.
 */
import { TUNING } from '../../tuning.ts';

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
  required: ['id', 'rateLimit', 'sampling', 'corsOrigins'],
  properties: {
    id: { type: 'string', description: 'The tenant id (the X-Tenant-Id header).', examples: ['demo'] },
    rateLimit: { $ref: 'TenantRateLimit#' },
    sampling: { $ref: 'TenantSampling#' },
    corsOrigins: {
      type: 'array',
      items: { type: 'string' },
      description: 'Browser origins allowed to call local evaluation\'s routes across origins (PUT /tenant/cors).',
      examples: [['https://shop.example.com']],
    },
  },
} as const;

const rate = {
  type: 'number', minimum: 0, maximum: 1,
  description: 'The share of single validations and batch items recorded, 0 (off) to 1 (all).', examples: [0.01],
} as const;
const maxSamples = {
  type: 'integer', minimum: 1, maximum: 100_000,
  description: 'Samples kept per context, the newest; older ones are dropped.', examples: [10_000],
} as const;
const retentionHours = {
  type: 'integer', minimum: 1, maximum: 720,
  description: 'Samples older than this many hours are dropped.', examples: [168],
} as const;

/** The sampling settings in force for a tenant. */
export const samplingSchema = {
  $id: 'TenantSampling',
  type: 'object',
  description: 'Traffic sampling: the share of the tenant\'s validations whose payload and verdict are kept for impact reports, and for how long.',
  required: ['rate', 'maxSamples', 'retentionHours'],
  properties: { rate, maxSamples, retentionHours },
} as const;

/** PUT /tenant/sampling: the settings, replaced whole; omitted bounds take their defaults. */
export const setSamplingBodySchema = {
  type: 'object',
  description: `\`rate\` is required; \`maxSamples\` defaults to ${TUNING.samplingDefaultMaxSamples.value} and \`retentionHours\` to `
    + `${TUNING.samplingDefaultRetentionHours.value} when not given. \`{ "rate": 0 }\` turns sampling off.`,
  additionalProperties: false,
  required: ['rate'],
  properties: { rate, maxSamples, retentionHours },
  examples: [{ rate: 0.01, maxSamples: 10_000, retentionHours: 168 }],
} as const;

/** DELETE /tenant/samples. */
export const samplesDeletedSchema = {
  type: 'object',
  description: 'How many samples were deleted.',
  required: ['deleted'],
  properties: { deleted: { type: 'integer', minimum: 0, description: 'Samples deleted, across every context of the tenant.', examples: [1234] } },
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

export const tenantSchemas = [rateLimitSchema, samplingSchema, tenantSchema] as const;
