/**
 * The realistic-loan benchmark (`npm run bench:realistic`): the validator
 * `compiler/` generates for 20 rules of the kind tenants write
 * (suites/realistic-loan.ts) against the same rules written by hand
 * (engines/hand-written-realistic-loan.ts), on 1,000 seeded payloads.
 *
 * 1. Outside any timing, the two must return identical results (key order
 *    included) on every payload; a ratio between validators that do
 *    different work would mean nothing, so a mismatch stops the run.
 * 2. The payloads are split into the passing ones and the failing ones
 *    (whose results carry full failure records). A sample is one pass over
 *    a set: hundreds of calls on different payloads, as a service sees
 *    them, not one payload the branch predictor has learnt.
 * 3. tinybench per validator and set, then the figure the target applies
 *    to: compiled over hand-written time as the median of alternating short
 *    rounds (ABBA) in the same process, which a shared machine's changing
 *    load moves far less than two figures taken a second apart.
 * 4. The e-mail pattern as the service runs it (compilePattern) against
 *    native RegExp, on the e-mail values of the payloads, paired the same way.
 *
 * 5. The same paired ratio against a lean hand-written validator
 *    (engines/lean-realistic-loan.ts: codes only, ISO dates compared as
 *    strings, one loop over the items), whose codes must agree with the
 *    compiled validator's failing rules on every payload.
 *
 * Targets: compiled at most 1.0x the full hand-written time, and at most
 * 1.5x the lean one's, on both sets.
 * `-- --quick` runs shorter rounds; `runRealisticBench({ quick: true })`
 * returns the figures for the CI guard. Figures go to stdout only.
 */
import { deepStrictEqual } from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { compilePattern } from '../compiler/regex/compile-pattern.ts';
import type { ValidationResult, ValidatorFn } from '../compiler/types.ts';
import { compileOrThrow } from './engines/compiled.ts';
import { validateRealisticLoanByHand } from './engines/hand-written-realistic-loan.ts';
import { validateRealisticLoanLean } from './engines/lean-realistic-loan.ts';
import { EMAIL_PATTERN, realisticLoanSuite as suite } from './suites/realistic-loan.ts';

/** Compiled validator time at most this multiple of the hand-written one (both sets). */
export const REALISTIC_TARGET = 1.0;

/** Compiled validator time at most this multiple of the lean hand-written one, which returns codes only (both sets). */
export const REALISTIC_LEAN_TARGET = 1.5;

export interface RealisticBenchOptions {
  /** Fewer and shorter rounds: short enough for `bench:guard`. */
  quick?: boolean;
  /** Print tables to stdout; default true. */
  print?: boolean;
  /** Only the paired ratios of the two validators (no tinybench tables, no e-mail pattern): what the CI guard needs. */
  ratiosOnly?: boolean;
}

/** One validator on one set of payloads, per call. */
export interface RealisticFigure {
  engine: 'compiled' | 'hand-written' | 'lean';
  set: PayloadSet;
  meanNs: number;
  p50Ns: number;
  p99Ns: number;
  samples: number;
}

export interface RealisticBenchResult {
  payloads: { passing: number; failing: number; failureRecords: number };
  /** Empty with `ratiosOnly`. */
  engines: RealisticFigure[];
  /** Compiled over hand-written time, median of alternating rounds (the figure the target applies to). */
  ratio: PairedFigure;
  /** Compiled over lean hand-written time (codes only), the same way. */
  lean: PairedFigure;
  /** The e-mail pattern as the service runs it, over native RegExp without flags. */
  email: { runner: string; ratio: number; rounds: number; inputs: number } | null;
  loadAverage: number;
}

type PayloadSet = 'passing' | 'failing';

/** A paired ratio on both sets, and its target. */
export interface PairedFigure {
  passing: number;
  failing: number;
  rounds: number;
  target: number;
  met: boolean;
}

// Results land here so V8 cannot drop a call whose value is never used.
let sink: unknown;
let matched = 0;

// One loop per validator, so that each loop's call site sees one function only.
function passCompiled(validate: ValidatorFn, payloads: readonly unknown[], now: number): void {
  for (let i = 0; i < payloads.length; i++) sink = validate(payloads[i], now);
}

function passByHand(payloads: readonly unknown[]): void {
  for (let i = 0; i < payloads.length; i++) sink = validateRealisticLoanByHand(payloads[i]);
}

