/**
 * GET /contexts/{context}/diff's comparison on a management thread: two
 * rulesets of up to MAX_RULES_PER_CONTEXT rules each, matched by code and
 * compared field by field.
 */
import { diffRulesets, type RulesetDiff } from '../../storage/ruleset-diff.ts';
import type { RuleSnapshot } from '../../storage/types.ts';

export interface DiffInput {
  before: RuleSnapshot[];
  after: RuleSnapshot[];
}

/**
 * What changed from `before` to `after`.
 *
 * @example
 * await runDiffTask({ before: live.rules, after: draft.rules }); // { added: [...], removed: [...], changed: [...] }
 */
// eslint-disable-next-line @typescript-eslint/require-await -- every task answers a promise
export async function runDiffTask(input: DiffInput): Promise<RulesetDiff> {
  return diffRulesets(input.before, input.after);
}
