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
 *
 * The deadline counts wall time on the event loop, whose thread runs at
 * the default priority. A management thread runs niced (thread-priority.ts),
 * so its wall time stretches with the load of the cores: a stored test that
 * takes 20 ms of work could take seconds of wall time on busy cores, and be
 * refused for what the machine did. There the deadline counts the thread's
 * own CPU time instead (`setDeadlineClock('thread-cpu')`): the watchdog stops an
 * evaluation only at `TUNING.nicedDeadlineWallFactor` times the deadline in
 * wall time, and one that finished having used more CPU time than the
 * deadline is refused all the same, so the answer does not depend on the
 * machine's load (up to that factor).
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

/** The thread's own CPU time (ms), where the deadline counts it; undefined on the event loop (wall time). */
let threadCpuMs: (() => number) | undefined;

/**
 * What this thread's deadlines count: `wall` time (the default, for the
 * event loop), or the thread's own CPU time, `thread-cpu`, for a niced
 * management thread (see above). Where Node cannot read a thread's CPU
 * time (`process.threadCpuUsage`, missing from early Node 22 releases), deadlines stay in
 * wall time; answers whether they count CPU time now.
 */
export function setDeadlineClock(clock: 'wall' | 'thread-cpu'): boolean {
  // Not in @types/node 20, which the service's types follow.
  const usage = (process as { threadCpuUsage?: () => { user: number; system: number } }).threadCpuUsage?.bind(process);
  threadCpuMs = clock === 'wall' || usage === undefined ? undefined : () => {
    const { user, system } = usage();
    return (user + system) / 1000;
  };
  return threadCpuMs !== undefined;
}

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
  const cpuMs = threadCpuMs;
  slot.run = evaluate;
  try {
    if (cpuMs === undefined) return call.runInContext(slot, { timeout: deadlineMs }) as T;
    const startedCpu = cpuMs();
    const result = call.runInContext(slot, { timeout: deadlineMs * TUNING.nicedDeadlineWallFactor.value }) as T;
    if (cpuMs() - startedCpu > deadlineMs) throw new EvaluationTimeoutError(deadlineMs);
    return result;
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
  const clock = threadCpuMs ?? performance.now.bind(performance);
  const stopAt = clock() + deadlineMs;
  for (let i = 0; i < count; i++) {
    // Checked before each evaluation but the first: once the last one is done, its answer stands.
    if (i > 0 && clock() > stopAt) throw new EvaluationTimeoutError(deadlineMs);
    evaluate(i);
  }
}
