/**
 * A context's live rules to one validator: plan every enabled rule, leave
 * out (and report) the ones that do not compile, order the rest by
 * priority then code, generate the factory, instantiate it once.
 *
 * Each stage is also a generator of small steps (`compileRulesetSteps`):
 * one rule planned, one rule generated, one part instantiated. The service
 * runs the steps a slice of time at a time, so that publishing a context
 * of thousands of large rules never holds the event loop that every tenant
 * shares; `compileRuleset` runs them all at once.
 */
import type { CompiledRuleset, CompileError, CompileOptions, RuleDefinition, SourceEvaluator, ValidatorFn } from './types.ts';
import { MAX_RULESET_TEXT_LENGTH, resolveLimits } from './limits.ts';
import { planRule, ruleTextLength, type RulePlan } from './rule-plan.ts';
import { composeParts, generateRulesetSteps, PART_LIMITS, type GenerateOptions, type PlainPartsFrame, type RefOrigin } from './ruleset-source.ts';
import { runtime, type Runtime } from './runtime.ts';
import { costProfileOf, type CostProfile } from './analysis/cost-pass.ts';
import { runSteps, TURN, type Steps, type TurnSteps } from './steps.ts';
import { MAX_CONTEXT_PATTERN_WEIGHT, PatternWeights } from './regex/pattern-size.ts';

type Factory = (rt: Runtime, refs: Readonly<Record<string, unknown>>) => ValidatorFn;
/** The factory of one part of a large ruleset; its function adds to `failures` and returns how many rules it evaluated. */
type PartFn = (payload: unknown, now: number, failures: unknown[]) => number;
type PartFactory = (rt: Runtime, refs: Readonly<Record<string, unknown>>) => PartFn;


/** UTF-16 order, as docs/rule-language.md sorts codes; not locale order. */
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
  return runSteps(planRulesetSteps(rules, options));
}

/**
 * `planRuleset`, one rule a step. Two bounds of the ruleset as a whole
 * keep a compile's memory and time in check: its rules' text may hold
 * MAX_RULESET_TEXT_LENGTH characters, and their distinct regex patterns
 * may weigh MAX_CONTEXT_PATTERN_WEIGHT (regex/pattern-size.ts). Planning
 * stops at the rule that would pass either, with a LIMIT_EXCEEDED error
 * for it; the rules after it are neither planned nor reported, since
 * planning them would only cost more for a ruleset that cannot go live.
 */
export function* planRulesetSteps(rules: RuleDefinition[], options?: CompileOptions): Steps<{ plans: RulePlan[]; errors: CompileError[] }> {
  const limits = resolveLimits(options);
  const errors: CompileError[] = [];
  const plans: RulePlan[] = [];
  const patterns = new PatternWeights();
  let textLength = 0;
  for (const rule of rules) {
    if (rule !== null && typeof rule === 'object' && rule.enabled === false) continue;
    const ruleLength = ruleTextLength(rule);
    textLength += ruleLength;
    if (textLength > MAX_RULESET_TEXT_LENGTH) {
      errors.push(textBudgetError(rule, textLength));
      break;
    }
    const planned = planRule(rule, limits, ruleLength);
    if (!planned.ok) {
      errors.push(...planned.errors);
    } else {
      const { plan } = planned;
      const weight = patterns.totalWith(plan.patterns);
      if (weight > MAX_CONTEXT_PATTERN_WEIGHT) {
        errors.push(patternBudgetError(plan, weight));
        break;
      }
      patterns.addAll(plan.patterns);
      plans.push(plan);
    }
    yield;
  }
  plans.sort(byPriorityThenCode);
  return { plans, errors };
}

function textBudgetError(rule: RuleDefinition, total: number): CompileError {
  return {
    ruleCode: rule !== null && typeof rule === 'object' && typeof rule.code === 'string' ? rule.code : '',
    field: 'code',
    code: 'LIMIT_EXCEEDED',
    message:
      `with this rule, the ruleset's rules hold ${total} characters of text (names, expressions, conditions, messages` +
      `, schemas and expected values); the limit is ${MAX_RULESET_TEXT_LENGTH}`,
  };
}

