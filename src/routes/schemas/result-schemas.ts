/**
 * Response schemas of validation results, shared by the three validation
 * operations and POST /rules/test. fast-json-stringify serializes with them,
 * so they are also what trims batch and transaction failures to ruleCode and
 * message: one compiled validator serves every operation.
 *
 * Each is a shared schema (`$id`, registered by shared-schemas.ts) and so a
 * component of the OpenAPI document; routes refer to them with `$ref`.
 * Descriptions and examples are annotations: the serializers fast-json-stringify
 * generates from these schemas are the same with or without them.
 */

const failureExample = {
  ruleCode: 'MAX_AMOUNT',
  ruleName: 'Amount within limit',
  severity: 'Error',
  message: 'Amount 12000 exceeds 10000',
  errorCode: 'AMOUNT_TOO_HIGH',
  fieldPath: 'loan.amount',
  actualValue: 12000,
  expectedValue: 10000,
} as const;

const ruleCode = { type: 'string', description: 'Code of the failed rule.', examples: ['MAX_AMOUNT'] } as const;
const failureMessage = { type: 'string', description: 'The rule\'s message, rendered for this failure.', examples: ['Amount 12000 exceeds 10000'] } as const;
const isValid = { type: 'boolean', description: 'True when no rule failed.' } as const;
const executionTimeMs = {
  type: 'integer',
  description: 'Server-side handling time of the whole request, in whole milliseconds.',
  examples: [0],
} as const;

/** Failure records of single results: all eight fields, in the interface's order. */
export const fullFailureSchema = {
  $id: 'FailureRecord',
  type: 'object',
  description: 'One rule the payload did not satisfy (single validation and rule tests: all eight fields, always present).',
  required: ['ruleCode', 'ruleName', 'severity', 'message', 'errorCode', 'fieldPath', 'actualValue', 'expectedValue'],
  properties: {
    ruleCode,
    ruleName: { type: 'string', description: 'The rule\'s name.', examples: ['Amount within limit'] },
    severity: { type: 'string', description: 'The rule\'s severity: Error, Warning or Info.', examples: ['Error'] },
    message: failureMessage,
    errorCode: { type: 'string', description: 'The rule\'s error code (its code when none was set).', examples: ['AMOUNT_TOO_HIGH'] },
    fieldPath: {
      type: 'string',
      description: 'Path of the offending field, with array indices resolved (`items[3].qty`); "" when the rule has none.',
      examples: ['loan.amount'],
    },
    actualValue: { description: 'The value at fieldPath (any JSON); null when it is missing or the rule has no fieldPath.', examples: [12000] },
    expectedValue: { description: 'What the rule expected or the limit it applies (any JSON); null when there is none.', examples: [10000] },
  },
  examples: [failureExample],
} as const;

/** Failure records of batch and transaction results: exactly ruleCode and message. */
export const shortFailureSchema = {
  $id: 'ShortFailureRecord',
  type: 'object',
  description: 'One rule the payload did not satisfy, as batches and transactions report it.',
  required: ['ruleCode', 'message'],
  properties: {
    ruleCode,
    message: failureMessage,
  },
  examples: [{ ruleCode: failureExample.ruleCode, message: failureExample.message }],
} as const;

export const singleResultResponseSchema = {
  $id: 'SingleResult',
  type: 'object',
  description: 'The result of validating one payload.',
  required: ['isValid', 'totalRulesEvaluated', 'failures', 'executionTimeMs'],
  properties: {
    isValid,
    totalRulesEvaluated: {
      type: 'integer',
      description: 'Enabled rules that were evaluated (not skipped by `when`, a missing optional field or a missing forEach array).',
      examples: [12],
    },
    failures: {
      type: 'array',
      description: 'One record per failure, by ascending rule priority, then code, then element index.',
      items: { $ref: 'FailureRecord#' },
    },
    executionTimeMs,
  },
  examples: [{ isValid: false, totalRulesEvaluated: 12, failures: [failureExample], executionTimeMs: 0 }],
} as const;

export const batchItemResultSchema = {
  $id: 'BatchItemResult',
  type: 'object',
  description: 'The result of one item of a batch.',
  required: ['id', 'isValid', 'failures'],
  properties: {
    id: { type: 'string', description: 'The item\'s id, as sent.', examples: ['order-1'] },
    isValid,
    failures: { type: 'array', description: 'The item\'s failures.', items: { $ref: 'ShortFailureRecord#' } },
  },
} as const;

export const batchResultResponseSchema = {
  $id: 'BatchResult',
  type: 'object',
  description: 'The results of a batch, one per item, in request order.',
  required: ['results', 'totalProcessed', 'totalFailed', 'executionTimeMs'],
  properties: {
    results: { type: 'array', description: 'One result per item, in request order.', items: { $ref: 'BatchItemResult#' } },
    totalProcessed: { type: 'integer', description: 'Items processed (all of them).', examples: [2] },
    totalFailed: { type: 'integer', description: 'Items whose isValid is false.', examples: [1] },
    executionTimeMs,
  },
  examples: [{
    results: [
      { id: 'order-1', isValid: true, failures: [] },
      { id: 'order-2', isValid: false, failures: [{ ruleCode: failureExample.ruleCode, message: failureExample.message }] },
    ],
    totalProcessed: 2,
    totalFailed: 1,
    executionTimeMs: 1,
  }],
} as const;

export const contextResultSchema = {
  $id: 'ContextResult',
  type: 'object',
  description: 'The result of one context of a transaction.',
  required: ['context', 'isValid', 'failures'],
  properties: {
    context: { type: 'string', description: 'The context, as requested.', examples: ['loan-application'] },
    isValid,
    failures: { type: 'array', description: 'The context\'s failures.', items: { $ref: 'ShortFailureRecord#' } },
  },
} as const;

export const transactionResultResponseSchema = {
  $id: 'TransactionResult',
  type: 'object',
  description: 'The result of one payload validated against several contexts at one consistent set of ruleset versions.',
  required: ['transactionId', 'overallResult', 'contextResults', 'executionTimeMs'],
  properties: {
    transactionId: { type: 'string', description: 'The transaction id, as sent.', examples: ['tx-42'] },
    overallResult: {
      type: 'string',
      enum: ['Approved', 'Rejected'],
      description: 'Approved when every context is valid, else Rejected (still HTTP 200).',
      examples: ['Rejected'],
    },
    contextResults: { type: 'array', description: 'One result per context, in request order.', items: { $ref: 'ContextResult#' } },
    executionTimeMs,
  },
  examples: [{
    transactionId: 'tx-42',
    overallResult: 'Rejected',
    contextResults: [
      { context: 'loan-application', isValid: false, failures: [{ ruleCode: failureExample.ruleCode, message: failureExample.message }] },
      { context: 'kyc', isValid: true, failures: [] },
    ],
    executionTimeMs: 1,
  }],
} as const;

/** The shared schemas of this module, in the order the document lists them. */
export const resultSchemas = [
  fullFailureSchema,
  shortFailureSchema,
  singleResultResponseSchema,
  batchItemResultSchema,
  batchResultResponseSchema,
  contextResultSchema,
  transactionResultResponseSchema,
] as const;
