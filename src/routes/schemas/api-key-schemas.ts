/**
 * JSON Schemas of the API key routes (product.md sections 4 and 5). The
 * response schemas are the allow-list that keeps hashes out of every
 * answer; the secret appears only in the 201 of POST.
 */

/** POST /api-keys. */
export const createApiKeyBodySchema = {
  type: 'object',
  required: ['name', 'role'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    role: { type: 'string', enum: ['admin', 'validator'] },
  },
} as const;

/** The 201 of POST /api-keys, the only answer that carries the secret. */
export const createdApiKeyResponseSchema = {
  type: 'object',
  required: ['id', 'name', 'role', 'key', 'createdAt'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    role: { type: 'string' },
    key: { type: 'string' },
    createdAt: { type: 'string' },
  },
} as const;

/** GET /api-keys. */
export const apiKeyListResponseSchema = {
  type: 'object',
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'name', 'role', 'createdAt', 'revokedAt', 'lastUsedAt'],
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          role: { type: 'string' },
          createdAt: { type: 'string' },
          revokedAt: { type: ['string', 'null'] },
          lastUsedAt: { type: ['string', 'null'] },
        },
      },
    },
  },
} as const;
