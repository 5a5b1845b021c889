/**
 * The cost of evaluating a payload, so that only requests that could run
 * long pay for a deadline (evaluation-deadline.ts).
 *
 * The compiler works out each rule's worst case as a pass over its IR
 * (compiler/analysis/cost-pass.ts: a degree d, the rule taking at most
 * about weight × n^d steps on a payload of size n, values plus string
 * characters) and returns the ruleset's cost profile with the compiled
 * ruleset; compile-validator.ts remembers it with the validator. Here the
 * profile meets the payload's size, measured by the payload guard
 * (src/http/payload-guard.ts), on every request.
 */
import { rulesetCostProfile, type CostProfile } from '../../compiler/index.ts';
import type { CompiledValidator } from './compiled-validator.ts';

export type { CostProfile } from '../../compiler/index.ts';

const profiles = new WeakMap<CompiledValidator, CostProfile>();

/** Records the profile the compile of a validator returned. */
export function rememberCostProfile(validator: CompiledValidator, profile: CostProfile): void {
  profiles.set(validator, profile);
}

/**
 * The cost profile of a compiled validator: the one its compile returned,
 * or for a validator made some other way, worked out once from its rules.
 */
export function costProfileOf(validator: CompiledValidator): CostProfile {
  let profile = profiles.get(validator);
  if (profile === undefined) {
    profile = rulesetCostProfile(validator.ruleset.rules);
    profiles.set(validator, profile);
  }
  return profile;
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
