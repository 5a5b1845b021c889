/**
 * The stored tests a publish, rollback or import runs before going live
 * (src/rules/stored-tests.ts `storedTestsGate`), on a management thread: up
 * to a thousand tests on rules that may be slow, which on the event loop
 * would hold every tenant's validations for as long. A compiled function
 * cannot cross threads, so the thread gets what the main thread installed
 * the validator from (its build: the generated code and its refs, kept for
 * the check by early-compile.ts) and evaluates it the same way, or, for a
 * validator compiled on this thread (no build), the rules kept with it for
 * the check, to compile again. It runs the tests within the time budget of a heavy operation.
 */
import type { Config } from '../config.ts';
import type { StoredTestRunner } from '../rules/stored-tests.ts';
import type { CompiledValidator } from '../validators/compiled-validator.ts';
import { keptBuildOf } from '../validators/compile-validator.ts';
import type { ManagementPool, TaskRunner } from './management-pool.ts';
import { OPERATIONS } from './operations.ts';
import type { StoredTestsInput } from './tasks/stored-tests-task.ts';

type Limits = Pick<Config, 'maxPayloadDepth' | 'maxAnswerBytes' | 'maxExpressionLength' | 'maxTableRows'>;

/**
 * A runner that runs the tests as a task of `run` (an operation already
 * admitted, such as an import), or, without one, as a heavy operation of
 * its own (a publish or a rollback: admitted only when there are tests).
 *
 * @example
 * const gate = storedTestsGate(storage.tests, goLiveTestsOnPool(deps.pool, deps.config), force);
 */
export function goLiveTestsOnPool(pool: ManagementPool, config: Limits, run?: TaskRunner): StoredTestRunner {
  const inOperation = async (runner: TaskRunner, validator: Parameters<StoredTestRunner>[0], tests: Parameters<StoredTestRunner>[1]) => {
    const outcome = await runner('storedTests', {
      ruleset: builtOrRuleset(validator),
      tests,
      explain: false,
      limits: { maxPayloadDepth: config.maxPayloadDepth, maxAnswerBytes: config.maxAnswerBytes },
      compilerLimits: { maxExpressionLength: config.maxExpressionLength, maxTableRows: config.maxTableRows },
      // Every outcome is needed to name the failing tests; without traces a thousand take a few hundred kilobytes.
      maxResultBytes: Number.MAX_SAFE_INTEGER,
    });
    return outcome.results;
  };
  if (run !== undefined) return (validator, tests) => inOperation(run, validator, tests);
  return (validator, tests) => pool.operation(validator.tenantId, OPERATIONS.goLiveTests, (runner) => inOperation(runner, validator, tests));
}

/**
 * The validator's build with what names it, when it came from a compile
 * thread: a few strings and the refs cross to the thread instead of every
 * rule, and the thread compiles nothing. Else the rules it was compiled
 * from. Either was kept with it for this check (early-compile.ts); a
 * validator keeps no rules of its own. The build's code cache stays
 * behind: copying megabytes into the message would be the event loop's
 * work, to spare a niced thread some of its own.
 */
function builtOrRuleset(validator: CompiledValidator): StoredTestsInput['ruleset'] {
  const kept = keptBuildOf(validator);
  if (kept === undefined) throw new Error(`the go-live tests of ${validator.context} were given a validator without what it was compiled from`);
  if (kept.build === undefined) return kept.ruleset;
  const { tenantId, context, rulesetVersion } = kept.ruleset;
  const { codeCache: _left, ...build } = kept.build;
  return { tenantId, context, rulesetVersion, build };
}
