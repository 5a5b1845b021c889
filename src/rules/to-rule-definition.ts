/**
 * From stored content to what the compiler takes.
 */
import type { RuleDefinition } from '../../compiler/types.ts';
import type { RuleContent } from '../storage/types.ts';

/**
 * What the compiler sees of a rule: its code and evaluated fields (no
 * description or tags, which do not change evaluation).
 *
 * @example
 * toRuleDefinition('MAX_AMOUNT', content).code; // 'MAX_AMOUNT'
 */
export function toRuleDefinition(code: string, content: RuleContent): RuleDefinition {
  const rule: RuleDefinition = {
    code,
    name: content.name,
    severity: content.severity,
    required: content.required,
    priority: content.priority,
    enabled: content.enabled,
  };
  if (content.errorCode !== undefined) rule.errorCode = content.errorCode;
  if (content.fieldPath !== undefined) rule.fieldPath = content.fieldPath;
  if (content.expression !== undefined) rule.expression = content.expression;
  if (content.schema !== undefined) rule.schema = content.schema;
  if (content.when !== undefined) rule.when = content.when;
  if (content.forEach !== undefined) rule.forEach = content.forEach;
  if (content.message !== undefined) rule.message = content.message;
  if (content.expectedValue !== undefined) rule.expectedValue = content.expectedValue;
  return rule;
}
