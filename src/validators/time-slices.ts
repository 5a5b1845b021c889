/**
 * Runs a compile's steps a slice of time at a time (compiler/compile-ruleset.ts),
 * for work that stays on the event loop: the validator cache's compiles
 * when it is given no compiler (the cluster primary's seeding, tools),
 * standalone module builds, impact replays. The service's live compiles
 * run on the compile lane instead (src/pool/compile-lane.ts).
 *
 * Compiles run on the event loop that every tenant's requests share. A
 * context of thousands of large rules takes seconds to compile; run at
 * once, it would hold every other request for as long. Run in slices, the
 * event loop gets a turn every TUNING.compileSliceMs, so requests wait at most
 * about one slice (plus one step: a rule or a part, a few milliseconds at
 * the limits) behind a compile, which itself takes a little longer.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { TUNING } from '../tuning.ts';

/**
 * Runs `steps` to the end, yielding to the event loop (after I/O callbacks)
 * whenever `sliceMs` have passed since the last turn.
 *
 * @example
 * const compiled = await runInSlices(compileRulesetSteps(rules));
 */
export async function runInSlices<T>(steps: Generator<unknown, T, void>, sliceMs = TUNING.compileSliceMs.value): Promise<T> {
  let sliceEnds = performance.now() + sliceMs;
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() >= sliceEnds) {
      await nextTurn();
      sliceEnds = performance.now() + sliceMs;
    }
  }
}
