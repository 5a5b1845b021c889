/**
 * JSON Schemas of POST /rules/test: a rule with a payload, or a context
 * (draft or live) with a payload. Which form was sent is checked in the
 * handler, where the 400 can name the field instead of ajv's `oneOf` noise.
 */
import { CONTEXT_PATTERN, testRuleSchema } from './rule-schemas.ts';

export const ruleTestBodySchema = {
  type: 'object',
  description: 'A payload, with either a rule or a context (not both).',
  required: ['payload'],
  additionalProperties: false,
  properties: {
    rule: testRuleSchema,
    context: {
      type: 'string',
      pattern: CONTEXT_PATTERN,
      description: 'Test this context\'s ruleset instead of one rule.',
      examples: ['loan-application'],
    },
    draft: {
      type: 'boolean',
      description: 'With context: true tests the ruleset a context publish would make live, false (default) the live one.',
    },
    payload: { type: 'object', description: 'The JSON object to evaluate.', examples: [{ amount: 60000 }] },
  },
  examples: [{
    rule: {
      code: 'AMOUNT_LIMIT',
      name: 'Loan amount limit',
      fieldPath: 'amount',
      expression: 'amount <= 50000',
      message: 'Amount {{ $value }} exceeds the limit of {{ $expected }}',
    },
    payload: { amount: 60000 },
  }],
} as const;

