/**
 * The request and response schemas of the three validation operations, in
 * one place: Fastify's routes (validation/validation-routes.ts) validate and serialize
 * with them, and the validation fast lane (validation/fast-lane.ts)
 * compiles the single validation's body schema and response schema itself,
 * so both ways through the service accept the same bodies and write the
 * same bytes.
 */
import type { Config } from '../config.ts';
import { singleResultResponseSchema } from '../routes/schemas/result-schemas.ts';
import { CONTEXT_PATTERN } from '../routes/schemas/rule-schemas.ts';
import { sharedRef } from '../routes/schemas/shared-schemas.ts';

/** The single validation's body, as its schema admits it. */
export interface ValidateBody {
  context: string;
  payload: Record<string, unknown>;
}

/** The batch's body, as its schema admits it. */
export interface BatchBody {
  context: string;
  items: { id: string; payload: Record<string, unknown> }[];
}

/** The transaction's body, as its schema admits it. */
export interface TransactionBody {
  transactionId: string;
  contexts: string[];
  payload: Record<string, unknown>;
}

const contextSchema = {
  type: 'string',
  pattern: CONTEXT_PATTERN,
  description: 'A context with a published ruleset.',
  examples: ['loan-application'],
} as const;
const payloadSchema = {
  type: 'object',
  description: 'The JSON object to validate: finite numbers only, at most MAX_PAYLOAD_DEPTH levels deep, no `__proto__` keys.',
  examples: [{ amount: 60000, applicant: { income: 9000 } }],
} as const;
const idSchema = { type: 'string', minLength: 1, maxLength: 200 } as const;

const BODY_LIMITS = 'Unknown top-level fields are ignored.';

/** The single validation's body. */
export const singleValidationBodySchema = {
  type: 'object',
  description: `A payload and the context whose rules it must satisfy. ${BODY_LIMITS}`,
  required: ['context', 'payload'],
  properties: { context: contextSchema, payload: payloadSchema },
  examples: [{ context: 'loan-application', payload: { amount: 60000, applicant: { income: 9000 } } }],
} as const;

/** The single validation's 200 body, as the route refers to it (a shared schema, resolved by Fastify). */
export const singleValidationResponseRef = sharedRef('SingleResult');
/** The same schema itself, for a serializer compiled outside Fastify (resolve its `$ref`s with SHARED_SCHEMAS_BY_ID). */
export const singleValidationResponseSchema = singleResultResponseSchema;

/** The batch's body; its item count is bounded by MAX_BATCH_ITEMS. */
export function batchValidationBodySchema(config: Pick<Config, 'maxBatchItems'>) {
  return {
    type: 'object',
    description: `Payloads of one context, each with an id. ${BODY_LIMITS}`,
    required: ['context', 'items'],
    properties: {
      context: contextSchema,
      items: {
        type: 'array',
        minItems: 1,
        maxItems: config.maxBatchItems,
        description: `1 to ${config.maxBatchItems} items (MAX_BATCH_ITEMS).`,
        items: {
          type: 'object',
          required: ['id', 'payload'],
          properties: {
            id: { ...idSchema, description: 'Chosen by the caller, unique in the batch (1-200 characters); echoed in the result.', examples: ['order-1'] },
            payload: payloadSchema,
          },
        },
      },
    },
    examples: [{
      context: 'loan-application',
      items: [{ id: 'order-1', payload: { amount: 1000 } }, { id: 'order-2', payload: { amount: 60000 } }],
    }],
  } as const;
}

/** The transaction's body; its context count is bounded by MAX_TRANSACTION_CONTEXTS. */
export function transactionValidationBodySchema(config: Pick<Config, 'maxTransactionContexts'>) {
  return {
    type: 'object',
    description: `A payload and the contexts whose rules it must satisfy. ${BODY_LIMITS}`,
    required: ['transactionId', 'contexts', 'payload'],
    properties: {
      transactionId: { ...idSchema, description: 'Chosen by the caller (1-200 characters); echoed in the result.', examples: ['tx-42'] },
      contexts: {
        type: 'array',
        minItems: 1,
        maxItems: config.maxTransactionContexts,
        description: `1 to ${config.maxTransactionContexts} distinct contexts (MAX_TRANSACTION_CONTEXTS).`,
        items: contextSchema,
      },
      payload: payloadSchema,
    },
    examples: [{ transactionId: 'tx-42', contexts: ['loan-application', 'kyc'], payload: { amount: 60000 } }],
  } as const;
}
