/**
 * The `trace` of an explained rule test or test run (`explain: true`):
 * what became of each rule of the ruleset on the payload.
 */
export const traceEntrySchema = {
  $id: 'RuleTraceEntry',
  type: 'object',
  description: 'What became of one rule on the payload.',
  required: ['ruleCode', 'outcome', 'fieldPath'],
  properties: {
    ruleCode: { type: 'string', description: 'The rule\'s code.', examples: ['AMOUNT_LIMIT'] },
    outcome: {
      type: 'string',
      enum: ['passed', 'failed', 'skipped'],
      description: '`failed`: it reported at least one failure; `skipped`: it did not run (see `reason`); `passed` otherwise.',
      examples: ['failed'],
    },
    reason: {
      type: 'string',
      enum: ['when-false', 'field-missing', 'disabled'],
      description: 'Skipped rules only: `when-false` (its `when` did not hold), `field-missing` (its field, or its forEach list, '
        + 'was missing and it is not required), `disabled` (enabled: false).',
      examples: ['when-false'],
    },
    fieldPath: { type: 'string', description: 'The rule\'s fieldPath as written; empty when it has none.', examples: ['amount'] },
    value: { description: 'The value at fieldPath (any JSON), for rules outside forEach whose field is present.', examples: [60000] },
    expected: { description: 'The rule\'s expected value, given or inferred (any JSON), when it has one.', examples: [50000] },
    elements: {
      type: 'array',
      description: 'forEach rules that ran: the indexes of the elements that failed.',
      items: { type: 'integer' },
      examples: [[1, 3]],
    },
  },
  examples: [{ ruleCode: 'AMOUNT_LIMIT', outcome: 'failed', fieldPath: 'amount', value: 60000, expected: 50000 }],
} as const;

/** `trace`: one entry per rule of the ruleset, disabled ones included, in the order failures are reported. */
export const traceSchema = {
  type: 'array',
  description: 'With `explain: true` only: one entry per rule of the ruleset (disabled ones included), in the order failures '
    + 'are reported (priority, then code).',
  items: { $ref: 'RuleTraceEntry#' },
} as const;

export const traceSchemas = [traceEntrySchema] as const;
