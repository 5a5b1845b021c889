/**
 * Stored test cases run against a compiled validator: on demand
 * (POST /contexts/{context}/tests/run) and before a publish, a rollback or
 * an import that publishes, which they can refuse (see `storedTestsGate`).
 * Each test is evaluated as a validation is: under the evaluation deadline
 * and the answer-size limit, its payload checked by the payload guard.
 */
import type { ExplainResult, TraceEntry } from '../../compiler/explain-ruleset.ts';
import type { CompiledValidator } from '../validators/compiled-validator.ts';
import { TestsFailedError, type FieldError } from '../domain-errors.ts';
import { checkPayload, sizeOf, type PayloadSize } from '../http/payload-guard.ts';
import type { ChangeInfo, ContextTestStore, StoredTest } from '../storage/types.ts';
import { assertAnswerFits, assertExplainedAnswerFits } from '../validators/answer-size.ts';
import { evaluateBounded } from '../validators/bounded-evaluation.ts';
import type { GoLiveCheck } from '../validators/early-compile.ts';
import { costProfileOf, estimateCost } from '../validators/evaluation-cost.ts';

/** What one test got, and whether that is what it expects. */
export interface TestOutcome {
  name: string;
  ok: boolean;
  isValid: boolean;
  /** The codes of the rules that failed, each once, in the order failures are reported. */
  failures: string[];
  /** What became of each rule, when the run was explained. */
  trace?: TraceEntry[];
}

/** A ruleset's explaining variant (compiler/explain-ruleset.ts). */
export type ExplainFn = (payload: unknown, now: number) => ExplainResult;

/** The limits a test is evaluated under: those of a validation. */
export interface TestRunLimits {
  maxPayloadDepth: number;
  maxAnswerBytes: number;
}

/**
 * Runs every test against the validator, in order.
 *
 * @example
 * runStoredTests(validator, [{ name: 'small', payload: { amount: 5 }, expect: { isValid: true } }], limits);
 * // [{ name: 'small', ok: true, isValid: true, failures: [] }]
 */
export function runStoredTests(
  validator: CompiledValidator,
  tests: readonly StoredTest[],
  limits: TestRunLimits,
  explain?: ExplainFn,
): TestOutcome[] {
  const now = Date.now();
  return tests.map((test, index) => runStoredTest(validator, test, index, limits, now, explain));
}

/**
 * Runs test `index` of a context's tests against the validator (or, when
 * explaining, the explaining variant, which answers the same and traces).
 *
 * @example
 * runStoredTest(validator, { name: 'small', payload: { amount: 5 }, expect: { isValid: true } }, 0, limits, Date.now());
 */
export function runStoredTest(
  validator: CompiledValidator, test: StoredTest, index: number, limits: TestRunLimits, now: number, explain?: ExplainFn,
): TestOutcome {
  const path = `tests[${index}].payload`;
  const size: PayloadSize = { values: 0, characters: 0 };
  // Payloads were checked when stored; a lower depth limit since is met here.
  const problem = checkPayload(test.payload, path, limits.maxPayloadDepth, size);
  if (problem !== undefined) return { name: test.name, ok: false, isValid: false, failures: [] };
  const cost = estimateCost(costProfileOf(validator), sizeOf(size));
  // Explained, the explaining variant answers instead: the same failures, and the trace.
  let trace: TraceEntry[] | undefined;
  const result = evaluateBounded(cost, path, () => {
    if (explain === undefined) return validator.validate(test.payload, now);
    const explained = explain(test.payload, now);
    trace = explained.trace;
    return explained;
  });
  if (trace === undefined) assertAnswerFits(result.failures, limits.maxAnswerBytes, path);
  else assertExplainedAnswerFits(result.failures, trace, limits.maxAnswerBytes, path);
  const failures = [...new Set(result.failures.map((failure) => failure.ruleCode))];
  const outcome: TestOutcome = { name: test.name, ok: meetsExpectation(test.expect, result.isValid, failures), isValid: result.isValid, failures };
  if (trace !== undefined) outcome.trace = trace;
  return outcome;
}

/**
 * Runs stored tests against a validator about to go live: here, at once
 * (`runStoredTestsHere`), or on a management thread (src/pool/go-live-tests.ts).
 */
export type StoredTestRunner = (validator: CompiledValidator, tests: StoredTest[]) => Promise<TestOutcome[]>;

/** A runner that runs the tests on the calling thread (the CLI's). */
export function runStoredTestsHere(limits: TestRunLimits): StoredTestRunner {
  return (validator, tests) => Promise.resolve(runStoredTests(validator, tests, limits));
}

/**
 * Refuses (TestsFailedError, 409 TESTS_FAILED) when a test did not get
 * what it expects from the validator about to go live.
 */
function assertTestsPassed(context: string, tests: readonly StoredTest[], outcomes: readonly TestOutcome[]): void {
  const failing: FieldError[] = [];
  outcomes.forEach((outcome, index) => {
    if (!outcome.ok) failing.push({ path: `tests[${index}]`, message: describeFailure(outcome, tests[index]) });
  });
  if (failing.length > 0) throw new TestsFailedError(context, failing);
}

