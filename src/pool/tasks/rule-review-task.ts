/**
 * A decision-table rule's save-time review on a management thread: the
 * compile check a save makes and the warnings the rule is answered with
 * (the table's analysis among them). Both grow with the table's rows, so
 * they are a heavy operation's work (src/rules/rule-review.ts).
 */
import { PayloadSchema } from '../../../compiler/index.ts';
import { ruleContentProblems, type RuleProblem } from '../../rules/check-rule-content.ts';
import { contentWarnings, type RuleWarning } from '../../rules/rule-warnings.ts';
import type { RuleContent } from '../../storage/types.ts';

export interface RuleReviewInput {
  code: string;
  content: RuleContent;
  maxExpressionLength: number;
  maxTableRows: number;
  /** Whether to check that the rule compiles (a save), besides working out its warnings. */
  check: boolean;
  /** The context's payload schema as stored (null: none), for the warnings. */
  payloadSchema: unknown;
}

export interface RuleReviewOutput {
  /** What a save would be refused for; [] when it compiles (and always when `check` is false). */
  problems: RuleProblem[];
  /** The warnings; [] while there are problems. */
  warnings: RuleWarning[];
}

/**
 * @example
 * await runRuleReviewTask({ code: 'LIMIT', content, maxExpressionLength: 4096, maxTableRows: 10000, check: true, payloadSchema: null });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- every task answers a promise
export async function runRuleReviewTask(input: RuleReviewInput): Promise<RuleReviewOutput> {
  const { code, content, maxExpressionLength, maxTableRows } = input;
  if (input.check) {
    const problems = ruleContentProblems(code, content, { maxExpressionLength, maxTableRows });
    if (problems.length > 0) return { problems, warnings: [] };
  }
  const schema = input.payloadSchema === null || input.payloadSchema === undefined ? undefined : new PayloadSchema(input.payloadSchema);
  return { problems: [], warnings: contentWarnings(code, content, schema, maxExpressionLength) };
}
