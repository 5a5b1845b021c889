/**
 * Work in steps. The compiler's costly stages are generators: each `next()`
 * does a bounded piece (a rule planned, a rule generated, a part
 * instantiated) and the caller decides when the next runs. The service
 * runs them a slice of time at a time, so that a large compile shares the
 * event loop (src/time-slices.ts); tools and tests run them at
 * once.
 */

/** Steps that end with a `T`. */
export type Steps<T> = Generator<void, T, void>;

/**
 * What a step yields to ask for a turn of the event loop before the next,
 * however little time its slice took: installing a large validator yields
 * it after each part (compile-ruleset.ts `instantiateGeneratedSteps`), so
 * that each part is instantiated in a turn of its own.
 */
export const TURN = 'turn';

/** Steps of which some end their slice (`TURN`). */
export type TurnSteps<T> = Generator<typeof TURN | void, T, void>;

/** How a caller runs steps: at once (`runSteps`) or spread over time. */
export type StepRunner = <T>(steps: Steps<T>) => Promise<T>;

/** Runs steps to the end at once. */
export function runSteps<T>(steps: Generator<unknown, T, void>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** `runSteps` as a StepRunner. */
export const runStepsAtOnce: StepRunner = (steps) => Promise.resolve().then(() => runSteps(steps));
