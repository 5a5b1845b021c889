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
import { TURN } from '../compiler/steps.ts';
import { TUNING } from './tuning.ts';

/**
 * Runs `steps` to the end, yielding to the event loop (after I/O callbacks)
 * whenever `sliceMs` have passed since the last turn.
 *
 * @example
 * const compiled = await runInSlices(compileRulesetSteps(rules));
 */
export async function runInSlices<T>(steps: Generator<unknown, T, void>, sliceMs = TUNING.compileSliceMs.value): Promise<T> {
  return (await runInTurns(steps, sliceMs)).value;
}

/** What `runInTurns` ran: the steps' result, and how it shared the event loop. */
export interface TurnsTaken<T> {
  value: T;
  /** Slices the steps ran in: 1 when they ran in one go. */
  slices: number;
  /** The longest of them, in ms: how long the event loop was held at most. */
  longestSliceMs: number;
}

/**
 * `runInSlices`, saying how: a slice also ends after a step that yields
 * `TURN` (compiler/steps.ts), however short it was, so that such a step's
 * work always runs in a turn of its own.
 *
 * @example
 * const { value, slices } = await runInTurns(instantiateGeneratedSteps(code, refs), TUNING.installSliceMs.value);
 */
export async function runInTurns<T>(steps: Generator<unknown, T, void>, sliceMs: number): Promise<TurnsTaken<T>> {
  let sliceStarted = performance.now();
  let slices = 1;
  let longestSliceMs = 0;
  for (;;) {
    const step = steps.next();
    const now = performance.now();
    if (step.done) return { value: step.value, slices, longestSliceMs: Math.max(longestSliceMs, now - sliceStarted) };
    if (step.value === TURN || now - sliceStarted >= sliceMs) {
      longestSliceMs = Math.max(longestSliceMs, now - sliceStarted);
      await nextTurn();
      slices++;
      sliceStarted = performance.now();
    }
  }
}
