/**
 * JSON Schemas of the API key routes. The response schemas are the
 * allow-list that keeps hashes out of every answer; the secret appears only
 * in the 201 of POST. They are shared schemas (`$id`, registered by
 * shared-schemas.ts) and so components of the OpenAPI document.
 */

const keyId = { type: 'string', description: 'The key\'s id (not the secret).', examples: ['7c9e6679-7425-40de-944b-e07fc1f90ae7'] } as const;
const keyName = { type: 'string', description: 'A name for people, e.g. where the key is used.', examples: ['checkout service'] } as const;
const keyRole = {
  type: 'string',
  enum: ['admin', 'validator', 'client'],
  description: '`admin`: everything in the tenant; `validator`: the three validation operations only; '
    + '`client`: local evaluation only (modules, change feeds and samples of contexts served for it, and the signing key).',
  examples: ['validator'],
} as const;
const createdAt = { type: 'string', description: 'When the key was created (ISO-8601).', examples: ['2025-01-31T09:30:00.000Z'] } as const;

/** POST /api-keys. */
export const createApiKeyBodySchema = {
  type: 'object',
  description: 'The new key\'s name and role.',
  required: ['name', 'role'],
  additionalProperties: false,
  properties: {
    name: { ...keyName, minLength: 1, maxLength: 200 },
    role: keyRole,
  },
  examples: [{ name: 'checkout service', role: 'validator' }],
} as const;

/** The 201 of POST /api-keys, the only answer that carries the secret. */
export const createdApiKeyResponseSchema = {
  $id: 'CreatedApiKey',
  type: 'object',
  description: 'A new key, with its secret: shown this once, stored only as a hash.',
  required: ['id', 'name', 'role', 'key', 'createdAt'],
  properties: {
    id: keyId,
    name: keyName,
    role: keyRole,
    key: { type: 'string', description: 'The secret, for the X-Api-Key header.', examples: ['rk_Vb2x8Qm1Zt0yLqP4nWc7sKd9fHj3aRe6uTg5oIy2XwE'] },
    createdAt,
  },
} as const;

/** One key of GET /api-keys. */
export const apiKeySchema = {
  $id: 'ApiKey',
  type: 'object',
  description: 'A key of the tenant, without its secret.',
  required: ['id', 'name', 'role', 'createdAt', 'revokedAt', 'lastUsedAt'],
  properties: {
    id: keyId,
    name: keyName,
    role: keyRole,
    createdAt,
    revokedAt: { type: ['string', 'null'], description: 'When the key was revoked (ISO-8601); null while it is active.', examples: [null] },
    lastUsedAt: {
      type: ['string', 'null'],
      description: 'When the key was last used (ISO-8601; recorded in batches, so it can lag behind the latest use); null if never.',
      examples: ['2025-01-31T10:00:00.000Z'],
    },
  },
} as const;

/** GET /api-keys. */
export const apiKeyListResponseSchema = {
  $id: 'ApiKeyList',
  type: 'object',
  description: 'Every key of the tenant, revoked ones included.',
  required: ['items'],
  properties: {
    items: { type: 'array', description: 'The keys.', items: { $ref: 'ApiKey#' } },
  },
} as const;

/** The shared schemas of this module. */
export const apiKeySchemas = [createdApiKeyResponseSchema, apiKeySchema, apiKeyListResponseSchema] as const;
