/**
 * JSON Schemas of POST /rules/test: a rule with a payload, or a context
 * (draft or live) with a payload. Which form was sent is checked in the
 * handler, where the 400 can name the field instead of ajv's `oneOf` noise.
 */
import { CONTEXT_PATTERN, testRuleSchema } from './rule-schemas.ts';

export const ruleTestBodySchema = {
  type: 'object',
  required: ['payload'],
  additionalProperties: false,
  properties: {
    rule: testRuleSchema,
    context: { type: 'string', pattern: CONTEXT_PATTERN },
    draft: { type: 'boolean' },
    payload: { type: 'object' },
  },
} as const;

const failureSchema = {
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

/** The single-validation result of the interface (4.1), keys in its order. */
export const singleResultResponseSchema = {
  type: 'object',
  required: ['isValid', 'totalRulesEvaluated', 'failures', 'executionTimeMs'],
  properties: {
    isValid: { type: 'boolean' },
    totalRulesEvaluated: { type: 'integer' },
    failures: { type: 'array', items: failureSchema },
    executionTimeMs: { type: 'integer' },
  },
} as const;
