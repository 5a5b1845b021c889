/**
 * Vitest setup: one seed for every fast-check property that does not name
 * its own, so a run is repeatable and CI cannot fail on a case that the
 * previous run never drew. `FC_SEED=<integer>` picks another seed;
 * `FC_SEED=random` draws a new one per run, to explore (fast-check prints
 * the seed with any counterexample, and `FC_SEED=<that seed>` replays it).
 */
import fc from 'fast-check';

const DEFAULT_SEED = 20_261_122;

const setting = process.env.FC_SEED ?? '';
if (setting !== 'random') {
  const seed = setting === '' ? DEFAULT_SEED : Number(setting);
  if (!Number.isSafeInteger(seed)) throw new Error(`FC_SEED must be an integer or "random", not ${JSON.stringify(setting)}`);
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });
}
