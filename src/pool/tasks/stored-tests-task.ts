/**
 * A context's stored tests run on a management thread (POST
 * /contexts/{context}/tests/run): the ruleset compiled, each test run as
 * before a publish, and the results kept only up to the operation's answer
 * budget in bytes. Past it, the remaining tests still run (without their
 * trace) so `passed` and `failed` count every test, but their results are
 * left out and the answer says `truncated`.
 */
import type { CompilerLimits } from '../../../compiler/types.ts';
import { runStoredTest, type ExplainFn, type TestOutcome, type TestRunLimits } from '../../rules/stored-tests.ts';
import type { LiveRuleset, RulesetText, StoredTest } from '../../storage/types.ts';
import type { CompiledValidator } from '../../validators/compiled-validator.ts';
import { installAtOnce, type InstallableBuild } from '../../validators/compile-validator.ts';
import { reportItems, type TaskProgress } from '../task-progress.ts';
import { compileForTask } from './compile-for-task.ts';
import { rulesetOf, storedTestsOf } from './stored-rules.ts';

export interface StoredTestsInput {
  /**
   * The ruleset, its rules as the database's JSON text (parsed here:
   * stored-rules.ts), or the build the main thread installed its validator
   * from (installed here the same way; no explaining variant then).
   */
  ruleset: LiveRuleset | RulesetText | BuiltRuleset;
  /** The tests, or their JSON text as stored. */
  tests: StoredTest[] | string;
  explain: boolean;
  limits: TestRunLimits;
  compilerLimits: Partial<CompilerLimits>;
  /** Bytes of results the answer may hold (OPERATION_ANSWER_MAX_BYTES). */
  maxResultBytes: number;
}

/** A ruleset by its build only: what names it, and what installing its validator takes. */
export interface BuiltRuleset {
  tenantId: string;
  context: string;
  rulesetVersion: number;
  build: InstallableBuild;
}

export interface StoredTestsOutput {
  passed: number;
  failed: number;
  truncated: boolean;
  results: TestOutcome[];
}

/**
 * Runs the tests; a ProblemError when the ruleset does not compile or a
 * test's evaluation is refused as a validation's would be.
 *
 * @example
 * await runStoredTestsTask({ ruleset, tests, explain: false, limits, compilerLimits, maxResultBytes: 4 << 20 });
 */
export async function runStoredTestsTask(input: StoredTestsInput, progress?: TaskProgress): Promise<StoredTestsOutput> {
  const { limits } = input;
  const tests = storedTestsOf(input.tests);
  const { validator, explain } = await validatorOf(input);
  const now = Date.now();
  const results: TestOutcome[] = [];
  let bytes = 0;
  let truncated = false;
  let passed = 0;
  for (const [index, test] of tests.entries()) {
    reportItems(progress, index, tests.length);
    const outcome = runStoredTest(validator, test, index, limits, now, truncated ? undefined : explain);
    if (outcome.ok) passed++;
    if (truncated) continue;
    // The result as it will be sent, measured once here rather than guessed: a comma apart from the others.
    bytes += Buffer.byteLength(JSON.stringify(outcome)) + 1;
    if (bytes > input.maxResultBytes) truncated = true;
    else results.push(outcome);
  }
  reportItems(progress, tests.length, tests.length);
  return { passed, failed: tests.length - passed, truncated, results };
}

/** The validator to run the tests against: the build installed, or the ruleset compiled. */
async function validatorOf(input: StoredTestsInput): Promise<{ validator: CompiledValidator; explain?: ExplainFn }> {
  if ('build' in input.ruleset) {
    const { build, ...names } = input.ruleset;
    // Explaining takes the rules themselves; a build is sent only where nothing is explained.
    if (input.explain) throw new Error('a stored-test run that explains needs the rules, not a build');
    return { validator: installAtOnce({ ...names, rules: [] }, build) };
  }
  const ruleset = rulesetOf(input.ruleset);
  return compileForTask(ruleset, input.compilerLimits, { explain: input.explain, context: ruleset.context });
}
