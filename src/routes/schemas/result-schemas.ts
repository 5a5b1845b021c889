/**
 * Response schemas of validation results, shared by the three validation
 * operations and POST /rules/test. fast-json-stringify serializes with them,
 * so they are also what trims batch and transaction failures to ruleCode and
 * message: one compiled validator serves every operation.
 */

/** Failure records of single results: all eight fields, in the interface's order (2.1). */
export const fullFailureSchema = {
  type: 'object',
  required: ['ruleCode', 'ruleName', 'severity', 'message', 'errorCode', 'fieldPath', 'actualValue', 'expectedValue'],
  properties: {
    ruleCode: { type: 'string' },
    ruleName: { type: 'string' },
    severity: { type: 'string' },
    message: { type: 'string' },
    errorCode: { type: 'string' },
    fieldPath: { type: 'string' },
    actualValue: {},
    expectedValue: {},
  },
} as const;

/** Failure records of batch and transaction results: exactly ruleCode and message. */
export const shortFailureSchema = {
  type: 'object',
  required: ['ruleCode', 'message'],
  properties: {
    ruleCode: { type: 'string' },
    message: { type: 'string' },
  },
} as const;

export const singleResultResponseSchema = {
  type: 'object',
  required: ['isValid', 'totalRulesEvaluated', 'failures', 'executionTimeMs'],
  properties: {
    isValid: { type: 'boolean' },
    totalRulesEvaluated: { type: 'integer' },
    failures: { type: 'array', items: fullFailureSchema },
    executionTimeMs: { type: 'integer' },
  },
} as const;

export const batchResultResponseSchema = {
  type: 'object',
  required: ['results', 'totalProcessed', 'totalFailed', 'executionTimeMs'],
  properties: {
    results: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'isValid', 'failures'],
        properties: {
          id: { type: 'string' },
          isValid: { type: 'boolean' },
          failures: { type: 'array', items: shortFailureSchema },
        },
      },
    },
    totalProcessed: { type: 'integer' },
    totalFailed: { type: 'integer' },
    executionTimeMs: { type: 'integer' },
  },
} as const;

export const transactionResultResponseSchema = {
  type: 'object',
  required: ['transactionId', 'overallResult', 'contextResults', 'executionTimeMs'],
  properties: {
    transactionId: { type: 'string' },
    overallResult: { type: 'string', enum: ['Approved', 'Rejected'] },
    contextResults: {
      type: 'array',
      items: {
        type: 'object',
        required: ['context', 'isValid', 'failures'],
        properties: {
          context: { type: 'string' },
          isValid: { type: 'boolean' },
          failures: { type: 'array', items: shortFailureSchema },
        },
      },
    },
    executionTimeMs: { type: 'integer' },
  },
} as const;
