/**
 * From request bodies to the domain: a rule body (already checked against
 * rule-schemas.ts) becomes the RuleContent storage keeps, with the defaults
 * of the rule's schema (compiler/rule-schema.ts) applied. The body types
 * are derived from the very schemas the routes validate with.
 */
import type { FromSchema } from 'json-schema-to-ts';
import {
  RULE_CONTENT_DEFAULTS,
  RULE_CONTENT_FIELDS,
  type RuleContent,
  type RuleContentInput,
} from '../../../compiler/rule-schema.ts';
import type { createRuleBodySchema, testRuleSchema, updateRuleBodySchema } from './rule-schemas.ts';

/** POST /rules. */
export type CreateRuleBody = FromSchema<typeof createRuleBodySchema>;

/** PUT /rules/{id}. Server-managed fields may be present; they are ignored. */
export type UpdateRuleBody = FromSchema<typeof updateRuleBodySchema>;

/** The rule of POST /rules/test. */
export type TestRuleBody = FromSchema<typeof testRuleSchema>;

/**
 * The content to store. Omitted optional fields take their defaults (a PUT
 * replaces the whole content, so leaving a field out resets it); absent
 * optional strings stay absent so that defaults derived from other fields
 * (`errorCode` from the code, `message` from the name) keep following them.
 * A null expectedValue means "none" (one is inferred then), like an absent one.
 *
 * @example
 * toRuleContent({ name: 'Amount set', required: true, fieldPath: 'amount' });
 * // { name: 'Amount set', severity: 'Error', fieldPath: 'amount', required: true, priority: 0, enabled: true, tags: [] }
 */
export function toRuleContent(body: RuleContentInput): RuleContent {
  const defaults: Partial<Record<string, unknown>> = RULE_CONTENT_DEFAULTS;
  const content: Record<string, unknown> = {};
  for (const field of RULE_CONTENT_FIELDS) {
    const value = body[field] ?? defaults[field];
    if (value !== undefined) content[field] = value;
  }
  // A fresh array: the default one is shared.
  content.tags = [...(body.tags ?? RULE_CONTENT_DEFAULTS.tags)];
  return content as RuleContent;
}
