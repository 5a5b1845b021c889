/**
 * The tasks a management thread runs, by kind (a stored-test run, a rule
 * test, an impact replay, a rule check, an import's checks and comparison
 * or its dry run, a diff, a live validator's compile): what each takes and
 * gives (plain data both ways: the main thread reads the database and sends what
 * the task needs; the task sends back what the answer needs), and the one
 * function the worker entry exports. A refusal the task meets (a ruleset
 * that does not compile, an evaluation past its deadline) comes back as the
 * problem the route answers, since error classes do not cross threads.
 */
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { ProblemError, type ProblemSpec } from '../errors.ts';
import { domainProblem } from '../http/problem-mapping.ts';
import type { RuleProblem } from '../rules/check-rule-content.ts';
import type { ImpactReport } from '../rules/impact-report.ts';
import type { RulesetDiff } from '../storage/ruleset-diff.ts';
import type { ValidatorBuild } from '../validators/compile-validator.ts';
import { answerJson, type AnswerForm, type AnswerJson } from './answer-json.ts';
import type { TaskProgress } from './task-progress.ts';
import { runCompileTask, type CompileInput } from './tasks/compile-task.ts';
import { runDiffTask, type DiffInput } from './tasks/diff-task.ts';
import { runImpactTask, type ImpactInput } from './tasks/impact-task.ts';
import { runImportDryRunTask, type ImportAnswer, type ImportDryRunInput } from './tasks/import-dry-run-task.ts';
import { runImportPrepareTask, type ImportPrepareInput, type ImportPrepareOutput } from './tasks/import-prepare-task.ts';
import { runRuleCheckTask, type RuleCheckInput } from './tasks/rule-check-task.ts';
import { runRuleReviewTask, type RuleReviewInput, type RuleReviewOutput } from './tasks/rule-review-task.ts';
import { runRuleTestTask, type RuleTestInput, type RuleTestOutput } from './tasks/rule-test-task.ts';
import { runStoredTestsTask, type StoredTestsInput, type StoredTestsOutput } from './tasks/stored-tests-task.ts';

/** Every task kind with its input and output. */
export interface TaskKinds {
  storedTests: { input: StoredTestsInput; output: StoredTestsOutput };
  ruleTest: { input: RuleTestInput; output: RuleTestOutput };
  impact: { input: ImpactInput; output: ImpactReport };
  ruleCheck: { input: RuleCheckInput; output: RuleProblem[] };
  /** A decision-table rule's compile check and warnings (rule-review.ts). */
  ruleReview: { input: RuleReviewInput; output: RuleReviewOutput };
  /** An import's dry run whole: the checks, then the file compared with the context's rules. */
  importDryRun: { input: ImportDryRunInput; output: ImportAnswer };
  /** A real import's checks and comparison, and what its transaction is to write. */
  importPrepare: { input: ImportPrepareInput; output: ImportPrepareOutput };
  diff: { input: DiffInput; output: RulesetDiff };
  /** A live validator's compile, on the compile lane (compile-lane.ts). */
  compile: { input: CompileInput; output: ValidatorBuild };
}

export type TaskKind = keyof TaskKinds;

/** What is sent to a thread. */
export interface TaskEnvelope<K extends TaskKind = TaskKind> {
  kind: K;
  input: TaskKinds[K]['input'];
  progress: TaskProgress;
  /** When set, the output comes back as the route's answer, written as JSON here (answer-json.ts). */
  answer?: AnswerForm;
}

/** What comes back: the output (or the answer written from it), or the problem to answer. */
export type TaskAnswer<K extends TaskKind = TaskKind> =
  | { ok: true; output: TaskKinds[K]['output'] | AnswerJson }
  | { ok: false; problem: ProblemSpec };

const RUNNERS: { [K in TaskKind]: (input: TaskKinds[K]['input'], progress: TaskProgress) => Promise<TaskKinds[K]['output']> } = {
  storedTests: runStoredTestsTask,
  ruleTest: runRuleTestTask,
  impact: runImpactTask,
  ruleCheck: runRuleCheckTask,
  ruleReview: runRuleReviewTask,
  importDryRun: runImportDryRunTask,
  importPrepare: runImportPrepareTask,
  diff: runDiffTask,
  compile: runCompileTask,
};

/**
 * Runs one task on the current thread (the worker entry's export).
 *
 * @example
 * await runTask({ kind: 'ruleTest', input, progress: newTaskProgress() });
 */
export async function runTask<K extends TaskKind>(envelope: TaskEnvelope<K>): Promise<TaskAnswer<K>> {
  const run = RUNNERS[envelope.kind] as (input: TaskKinds[K]['input'], progress: TaskProgress) => Promise<TaskKinds[K]['output']>;
  try {
    const output = await run(envelope.input, envelope.progress);
    if (envelope.answer === undefined) return { ok: true, output };
    const answer = answerJson(envelope.answer, output);
    // Moved, not copied: piscina posts the value with its buffer transferred, and the main thread
    // receives the value itself (a TaskAnswer), so the wrapper is typed as what arrives.
    const moved = { [transferableSymbol]: [answer.json.buffer], [valueSymbol]: { ok: true, output: answer } };
    return move(moved) as unknown as TaskAnswer<K>;
  } catch (error) {
    const problem = error instanceof ProblemError ? error : domainProblem(error);
    if (problem === undefined) throw error;
    return { ok: false, problem: plainProblem(problem) };
  }
}

/** A problem as plain data, which structured clone keeps whole (an Error's own fields it would drop). */
function plainProblem(problem: ProblemSpec): ProblemSpec {
  return {
    code: problem.code,
    detail: problem.detail,
    ...(problem.errors === undefined ? {} : { errors: problem.errors }),
    ...(problem.headers === undefined ? {} : { headers: problem.headers }),
  };
}
