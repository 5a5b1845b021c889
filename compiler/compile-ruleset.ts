/**
 * A context's live rules to one validator: plan every enabled rule, leave
 * out (and report) the ones that do not compile, order the rest by
 * priority then code, generate one factory, instantiate it once.
 */
import type { CompiledRuleset, CompileError, CompileOptions, RuleDefinition, ValidatorFn } from './types.ts';
import { resolveLimits } from './limits.ts';
import { planRule, type RulePlan } from './rule-plan.ts';
import { generateRuleset } from './ruleset-source.ts';
import { runtime, type Runtime } from './runtime.ts';

type Factory = (rt: Runtime, refs: Readonly<Record<string, unknown>>) => ValidatorFn;

/** UTF-16 order, as product.md 2.1 sorts codes; not locale order. */
function byPriorityThenCode(a: RulePlan, b: RulePlan): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  return a.code < b.code ? -1 : a.code > b.code ? 1 : 0;
}

/**
 * The first half of `compileRuleset`: every enabled rule planned, in
 * evaluation order, and the compile errors of the others. The standalone
 * module builder starts from here too, so both order rules alike.
 */
export function planRuleset(rules: RuleDefinition[], options?: CompileOptions): { plans: RulePlan[]; errors: CompileError[] } {
  const limits = resolveLimits(options);
  const errors: CompileError[] = [];
  const plans: RulePlan[] = [];
  for (const rule of rules) {
    if (rule !== null && typeof rule === 'object' && rule.enabled === false) continue;
    const planned = planRule(rule, limits);
    if (planned.ok) plans.push(planned.plan);
    else errors.push(...planned.errors);
  }
  plans.sort(byPriorityThenCode);
  return { plans, errors };
}

/**
 * Compiles a ruleset into one validator. Disabled rules are ignored; rules
 * that do not compile are listed in `errors` and left out.
 *
 * @example
 * const { validate } = compileRuleset([{ code: 'A', name: 'Positive', fieldPath: 'amount', expression: '$value > 0' }]);
 * validate({ amount: -1 }, Date.now()).failures[0].fieldPath; // 'amount'
 */
export function compileRuleset(rules: RuleDefinition[], options?: CompileOptions): CompiledRuleset {
  const started = performance.now();
  const { plans, errors } = planRuleset(rules, options);
  const { source, refs } = generateRuleset(plans);
  // The source is an expression (a factory), so that the very same text can
  // be bundled as a module later; `new Function` runs it once per ruleset.
  const factory = new Function(`return ${source};`)() as Factory;
  const validate = factory(runtime, refs);
  return { validate, source, compileMs: performance.now() - started, ruleCount: plans.length, errors };
}