function patternBudgetError(plan: RulePlan, total: number): CompileError {
  return {
    ruleCode: plan.code,
    field: plan.expression === undefined && plan.schema !== undefined ? 'schema' : 'expression',
    code: 'LIMIT_EXCEEDED',
    message:
      `with this rule, the distinct regex patterns of the ruleset weigh ${total} together; the limit is ` +
      `${MAX_CONTEXT_PATTERN_WEIGHT} (each distinct pattern counts once, with the steps of its program on the linear-time ` +
      'engine, a tenth of them on the native engine; a repetition count such as {100} multiplies what it repeats)',
  };
}

/**
 * The cost profile of the rules that compile (analysis/cost-pass.ts),
 * without generating code: what `compileRuleset` returns as `costProfile`.
 *
 * @example
 * rulesetCostProfile([{ code: 'A', name: 'a', expression: 'a.every(x => a.some(y => y == x))' }]); // [0, 0, 0, 2]
 */
export function rulesetCostProfile(rules: RuleDefinition[], options?: CompileOptions): CostProfile {
  return costProfileOf(planRuleset(rules, options).plans.map((plan) => plan.cost));
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
  return runSteps(compileRulesetSteps(rules, options));
}

/**
 * `compileRuleset` in steps. `compileMs` counts the time spent in the
 * steps, not the time between them.
 */
export function* compileRulesetSteps(rules: RuleDefinition[], options?: CompileOptions): Steps<CompiledRuleset> {
  let busyMs = 0;
  let resumedAt = performance.now();
  // Every step of the stages below passes through here, so that only the
  // time spent compiling is counted.
  function* timed<T>(steps: Steps<T>): Steps<T> {
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
      busyMs += performance.now() - resumedAt;
      yield;
      resumedAt = performance.now();
    }
  }

  const { plans, errors } = yield* timed(planRulesetSteps(rules, options));
  const evaluateSource = options?.evaluate ?? evaluate;
  let built = yield* timed(instantiateSteps(plans, undefined, evaluateSource));
  if (!built.ok) {
    // Some rule passed every check yet its code does not run (an engine
    // limit, or a compiler bug): find it alone, report it, keep the rest.
    const kept: RulePlan[] = [];
    for (const plan of plans) {
      const alone = yield* timed(instantiateSteps([plan], undefined, evaluateSource));
      if (alone.ok) kept.push(plan);
      else errors.push(unbuildable(plan.code, alone.error));
    }
    built = yield* timed(instantiateSteps(kept, undefined, evaluateSource));
    if (!built.ok) throw built.error;
    plans.length = 0;
    plans.push(...kept);
  }
  busyMs += performance.now() - resumedAt;
  const { source, generated } = built;
  return {
    validate: built.validate,
    get source() {
      return source();
    },
    generated,
    compileMs: busyMs,
    ruleCount: plans.length,
    footprint: footprintOf(plans),
    errors,
    costProfile: costProfileOf(plans.map((plan) => plan.cost)),
  };
}

function footprintOf(plans: readonly RulePlan[]): CompiledRuleset['footprint'] {
  let textLength = 0;
  const patterns = new PatternWeights();
  for (const plan of plans) {
    textLength += plan.textLength;
    patterns.addAll(plan.patterns);
  }
  return { textLength, patternWeight: patterns.total };
}

/**
 * The generated code of a compiled validator as plain data, read back from
 * V8 when asked for: what another thread needs to instantiate the very
 * same validator without compiling the rules again (`instantiateGeneratedSteps`),
 * given the refs rebuilt from `origins`.
 */
export interface GeneratedValidator {
  layout: GeneratedCode;
  origins: Readonly<Record<string, RefOrigin>>;
}

/** One factory, or the parts' factories and the combiner that calls them in order. */
export type GeneratedCode =
  | { kind: 'whole'; source: string }
  | { kind: 'parts'; partSources: string[]; combinerSource: string; frame: PlainPartsFrame };

/** An instantiated validator and ways to read its source and generated code back. */
type Built = { ok: true; validate: ValidatorFn; source: () => string; generated: () => GeneratedValidator } | { ok: false; error: unknown };

/** Generates and instantiates the validator of already ordered plans, at once. */
export function tryInstantiate(plans: readonly RulePlan[]): Built {
  return runSteps(instantiateSteps(plans));
}

/**
 * Generates and instantiates the validator of already ordered plans: a
 * step per rule generated, and one per part instantiated. Each part is
 * called once on an empty payload as it is made, because V8 compiles a
 * function on its first call: the first request after a publish would
 * otherwise pay for all of them at once.
 *
 * The source is read back from V8, which keeps the text of every function
 * it compiled (Function.prototype.toString gives it exactly). Holding our
 * own copy as well took a sizeable share of a cached validator's heap;
 * admins read the source rarely, and reading it back costs a copy then.
 */
