/**
 * POST /rules/check's compile check on a management thread: every problem
 * a save of the rule would be refused for (its expressions parsed and
 * planned, its schema compiled under the schema policy).
 */
import type { RuleContent } from '../../storage/types.ts';
import { ruleContentProblems, type RuleProblem } from '../../rules/check-rule-content.ts';

export interface RuleCheckInput {
  code: string;
  content: RuleContent;
  maxExpressionLength: number;
  maxTableRows: number;
}

/**
 * The rule's problems, [] when a save would take it.
 *
 * @example
 * await runRuleCheckTask({ code: 'LIMIT', content, maxExpressionLength: 4096, maxTableRows: 10000 }); // []
 */
// eslint-disable-next-line @typescript-eslint/require-await -- every task answers a promise
export async function runRuleCheckTask(input: RuleCheckInput): Promise<RuleProblem[]> {
  return ruleContentProblems(input.code, input.content, { maxExpressionLength: input.maxExpressionLength, maxTableRows: input.maxTableRows });
}
