/**
 * The cost of evaluating a payload, so that only requests that could run
 * long pay for a deadline (evaluation-deadline.ts).
 *
 * The compiler works out each rule's worst case as a pass over its IR
 * (compiler/analysis/cost-pass.ts: a degree d, the rule taking at most
 * about weight × n^d steps on a payload of size n, values plus string
 * characters) and returns the ruleset's cost profile with the compiled
 * ruleset; compile-validator.ts keeps it in the validator. Here the
 * profile meets the payload's size, measured by the payload guard
 * (src/http/payload-guard.ts), on every request.
 */
import type { CostProfile } from '../../compiler/index.ts';
import type { CompiledValidator } from './compiled-validator.ts';

export type { CostProfile } from '../../compiler/index.ts';

/** The cost profile the compile of a validator returned. */
export function costProfileOf(validator: CompiledValidator): CostProfile {
  return validator.costProfile;
}

/**
 * Upper estimate of the steps a ruleset takes on a payload of `size`
 * (values plus characters), per payload.
 *
 * @example
 * estimateCost([0, 20, 5], 50); // 20 * 50 + 5 * 2500
 */
export function estimateCost(profile: CostProfile, size: number): number {
  let total = 0;
  const n = Math.max(1, size);
  for (let degree = 0; degree < profile.length; degree++) {
    if (profile[degree] > 0) total += profile[degree] * n ** degree;
  }
  return total;
}
