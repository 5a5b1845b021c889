/**
 * JSON Schemas of local evaluation's routes (docs/api.md, "Local evaluation"):
 * context settings, the samples clients send back, the signing key and the
 * tenant's allowed browser origins.
 */
import { TUNING } from '../../tuning.ts';

/** PUT /contexts/{context}/settings, and what it and GET answer. */
export const contextSettingsSchema = {
  type: 'object',
  description: 'A context\'s settings: `localValidation` serves its validator module and change feed to client keys (off by default).',
  required: ['localValidation'],
  additionalProperties: false,
  properties: {
    localValidation: { type: 'boolean', description: 'Whether the context is served for local evaluation.', examples: [true] },
  },
  examples: [{ localValidation: true }],
} as const;

/** POST /contexts/{context}/samples. */
export const samplesBodySchema = {
  type: 'object',
  description: `Outcomes of local validations, at most ${TUNING.samplesPerBatch.value} per request.`,
  required: ['samples'],
  additionalProperties: false,
  properties: {
    samples: {
      type: 'array',
      description: 'The outcomes, each with the payload, the ruleset version that judged it and what it answered.',
      minItems: 1,
      maxItems: TUNING.samplesPerBatch.value,
      items: {
        type: 'object',
        required: ['payload', 'rulesetVersion', 'isValid', 'errorCodes', 'at'],
        additionalProperties: false,
        properties: {
          payload: { type: 'object', description: 'The payload validated.' },
          rulesetVersion: { type: 'integer', minimum: 1, maximum: 2147483647, description: 'The ruleset version of the module that validated it.' },
          isValid: { type: 'boolean', description: 'The verdict.' },
          errorCodes: {
            type: 'array',
            maxItems: 1000,
            description: 'The codes of the rules it failed (`failures[].ruleCode` of the answer), each once.',
            items: { type: 'string', minLength: 1, maxLength: 200 },
          },
          at: { type: 'string', format: 'date-time', description: 'When it was validated (ISO-8601).' },
        },
      },
    },
  },
  examples: [{
    samples: [{ payload: { amount: 120 }, rulesetVersion: 4, isValid: false, errorCodes: ['AMOUNT_LIMIT'], at: '2025-01-31T09:30:00.000Z' }],
  }],
} as const;

/** What POST /contexts/{context}/samples answers. */
export const samplesAcceptedSchema = {
  type: 'object',
  description: 'How many samples were queued for storage and how many were not, by reason.',
  required: ['accepted', 'dropped', 'reasons', 'samplingRate'],
  properties: {
    accepted: { type: 'integer', description: 'Samples queued for storage.' },
    dropped: { type: 'integer', description: 'Samples not kept.' },
    reasons: {
      type: 'object',
      description: 'Dropped samples by reason: `samplingOff` (the tenant samples no traffic), `versionNotLive` (a ruleset version the '
        + 'context never had), `payloadTooLarge` (over SAMPLE_MAX_PAYLOAD_BYTES), `payloadInvalid` (not a payload the service would '
        + 'validate), `queueFull` (the sample queue of this instance is full).',
      additionalProperties: { type: 'integer' },
    },
    samplingRate: { type: 'number', description: 'The tenant\'s sampling rate: the share of its outcomes a client should send.' },
  },
  examples: [{ accepted: 2, dropped: 1, reasons: { payloadTooLarge: 1 }, samplingRate: 0.1 }],
} as const;

/** What GET /signing-key answers. */
export const signingKeySchema = {
  type: 'object',
  description: 'The public key that verifies the `X-Rules-Signature` of served validator modules.',
  required: ['algorithm', 'keyId', 'publicKeyPem', 'publicKey'],
  properties: {
    algorithm: { type: 'string', enum: ['Ed25519'] },
    keyId: { type: 'string', description: 'Sent with every module as X-Rules-Signing-Key-Id.', examples: ['ed25519:3f1c9a0b7d2e4f60'] },
    publicKeyPem: { type: 'string', description: 'The public key, SPKI in PEM.' },
    publicKey: { type: 'string', description: 'The raw 32-byte public key, base64.' },
  },
} as const;

/** PUT /tenant/cors, and what it answers. */
export const corsOriginsSchema = {
  type: 'object',
  description: 'The browser origins (scheme, host and port, no path) allowed to call local evaluation\'s routes across origins; empty: none.',
  required: ['origins'],
  additionalProperties: false,
  properties: {
    origins: {
      type: 'array',
      description: 'Each an origin such as https://shop.example.com; the list replaces the one before.',
      maxItems: TUNING.corsMaxOrigins.value,
      uniqueItems: true,
      items: { type: 'string', pattern: '^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$', maxLength: 300 },
    },
  },
  examples: [{ origins: ['https://shop.example.com', 'http://localhost:5173'] }],
} as const;

/** The change feed's answer, for the OpenAPI document. */
export const eventStreamResponseSchema = {
  content: {
    'text/event-stream': {
      schema: {
        type: 'string',
        description: 'Server-Sent Events: `published` events (`id` the ruleset version, data `{ context, version, etag }`) and heartbeat comments.',
      },
    },
  },
} as const;
