/**
 * JSON Schemas of POST /rules/test: a rule with a payload, or a context
 * (draft or live) with a payload. Which form was sent is checked in the
 * handler, where the 400 can name the field instead of ajv's `oneOf` noise.
 */
import { singleResultResponseSchema } from './result-schemas.ts';
import { CONTEXT_PATTERN, testRuleSchema } from './rule-schemas.ts';
import { traceSchema } from './trace-schemas.ts';

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
    explain: {
      type: 'boolean',
      description: 'true: the answer adds `trace`, what became of each rule (passed, failed or skipped, and why).',
    },
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


const single = singleResultResponseSchema.properties;

/**
 * What POST /rules/test answers: a single validation's result, with the
 * tested rule's warnings (empty when a context was tested). executionTimeMs stays last
 * (validation-answers.ts: it is read as the serializer reaches it).
 */
export const ruleTestResultSchema = {
  $id: 'RuleTestResult',
  type: 'object',
  description: 'The result of the test, as a single validation answers it, and the tested rule\'s warnings.',
  // fast-json-stringify writes required keys first, in this order: executionTimeMs must stay last.
  required: ['isValid', 'totalRulesEvaluated', 'failures', 'warnings', 'executionTimeMs'],
  properties: {
    isValid: single.isValid,
    totalRulesEvaluated: single.totalRulesEvaluated,
    failures: single.failures,
    warnings: {
      type: 'array',
      description: 'With `rule`: its warnings against the payload schema of its `context`, empty when there is nothing to say. '
        + 'With `context`: empty (each rule\'s warnings come with GET /rules/{id}).',
      items: { $ref: 'RuleWarning#' },
    },
    trace: traceSchema,
    executionTimeMs: single.executionTimeMs,
  },
  examples: [{ isValid: true, totalRulesEvaluated: 1, failures: [], warnings: [], executionTimeMs: 0 }],
} as const;

/** The shared schemas of this module. */
export const ruleTestSchemas = [ruleTestResultSchema] as const;
