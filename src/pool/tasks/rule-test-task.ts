/**
 * POST /rules/test's evaluation on a management thread: the ruleset (one
 * rule, or a context's) compiled, and the payload evaluated under the same
 * deadline, failure bound and answer-size limit as a validation's.
 */
import type { TraceEntry } from '../../../compiler/explain-ruleset.ts';
import type { CompilerLimits, FailureRecord } from '../../../compiler/types.ts';
import { checkPayload, sizeOf, type PayloadSize } from '../../http/payload-guard.ts';
import type { LiveRuleset } from '../../storage/types.ts';
import { assertAnswerFits, assertExplainedAnswerFits } from '../../validators/answer-size.ts';
import { evaluateBounded } from '../../validators/bounded-evaluation.ts';
import { costProfileOf, estimateCost } from '../../validators/evaluation-cost.ts';
import { reportItems, type TaskProgress } from '../task-progress.ts';
import { compileForTask } from './compile-for-task.ts';

export interface RuleTestInput {
  ruleset: LiveRuleset;
  payload: Record<string, unknown>;
  explain: boolean;
  /** Put before each compile error's field path (`rule.` when the body held the rule). */
  pathPrefix: string;
  compilerLimits: Partial<CompilerLimits>;
  maxPayloadDepth: number;
  maxAnswerBytes: number;
}

export interface RuleTestOutput {
  isValid: boolean;
  totalRulesEvaluated: number;
  failures: FailureRecord[];
  trace?: TraceEntry[];
}

/**
 * The payload's result; a ProblemError when the ruleset does not compile or
 * the evaluation is refused.
 *
 * @example
 * await runRuleTestTask({ ruleset, payload: { amount: 5 }, explain: false, pathPrefix: 'rule.', compilerLimits, maxPayloadDepth: 64, maxAnswerBytes });
 */
export async function runRuleTestTask(input: RuleTestInput, progress?: TaskProgress): Promise<RuleTestOutput> {
  const { validator, explain } = await compileForTask(input.ruleset, input.compilerLimits, { explain: input.explain, pathPrefix: input.pathPrefix });
  reportItems(progress, 0, 1);
  // The route checked the payload already; measured again here for its cost.
  const size: PayloadSize = { values: 0, characters: 0 };
  checkPayload(input.payload, 'payload', input.maxPayloadDepth, size);
  const now = Date.now();
  const cost = estimateCost(costProfileOf(validator), sizeOf(size));
  // Explained, the explaining variant answers instead: the same failures, and the trace.
  let trace: TraceEntry[] | undefined;
  const result = evaluateBounded(cost, 'payload', () => {
    if (explain === undefined) return validator.validate(input.payload, now);
    const explained = explain(input.payload, now);
    trace = explained.trace;
    return explained;
  });
  if (trace === undefined) assertAnswerFits(result.failures, input.maxAnswerBytes, 'payload');
  else assertExplainedAnswerFits(result.failures, trace, input.maxAnswerBytes, 'payload');
  const output: RuleTestOutput = { isValid: result.isValid, totalRulesEvaluated: result.totalRulesEvaluated, failures: [...result.failures] };
  if (trace !== undefined) output.trace = trace;
  return output;
}