function meetsExpectation(expected: StoredTest['expect'], isValid: boolean, failures: string[]): boolean {
  if (expected.isValid !== isValid) return false;
  if (expected.failures === undefined) return true;
  const wanted = new Set(expected.failures);
  return wanted.size === failures.length && failures.every((code) => wanted.has(code));
}

function describeFailure(outcome: TestOutcome, test: StoredTest): string {
  return `test "${test.name}" ${describeMismatch(test.expect, outcome)}`;
}

/**
 * What a test expected, what it got, and, where the expectation names
 * codes (a pass expects none), which differ: the codes expected that did
 * not fail, and those that failed unexpectedly.
 *
 * @example
 * describeMismatch({ isValid: false, failures: ['MIN', 'MAX'] }, { isValid: false, failures: ['MAX', 'TYPE'] });
 * // 'expects invalid, failing MIN, MAX; got invalid, failing MAX, TYPE: MIN did not fail; TYPE failed unexpectedly'
 */
export function describeMismatch(expected: StoredTest['expect'], got: Pick<TestOutcome, 'isValid' | 'failures'>): string {
  const gotText = got.isValid ? 'valid' : `invalid, failing ${got.failures.join(', ') || 'no rule'}`;
  const wantedText = expected.isValid
    ? 'valid'
    : `invalid${expected.failures === undefined ? '' : `, failing ${expected.failures.join(', ') || 'no rule'}`}`;
  const differences = codeDifferences(expected, got.failures);
  return `expects ${wantedText}; got ${gotText}${differences === '' ? '' : `: ${differences}`}`;
}

/** '' when the expectation names no codes (invalid, any failures) or they match. */
function codeDifferences(expected: StoredTest['expect'], failures: readonly string[]): string {
  const wanted = expected.isValid ? [] : expected.failures;
  if (wanted === undefined) return '';
  const missing = [...new Set(wanted)].filter((code) => !failures.includes(code));
  const unexpected = failures.filter((code) => !wanted.includes(code));
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`${missing.join(', ')} did not fail`);
  if (unexpected.length > 0) parts.push(`${unexpected.join(', ')} failed unexpectedly`);
  return parts.join('; ');
}

/** What a publish, rollback or import does about the context's stored tests. */
export interface StoredTestsGate {
  /** The check to hand to compileAhead: refuses when a test fails, unless forced. */
  readonly check: GoLiveCheck;
  /**
   * The change info to record with the new ruleset version: when the
   * operation was forced past failing tests, its note says so. Call it
   * when the operation runs (after the check), not before.
   */
  info(info: ChangeInfo): ChangeInfo;
}

/**
 * The go-live gate of publish, rollback and import: the context's stored
 * tests must pass against the validator about to go live, unless `force`,
 * and then the version's note records which failed. The tests are read on
 * the first check, which comes before the operation's transaction
 * (compileAhead), and kept for a second check inside it.
 */
export function storedTestsGate(tests: Pick<ContextTestStore, 'list'>, run: StoredTestRunner, force: boolean): StoredTestsGate {
  let stored: StoredTest[] | undefined;
  let forcedPast: string[] = [];
  return {
    async check(validator) {
      stored ??= await tests.list(validator.tenantId, validator.context);
      try {
        // No tests, nothing to run (nor a thread to wait for).
        if (stored.length > 0) assertTestsPassed(validator.context, stored, await run(validator, stored));
        forcedPast = [];
      } catch (error) {
        if (!force || !(error instanceof TestsFailedError)) throw error;
        forcedPast = error.errors.map((failure) => failure.path);
      }
    },
    info(info) {
      if (forcedPast.length === 0) return info;
      const forced = `Published with ?force=true although ${forcedPast.length} stored test(s) failed: ${forcedPast.join(', ')}.`;
      return { ...info, note: info.note === null ? forced : `${info.note}\n${forced}` };
    },
  };
}

/**
 * What is wrong with tests about to be stored, paths `tests[i]...`: names
 * are unique, payloads pass the payload guard, and an expected pass names
 * no failures. [] when nothing is.
 */
export function storedTestsProblems(tests: readonly StoredTest[], maxPayloadDepth: number): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Map<string, number>();
  tests.forEach((test, index) => {
    const first = seen.get(test.name);
    if (first !== undefined) errors.push({ path: `tests[${index}].name`, message: `is the name of tests[${first}] too; names must be unique` });
    else seen.set(test.name, index);
    const problem = checkPayload(test.payload, `tests[${index}].payload`, maxPayloadDepth);
    if (problem !== undefined) errors.push(problem);
    if (test.expect.isValid && (test.expect.failures?.length ?? 0) > 0) {
      errors.push({ path: `tests[${index}].expect.failures`, message: 'must be empty when isValid is true' });
    }
  });
  return errors;
}
