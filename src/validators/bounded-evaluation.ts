/**
 * Rule evaluation for a request, within the evaluation deadline: the one
 * policy every route that runs a validator on a caller's payload shares.
 */
import { ProblemError } from '../errors.ts';
import { EvaluationTimeoutError, evaluateWithin } from './evaluation-deadline.ts';

/**
 * Evaluates within the deadline when the estimated cost is large; a
 * request that runs out of time is refused as a whole (400 naming `path`),
 * so one request cannot stall every tenant's.
 *
 * @example
 * const result = evaluateBounded(estimateCost(costProfileOf(validator), sizeOf(size)), 'payload', () => validator.validate(payload, now));
 */
export function evaluateBounded<T>(cost: number, path: string, evaluate: () => T): T {
  try {
    return evaluateWithin(cost, evaluate);
  } catch (error) {
    if (!(error instanceof EvaluationTimeoutError)) throw error;
    throw new ProblemError('INVALID_BODY', 'The payload is too large to evaluate against the rules of this context.', [
      { path, message: `took longer than ${error.deadlineMs} ms to evaluate; send a smaller payload` },
    ]);
  }
}
