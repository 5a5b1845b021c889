/**
 * The save-time check of one rule (docs/rule-language.md: "Saving compiles the
 * rule"): the same planning `compileRuleset` does, errors only.
 */
import type { CompileError, CompileOptions, RuleDefinition } from './types.ts';
import { resolveLimits } from './limits.ts';
import { planRule } from './rule-plan.ts';
import { tryInstantiate, unbuildable } from './compile-ruleset.ts';

/**
 * Compile errors of one rule; `[]` when it compiles. A disabled rule is
 * checked too: it can be enabled later without another save-time check.
 *
 * @example
 * checkRule({ code: 'A', name: 'A', expression: 'new Date()' });
 * // [{ ruleCode: 'A', field: 'expression', code: 'NOT_ALLOWED', message: '`new` is not allowed', line: 1, column: 1 }]
 */
export function checkRule(rule: RuleDefinition, options?: CompileOptions): CompileError[] {
  const planned = planRule(rule, resolveLimits(options));
  if (!planned.ok) return planned.errors;
  // Building the rule's code as well makes "saved" mean "will compile at publish".
  const built = tryInstantiate([planned.plan]);
  return built.ok ? [] : [unbuildable(planned.plan.code, built.error)];
}
