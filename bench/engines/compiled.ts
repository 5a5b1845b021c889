/**
 * The engine under test: rules compiled by `compiler/` into one validator.
 * A benchmark of a ruleset that did not compile whole would time fewer
 * rules than it claims, so any compile error stops the run.
 */
import { compileRuleset } from '../../compiler/index.ts';
import type { CompiledRuleset, RuleDefinition } from '../../compiler/types.ts';

/**
 * Compiles `rules` and throws, listing the errors, unless every rule compiled.
 *
 * @example
 * const { validate } = compileOrThrow(loanApplicationSuite.rules);
 */
export function compileOrThrow(rules: readonly RuleDefinition[]): CompiledRuleset {
  const compiled = compileRuleset([...rules]);
  if (compiled.errors.length > 0) {
    const list = compiled.errors.map((e) => `  ${e.ruleCode}.${e.field}: ${e.code} ${e.message}`).join('\n');
    throw new Error(`compileRuleset refused ${compiled.errors.length} rule(s) of the benchmark:\n${list}`);
  }
  const enabled = rules.filter((r) => r.enabled !== false).length;
  if (compiled.ruleCount !== enabled) {
    throw new Error(`compileRuleset compiled ${compiled.ruleCount} rules, expected ${enabled}`);
  }
  return compiled;
}
