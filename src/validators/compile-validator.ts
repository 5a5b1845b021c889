/**
 * From a live ruleset to a CompiledValidator: the compiler's steps run in
 * slices of time (time-slices.ts), plus the bookkeeping fields the
 * management API reports and the cost profile requests are weighed by.
 */
import { compileRulesetSteps } from '../../compiler/compile-ruleset.ts';
import type { CompileError, CompilerLimits } from '../../compiler/types.ts';
import type { CompiledValidator } from '../app-deps.ts';
import type { LiveRuleset } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';
import { costProfileOf, rememberCostProfile, rulesetCostProfileSteps } from './evaluation-cost.ts';
import { runInSlices } from './time-slices.ts';

/** What a compile produced: a validator, or the reasons there is none. */
export interface CompileOutcome {
  validator?: CompiledValidator;
  errors: CompileError[];
  /** Time spent compiling, without the waits between slices. */
  compileMs: number;
}

/** Runs a compile's steps: in slices on the event loop (the default), or at once on a management thread. */
export type StepRunner = <T>(steps: Generator<unknown, T, void>) => Promise<T>;

/**
 * Compiles a ruleset. A ruleset with any compile error yields no validator:
 * leaving a broken rule out silently would validate payloads against less
 * than what was published.
 */
export async function compileValidator(
  ruleset: LiveRuleset, limits: Partial<CompilerLimits>, run: StepRunner = (steps) => runInSlices(steps),
): Promise<CompileOutcome> {
  const compiled = await run(compileRulesetSteps(ruleset.rules, { limits }));
  if (compiled.errors.length > 0) return { errors: compiled.errors, compileMs: compiled.compileMs };
  // Worked out here, on publish, so that no request pays for it.
  const profile = await run(rulesetCostProfileSteps(ruleset.rules));
  const validator: CompiledValidator = Object.freeze({
    tenantId: ruleset.tenantId,
    context: ruleset.context,
    rulesetVersion: ruleset.rulesetVersion,
    validate: compiled.validate,
    // A getter, as in the compiler: read when an admin asks, not kept as a copy.
    get source() {
      return compiled.source;
    },
    ruleCount: compiled.ruleCount,
    estimatedBytes: estimatedBytes(compiled.footprint),
    compileMs: compiled.compileMs,
    compiledAt: new Date().toISOString(),
    ruleset,
  });
  rememberCostProfile(validator, profile);
  return { errors: [], validator, compileMs: compiled.compileMs };
}

/**
 * A compiled validator under another ruleset version of the same rules
 * (early-compile.ts): the compiled function, its figures and its cost
 * profile are the same; the version and the ruleset it serves are the new ones.
 */
export function withRuleset(validator: CompiledValidator, ruleset: LiveRuleset): CompiledValidator {
  const relabelled: CompiledValidator = Object.freeze({
    tenantId: validator.tenantId,
    context: validator.context,
    rulesetVersion: ruleset.rulesetVersion,
    validate: validator.validate,
    get source() {
      return validator.source;
    },
    ruleCount: validator.ruleCount,
    estimatedBytes: validator.estimatedBytes,
    compileMs: validator.compileMs,
    compiledAt: validator.compiledAt,
    ruleset,
  });
  rememberCostProfile(relabelled, costProfileOf(validator));
  return relabelled;
}

/**
 * Heap a cached validator holds, estimated from what it grows with. Measured
 * (heap after a full GC, bench/scaling.bench.ts and scratch runs at the
 * limits): 15-20 bytes per character of rule text for expressions,
 * messages and schemas alike (the rules' own copy, IR, generated code and
 * V8's compiled functions), 100-200 bytes per unit of regex weight on the
 * linear-time engine, and a few kilobytes per validator whatever its size.
 */
export function estimatedBytes(footprint: { textLength: number; patternWeight: number }): number {
  return TUNING.validatorBaseBytes.value
    + TUNING.validatorBytesPerTextCharacter.value * footprint.textLength
    + TUNING.validatorBytesPerPatternWeight.value * footprint.patternWeight;
}
