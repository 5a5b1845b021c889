/**
 * Rule evaluation for a request, within the evaluation deadline and the
 * failure bound: the one policy every route that runs a validator on a
 * caller's payload shares. (The answer's size is bounded by the routes as
 * results come in: answer-size.ts.)
 */
import { MAX_FAILURES_PER_VALIDATION, TooManyFailuresError } from '../../compiler/index.ts';
import { ProblemError } from '../errors.ts';
import { EvaluationTimeoutError, evaluateWithin } from './evaluation-deadline.ts';

/**
 * Evaluates within the deadline when the estimated cost is large; a
 * request that runs out of time, or whose payload fails rules more than
 * MAX_FAILURES_PER_VALIDATION times in one validation, is refused as a
 * whole (400 naming `path`), so one request cannot stall every tenant's or
 * fill the heap.
 *
 * @example
 * const result = evaluateBounded(estimateCost(costProfileOf(validator), sizeOf(size)), 'payload', () => validator.validate(payload, now));
 */
export function evaluateBounded<T>(cost: number, path: string, evaluate: () => T): T {
  try {
    return evaluateWithin(cost, evaluate);
  } catch (error) {
    if (error instanceof EvaluationTimeoutError) {
      throw new ProblemError('INVALID_BODY', 'The payload is too large to evaluate against the rules of this context.', [
        { path, message: `took longer than ${error.deadlineMs} ms to evaluate; send a smaller payload` },
      ]);
    }
    if (error instanceof TooManyFailuresError) {
      throw new ProblemError('INVALID_BODY', 'The payload fails too many rules to answer.', [
        { path, message: `fails rules more than ${MAX_FAILURES_PER_VALIDATION} times in one validation; send a smaller payload` },
      ]);
    }
    throw error;
  }
}
