/**
 * The stored tests a publish, rollback or import runs before going live
 * (src/rules/stored-tests.ts `storedTestsGate`), on a management thread: up
 * to a thousand tests on rules that may be slow, which on the event loop
 * would hold every tenant's validations for as long. The thread compiles
 * the ruleset about to go live again (a compiled function cannot cross
 * threads) and runs the tests within the time budget of a heavy operation.
 */
import type { Config } from '../config.ts';
import type { StoredTestRunner } from '../rules/stored-tests.ts';
import type { ManagementPool, TaskRunner } from './management-pool.ts';
import { OPERATIONS } from './operations.ts';

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
      ruleset: validator.ruleset,
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