export function* instantiateSteps(plans: readonly RulePlan[], options?: GenerateOptions, evaluateSource: SourceEvaluator = evaluate): Steps<Built> {
  try {
    const steps = generateRulesetSteps(plans, PART_LIMITS, options);
    const parts: InstantiatedPart[] = [];
    for (;;) {
      const step = steps.next();
      if (step.done) {
        const generated = step.value;
        const { origins } = generated;
        if (generated.kind === 'whole') {
          // The source is an expression (a factory), so that the very same text
          // can be bundled as a module later; `new Function` runs it once.
          const factory = evaluateSource(generated.source) as Factory;
          const source = (): string => sourceOf(factory);
          return { ok: true, validate: factory(runtime, generated.refs), source, generated: () => ({ layout: { kind: 'whole', source: source() }, origins }) };
        }
        const frame = generated.frame.plain();
        const combinerSource = generated.frame.combinerSource();
        const partSources = (): string[] => parts.map((part) => sourceOf(part.factory));
        return {
          ok: true,
          validate: combine(combinerSource, parts),
          source: () => composeParts(frame, partSources()),
          generated: () => ({ layout: { kind: 'parts', partSources: partSources(), combinerSource, frame }, origins }),
        };
      }
      if (step.value !== undefined) parts.push(partOf(evaluateSource(step.value.source) as PartFactory, step.value.refs));
      yield;
    }
  } catch (error) {
    return { ok: false, error };
  }
}

interface InstantiatedPart {
  factory: PartFactory;
  fn: PartFn;
}

/** A part's evaluated factory instantiated over `refs`, and its function called once so that V8 compiles it now. */
function partOf(factory: PartFactory, refs: Readonly<Record<string, unknown>>): InstantiatedPart {
  const fn = factory(runtime, refs);
  fn({}, Date.now(), []);
  return { factory, fn };
}

/** The validate function of a ruleset in parts, over its instantiated parts. */
function combine(combinerSource: string, parts: readonly InstantiatedPart[]): ValidatorFn {
  const combiner = evaluate(combinerSource) as (rt: Runtime, ...fns: PartFn[]) => ValidatorFn;
  return combiner(runtime, ...parts.map((part) => part.fn));
}

/**
 * A validator instantiated from code generated elsewhere (another thread's
 * `generated()`), over refs rebuilt from its origins: the same functions
 * `instantiateSteps` makes, with no rule parsed or planned again. The
 * source reads back as the compiling thread's did.
 *
 * Two steps a part, each ending with `TURN`: a part (at most PART_LIMITS
 * of rules) is evaluated in a turn of the event loop of its own, then
 * instantiated and called once in another, so that a ruleset of thousands
 * of rules never holds the installing thread for more than half a part.
 * A ruleset in one piece is one step. Nothing is shared until the last step
 * returns the validator, so the caller switches to it at once.
 *
 * @example
 * const { validate } = runSteps(instantiateGeneratedSteps(build.code, refs));
 */
export function* instantiateGeneratedSteps(
  code: GeneratedCode, refs: Readonly<Record<string, unknown>>, evaluateSource: SourceEvaluator = evaluate,
): TurnSteps<{ validate: ValidatorFn; source: () => string }> {
  if (code.kind === 'whole') {
    const factory = evaluateSource(code.source) as Factory;
    return { validate: factory(runtime, refs), source: () => sourceOf(factory) };
  }
  const parts: InstantiatedPart[] = [];
  for (const source of code.partSources) {
    // Parsing a part and compiling its function on the first call cost about as much each: a turn apiece.
    const factory = evaluateSource(source) as PartFactory;
    yield TURN;
    parts.push(partOf(factory, refs));
    yield TURN;
  }
  const { frame } = code;
  return {
    validate: combine(code.combinerSource, parts),
    source: () => composeParts(frame, parts.map((part) => sourceOf(part.factory))),
  };
}

/** A generated factory expression, evaluated: the default SourceEvaluator. */
function evaluate(source: string): unknown {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval, @typescript-eslint/no-unsafe-call -- source generated from the whitelisted AST, by design
  return new Function(`return ${source};`)();
}

/** The generated source of an instantiated factory: the parenthesized function expression the generator wrote. */
function sourceOf(factory: (...args: never[]) => unknown): string {
  return `(${Function.prototype.toString.call(factory)})`;
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
