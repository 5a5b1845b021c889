/**
 * JSON Schemas of POST /rules/check. The route's own schema takes any
 * object as `rule`: the rule's shape is checked in the handler, so that a
 * rule that is not yet a rule (a name still empty, a severity mistyped) is
 * answered 200 with its errors, as an editor calling on every keystroke
 * needs, rather than 400.
 */
import { testRuleSchema } from './rule-schemas.ts';

/** The rule a check takes: the rule of POST /rules/test (context optional, server-managed fields ignored). */
export const checkedRuleSchema = testRuleSchema;

export const ruleCheckBodySchema = {
  type: 'object',
  description: 'A rule, as POST /rules takes it; `context` is optional and names the payload schema to check it against.',
  required: ['rule'],
  additionalProperties: false,
  properties: {
    rule: {
      type: 'object',
      description: 'The rule to check: the fields of POST /rules (`code` and `name` required, `context` optional; '
        + 'server-managed fields, as a rule read with GET has them, are ignored). What is wrong with it is answered in `errors`, not as a 400.',
    },
  },
  examples: [{
    rule: { context: 'orders', code: 'BUSINESS_VAT', name: 'Business customers give a VAT id', when: 'customer.type == business', fieldPath: 'customer.vatId', required: true },
  }],
} as const;

/** One reason a checked rule would be refused. */
export const ruleCheckErrorSchema = {
  $id: 'RuleCheckError',
  type: 'object',
  description: 'One reason a save would refuse the rule. `line` and `column` place it in the field\'s text; a problem with the field as a whole is at line 1, column 1.',
  required: ['path', 'message', 'line', 'column'],
  properties: {
    path: { type: 'string', description: 'The rule field (`expression`, `when`, `schema`, `name`...); `""` for the rule as a whole.', examples: ['expression'] },
    message: { type: 'string', description: 'What is wrong there.', examples: ['`new` is not allowed'] },
    line: { type: 'integer', minimum: 1, description: '1-based line inside the field\'s text.', examples: [1] },
    column: { type: 'integer', minimum: 1, description: '1-based column inside the field\'s text.', examples: [7] },
  },
} as const;

/** POST /rules/check. */
export const ruleCheckResultSchema = {
  $id: 'RuleCheckResult',
  type: 'object',
  description: 'What a save of the rule would say: its errors (a save would answer 400) and its warnings. Nothing is stored.',
  required: ['ok', 'errors', 'warnings'],
  properties: {
    ok: { type: 'boolean', description: 'True when a save would accept the rule (warnings or not).', examples: [true] },
    errors: { type: 'array', description: 'Why a save would refuse the rule; empty when ok.', items: { $ref: 'RuleCheckError#' } },
    warnings: {
      type: 'array',
      description: 'The rule\'s warnings against its context\'s payload schema; empty when there is nothing to say.',
      items: { $ref: 'RuleWarning#' },
    },
  },
  examples: [{
    ok: true,
    errors: [],
    warnings: [{
      code: 'BARE_NAME',
      path: 'when',
      message: '`business` reads a payload field that the payload schema does not declare; to compare with the text, quote it: "business"',
      line: 1,
      column: 18,
      suggestion: '"business"',
    }],
  }],
} as const;

/** The shared schemas of this module. */
export const ruleCheckSchemas = [ruleCheckErrorSchema, ruleCheckResultSchema] as const;