function passLean(payloads: readonly unknown[]): void {
  for (let i = 0; i < payloads.length; i++) sink = validateRealisticLoanLean(payloads[i]);
}

function timed(run: () => void): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Candidate over baseline time: the median of `rounds` ABBA-alternated rounds, after a warm-up of both. */
function pairedRatio(baseline: () => void, candidate: () => void, rounds: number): number {
  for (let i = 0; i < 20; i++) {
    baseline();
    candidate();
  }
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const flip = round % 2 === 1;
    const first = timed(flip ? candidate : baseline);
    const second = timed(flip ? baseline : candidate);
    ratios.push(flip ? first / second : second / first);
  }
  return median(ratios);
}

function checkAgreement(validate: ValidatorFn): { passing: unknown[]; failing: unknown[]; failureRecords: number } {
  const passing: unknown[] = [];
  const failing: unknown[] = [];
  let failureRecords = 0;
  suite.payloads.forEach((payload, index) => {
    const compiled: ValidationResult = validate(payload, suite.now);
    const byHand = validateRealisticLoanByHand(payload);
    try {
      deepStrictEqual(compiled, byHand);
    } catch (error) {
      throw new Error(`compiled and hand-written results differ on payload ${index}; the ratio would be meaningless.\n`
        + `${(error as Error).message}`, { cause: error });
    }
    if (JSON.stringify(compiled) !== JSON.stringify(byHand)) {
      throw new Error(`compiled and hand-written results have different key order on payload ${index}`);
    }
    const failed = failingCodes(compiled);
    const lean = validateRealisticLoanLean(payload);
    if (JSON.stringify(lean) !== JSON.stringify(failed)) {
      throw new Error(`the lean validator answers ${JSON.stringify(lean)} on payload ${index}, the compiled one fails ${JSON.stringify(failed)}`);
    }
    (compiled.isValid ? passing : failing).push(payload);
    failureRecords += compiled.failures.length;
  });
  return { passing, failing, failureRecords };
}

/** The codes of the rules a result fails, in order, each once: what the lean validator returns. */
export function failingCodes(result: ValidationResult): string[] {
  return [...new Set(result.failures.map((f) => f.ruleCode))];
}

/** The e-mail pattern as generated validators run it against `new RegExp(pattern)`. */
function measureEmail(quick: boolean): RealisticBenchResult['email'] {
  const compiled = compilePattern(EMAIL_PATTERN);
  if (!compiled.ok) throw new Error(`${EMAIL_PATTERN}: ${compiled.message}`);
  const ours = compiled.matcher;
  const native = new RegExp(EMAIL_PATTERN);
  const inputs: string[] = [];
  for (const payload of suite.payloads as { applicant?: { email?: unknown } }[]) {
    const email = payload.applicant?.email;
    if (typeof email === 'string') inputs.push(email);
  }
  for (const input of inputs) {
    if (ours.test(input) !== native.test(input)) throw new Error(`the e-mail matchers disagree on ${JSON.stringify(input)}`);
  }
  // Two loops, one call site each, as in passCompiled/passByHand.
  const runOurs = (): void => {
    for (let i = 0; i < inputs.length; i++) if (ours.test(inputs[i])) matched++;
  };
  const runNative = (): void => {
    for (let i = 0; i < inputs.length; i++) if (native.test(inputs[i])) matched++;
  };
  const rounds = quick ? 101 : 601;
  const ratio = pairedRatio(runNative, runOurs, rounds);
  const runner = compiled.runner.kind === 'regexp' ? `regexp/${compiled.runner.flags || 'no flags'}` : compiled.runner.kind;
  return { runner, ratio, rounds, inputs: inputs.length };
}

/**
 * Runs the benchmark and returns its figures.
 *
 * @example
 * const { ratio } = await runRealisticBench({ quick: true, print: false });
 * if (!ratio.met) console.log('compiled above 1.0x hand-written');
 */
