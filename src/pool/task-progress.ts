/**
 * How far a task on a management thread has got, in memory both threads
 * share: the worker writes it as it goes (a few integer stores), and the
 * main thread reads it when it stops the task at its time budget, so the
 * refusal can say "at test 17 of 400" although the worker is gone.
 */

/** A task's progress: [stage, items done, items in all]. */
export type TaskProgress = Int32Array;

const STAGE = 0;
const DONE = 1;
const TOTAL = 2;
const COMPILING = 0;
const RUNNING = 1;

/** Fresh progress (compiling, nothing done), to send with a task. */
export function newTaskProgress(): TaskProgress {
  return new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
}

/** The task has compiled and is now at item `done` of `total`. */
export function reportItems(progress: TaskProgress | undefined, done: number, total: number): void {
  if (progress === undefined) return;
  Atomics.store(progress, TOTAL, total);
  Atomics.store(progress, DONE, done);
  Atomics.store(progress, STAGE, RUNNING);
}

/**
 * Where the task was, in words: `before` while it had not reached its
 * items (compiling), or "at test 17 of 400" (the item it was on, counted from 1).
 *
 * @example
 * describeProgress(progress, 'test', 'while compiling the ruleset'); // 'at test 17 of 400'
 */
export function describeProgress(progress: TaskProgress, unit: string, before: string): string {
  if (Atomics.load(progress, STAGE) === COMPILING) return before;
  const total = Atomics.load(progress, TOTAL);
  const done = Atomics.load(progress, DONE);
  return done >= total ? `after all ${total} ${unit}s` : `at ${unit} ${done + 1} of ${total}`;
}
