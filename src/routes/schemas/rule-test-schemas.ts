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