export async function runRealisticBench(options: RealisticBenchOptions = {}): Promise<RealisticBenchResult> {
  const quick = options.quick === true;
  const { validate } = compileOrThrow(suite.rules);
  const sets = checkAgreement(validate);
  const now = suite.now;
  const runs = {
    compiled: (set: PayloadSet) => () => passCompiled(validate, sets[set], now),
    'hand-written': (set: PayloadSet) => () => passByHand(sets[set]),
    lean: (set: PayloadSet) => () => passLean(sets[set]),
  } as const;

  const figures = options.ratiosOnly === true ? [] : await measureEngines(sets, runs, quick);
  const rounds = quick ? 151 : 1001;
  const paired = (baseline: 'hand-written' | 'lean', target: number): PairedFigure => {
    const passing = pairedRatio(runs[baseline]('passing'), runs.compiled('passing'), rounds);
    const failing = pairedRatio(runs[baseline]('failing'), runs.compiled('failing'), rounds);
    return { passing, failing, rounds, target, met: Math.max(passing, failing) <= target };
  };
  const ratio = paired('hand-written', REALISTIC_TARGET);
  const lean = paired('lean', REALISTIC_LEAN_TARGET);
  const email = options.ratiosOnly === true ? null : measureEmail(quick);
  const result: RealisticBenchResult = {
    payloads: { passing: sets.passing.length, failing: sets.failing.length, failureRecords: sets.failureRecords },
    engines: figures,
    ratio,
    lean,
    email,
    loadAverage: os.loadavg()[0],
  };
  if (options.print !== false) printResult(result, quick);
  if (sink === undefined || matched < 0) console.log(matched);
  return result;
}

/** tinybench figures per validator and set, the tasks of both validators interleaved set by set. */
async function measureEngines(
  sets: Record<PayloadSet, unknown[]>, runs: Record<RealisticFigure['engine'], (set: PayloadSet) => () => void>, quick: boolean,
): Promise<RealisticFigure[]> {
  const bench = new Bench({ time: quick ? 300 : 1500, warmupTime: quick ? 100 : 300, throws: true });
  const engines = ['hand-written', 'lean', 'compiled'] as const;
  const setNames: PayloadSet[] = ['passing', 'failing'];
  // Interleaved: each validator's task on a set is followed by the other's.
  for (const set of setNames) for (const engine of engines) bench.add(`${engine}|${set}`, runs[engine](set));
  await bench.run();
  const figures: RealisticFigure[] = [];
  for (const set of setNames) {
    for (const engine of engines) {
      const result = bench.getTask(`${engine}|${set}`)!.result;
      if (result.state !== 'completed') throw new Error(`${engine} on ${set}: ${result.state}`);
      const per = 1e6 / sets[set].length;
      figures.push({
        engine, set, meanNs: result.latency.mean * per, p50Ns: result.latency.p50 * per, p99Ns: result.latency.p99 * per,
        samples: result.latency.samplesCount,
      });
    }
  }
  return figures;
}

function printResult(r: RealisticBenchResult, quick: boolean): void {
  const fixed = (n: number, digits: number): string => n.toFixed(digits);
  console.log(`\nRealistic loan benchmark: ${suite.rules.length} rules, ${r.payloads.passing} passing and`
    + ` ${r.payloads.failing} failing payloads (${r.payloads.failureRecords} failure records)${quick ? ' (quick)' : ''}`);
  console.log(`node ${process.version}, ${os.availableParallelism()} cores, load ${fixed(r.loadAverage, 2)}\n`);
  if (r.engines.length > 0) {
    console.table(r.engines.map((f) => ({
      validator: f.engine, payloads: f.set, 'mean ns': Math.round(f.meanNs), 'p50 ns': Math.round(f.p50Ns),
      'p99 ns': Math.round(f.p99Ns), samples: f.samples,
    })));
    console.log('(per call: a sample is one pass over the set, divided by its size)');
  }
  const line = (against: string, f: PairedFigure): string =>
    `compiled / ${against}, median of ${f.rounds} alternating rounds: passing ${fixed(f.passing, 2)},`
    + ` failing ${fixed(f.failing, 2)} (target <= ${f.target}: ${f.met ? 'met' : 'MISSED'})`;
  console.log(line('hand-written', r.ratio));
  console.log(line('lean hand-written (codes only)', r.lean));
  if (r.email === null) return;
  console.log(`e-mail pattern, service (${r.email.runner}) / native RegExp, median of ${r.email.rounds} alternating rounds`
    + ` over ${r.email.inputs} inputs: ${fixed(r.email.ratio, 2)}`);
}

const invokedDirectly = process.argv[1] !== undefined
  && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (invokedDirectly) {
  await runRealisticBench({ quick: process.argv.includes('--quick') });
}
