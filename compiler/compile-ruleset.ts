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
  let built = tryInstantiate(plans);
  if (!built.ok) {
    // Some rule passed every check yet its code does not run (an engine
    // limit, or a compiler bug): find it alone, report it, keep the rest.
    const kept: RulePlan[] = [];
    for (const plan of plans) {
      const alone = tryInstantiate([plan]);
      if (alone.ok) kept.push(plan);
      else errors.push(unbuildable(plan.code, alone.error));
    }
    plans.length = 0;
    plans.push(...kept);
    built = tryInstantiate(plans);
    if (!built.ok) throw built.error;
  }
  const { factory } = built;
  return {
    validate: built.validate,
    // Read back from V8, which keeps the text of every function it compiled
    // (Function.prototype.toString gives it exactly). Holding our own copy
    // as well was ~20% of a cached validator's heap; admins read the source
    // rarely, and reading it back costs a copy then.
    get source() {
      return sourceOf(factory);
    },
    compileMs: performance.now() - started,
    ruleCount: plans.length,
    errors,
  };
}

/** The generated source of an instantiated factory: the parenthesized function expression `generateRuleset` wrote. */
function sourceOf(factory: Factory): string {
  return `(${Function.prototype.toString.call(factory)})`;
}

/** Generates and instantiates the validator of already ordered plans. */
export function tryInstantiate(
  plans: readonly RulePlan[],
): { ok: true; validate: ValidatorFn; factory: Factory } | { ok: false; error: unknown } {
  try {
    const { source, refs } = generateRuleset(plans);
    // The source is an expression (a factory), so that the very same text can
    // be bundled as a module later; `new Function` runs it once per ruleset.
    const factory = new Function(`return ${source};`)() as Factory;
    return { ok: true, validate: factory(runtime, refs), factory };
  } catch (error) {
    return { ok: false, error };
  }
}

/** The compile error of a rule whose generated code could not be instantiated. */
export function unbuildable(ruleCode: string, error: unknown): CompileError {
  const tooDeep = error instanceof RangeError;
  return {
    ruleCode,
    field: 'expression',
    code: tooDeep ? 'TOO_DEEP' : 'INVALID_RULE',
    message: tooDeep ? 'the rule is too deeply nested to compile' : 'the rule could not be compiled',
  };
}
