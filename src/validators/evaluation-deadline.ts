/**
 * A deadline for rule evaluation that could run long.
 *
 * Validators are synchronous JavaScript on the event loop; nothing inside
 * them yields. The one mechanism Node offers to stop such code is the
 * watchdog of `vm` (`timeout`), which terminates whatever JavaScript runs
 * when the time is up, including functions of the main realm called from
 * the script. Starting the watchdog costs a thread (tens of microseconds),
 * so only requests whose worst case is large go through it (see
 * evaluation-cost.ts); everything else calls the validator directly.
 *
 * Validators keep no state across calls that termination could leave half
 * written, and an evaluation that was stopped produces no result at all.
 */
import { performance } from 'node:perf_hooks';
import { createContext, Script } from 'node:vm';
import { TUNING } from '../tuning.ts';

/**
 * Requests estimated below this many steps are evaluated without a deadline
 * (TUNING.unguardedCostLimit); held in a binding of its own because every
 * validation compares with it.
 */
export const UNGUARDED_COST_LIMIT = TUNING.unguardedCostLimit.value;

/** Thrown when evaluation was stopped at the deadline. */
export class EvaluationTimeoutError extends Error {
  constructor(readonly deadlineMs: number) {
    super(`rule evaluation took longer than ${deadlineMs} ms`);
    this.name = 'EvaluationTimeoutError';
  }
}

interface Slot {
  run: (() => unknown) | undefined;
}

// One context for the process: the script only calls the function put in
// its slot, so nothing of one request stays visible to the next.
const slot = createContext({ run: undefined }) as Slot;
const call = new Script('run()', { filename: 'evaluation-deadline' });

/**
 * Runs `evaluate` and returns its result, or throws EvaluationTimeoutError
 * once it has run for `deadlineMs`.
 *
 * @example
 * const result = runWithDeadline(() => validator.validate(payload, now));
 */
export function runWithDeadline<T>(evaluate: () => T, deadlineMs = TUNING.evaluationDeadlineMs.value): T {
  slot.run = evaluate;
  try {
    return call.runInContext(slot, { timeout: deadlineMs }) as T;
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
      throw new EvaluationTimeoutError(deadlineMs);
    }
    throw error;
  } finally {
    slot.run = undefined;
  }
}

/**
 * Runs `evaluate` directly when `estimatedCost` is small, else under the deadline.
 *
 * @example
 * const result = evaluateWithin(estimateCost(profile, size), () => validator.validate(payload, now));
 */
export function evaluateWithin<T>(estimatedCost: number, evaluate: () => T): T {
  return estimatedCost <= UNGUARDED_COST_LIMIT ? evaluate() : runWithDeadline(evaluate);
}

/**
 * Runs `evaluate(0)` to `evaluate(costs.length - 1)` in order, all within
 * one deadline, where `costs[i]` is evaluation i's estimated cost; throws
 * EvaluationTimeoutError once they have run for `deadlineMs`.
 *
 * - Each one small (a batch of ordinary items, however many): called
 *   directly, the clock read between evaluations. None can run long alone,
 *   so the request stops at most one small evaluation (a few milliseconds,
 *   the bound every unguarded single validation has) past the deadline,
 *   and pays no watchdog thread.
 * - Any one large: all of them under one watchdog, stopped at the deadline.
 *
 * @example
 * evaluateEachWithin(items.map((item) => estimateCost(profile, item.size)), (i) => { results[i] = validator.validate(items[i].payload, now); });
 */
export function evaluateEachWithin(costs: readonly number[], evaluate: (index: number) => void, deadlineMs = TUNING.evaluationDeadlineMs.value): void {
  const count = costs.length;
  if (costs.some((cost) => cost > UNGUARDED_COST_LIMIT)) {
    runWithDeadline(() => {
      for (let i = 0; i < count; i++) evaluate(i);
    }, deadlineMs);
    return;
  }
  const stopAt = performance.now() + deadlineMs;
  for (let i = 0; i < count; i++) {
    // Checked before each evaluation but the first: once the last one is done, its answer stands.
    if (i > 0 && performance.now() > stopAt) throw new EvaluationTimeoutError(deadlineMs);
    evaluate(i);
  }
}
