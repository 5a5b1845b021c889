/**
 * Large rule sets for the compile-time curve: copies of the 20 loan rules
 * (so every kind is represented in the same mix, and the loan payloads
 * still exercise them) under unique codes. Each copy of the schema rule
 * gets its own limits, so a compiler cannot serve them all from one cached
 * schema, as a real tenant's distinct schemas would not be.
 */
import type { RuleDefinition } from '../../compiler/types.ts';
import { loanApplicationSuite } from './loan-application.ts';

/**
 * `count` rules cycling through the loan-application rules.
 *
 * @example
 * compileRuleset(generateRuleset(1000)).ruleCount // 1000
 */
export function generateRuleset(count: number): RuleDefinition[] {
  const templates = loanApplicationSuite.rules;
  const rules: RuleDefinition[] = [];
  for (let i = 0; i < count; i++) {
    const template = templates[i % templates.length];
    const copy = Math.floor(i / templates.length);
    const rule: RuleDefinition = { ...template, code: `${template.code}_${copy}`, name: `${template.name} #${copy}` };
    if (typeof template.schema === 'object') rule.schema = withLimits(template.schema, copy);
    rules.push(rule);
  }
  return rules;
}

function withLimits(schema: Record<string, unknown>, copy: number): Record<string, unknown> {
  const properties = schema.properties as Record<string, Record<string, unknown>>;
  return {
    ...schema,
    properties: { ...properties, line1: { ...properties.line1, maxLength: 100 + (copy % 400) } },
  };
}
