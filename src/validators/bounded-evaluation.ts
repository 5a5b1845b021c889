/**
 * Rule evaluation for a request, within the evaluation deadline and the
 * failure bound: the one policy every route that runs a validator on a
 * caller's payload shares. (The answer's size is bounded by the routes as
 * results come in: answer-size.ts.)
 */
import { MAX_FAILURES_PER_VALIDATION, TooManyFailuresError } from '../../compiler/index.ts';
import { EvaluationTooLargeError, TooManyFailuresRefusal } from '../domain-errors.ts';
import { EvaluationTimeoutError, evaluateEachWithin, evaluateWithin } from './evaluation-deadline.ts';

/**
 * Evaluates within the deadline when the estimated cost is large; a
 * request that runs out of time, or whose payload fails rules more than
 * MAX_FAILURES_PER_VALIDATION times in one validation, is refused as a
 * whole (an error naming `path`), so one request cannot stall every tenant's or
 * fill the heap.
 *
 * @example
 * const result = evaluateBounded(estimateCost(costProfileOf(validator), sizeOf(size)), 'payload', () => validator.validate(payload, now));
 */
export function evaluateBounded<T>(cost: number, path: string, evaluate: () => T): T {
  try {
    return evaluateWithin(cost, evaluate);
  } catch (error) {
    throw refusalOf(error, path);
  }
}

/**
 * `evaluateBounded` for a request of several evaluations (batch items,
 * transaction contexts): `evaluate(i)` for each, `costs[i]` its estimated
 * cost, one deadline for all (evaluation-deadline.ts `evaluateEachWithin`).
 *
 * @example
 * evaluateEachBounded(costs, 'items', (i) => { results[i] = validator.validate(items[i].payload, now); });
 */
export function evaluateEachBounded(costs: readonly number[], path: string, evaluate: (index: number) => void): void {
  try {
    evaluateEachWithin(costs, evaluate);
  } catch (error) {
    throw refusalOf(error, path);
  }
}

/** The refusal of an evaluation stopped at the deadline or the failure bound; anything else as it was. */
function refusalOf(error: unknown, path: string): unknown {
  if (error instanceof EvaluationTimeoutError) {
    return new EvaluationTooLargeError(path, error.deadlineMs, { cause: error });
  }
  if (error instanceof TooManyFailuresError) {
    return new TooManyFailuresRefusal(path, MAX_FAILURES_PER_VALIDATION, { cause: error });
  }
  return error;
}
