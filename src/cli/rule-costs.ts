/**
 * What each rule of a ruleset costs (`bench`): tinybench times the whole
 * ruleset's validator over a set of payloads, then, for each rule, the
 * validator compiled without it. A rule's share is what removing it saves,
 * of the whole: (all − without) / all. That is its marginal cost as the
 * compiler builds the ruleset (a rule that shares a loop with another
 * saves less than it would cost alone), measured on the code that runs,
 * with nothing added to it: instrumenting each rule with timers would time
 * the timers, which cost more than most rules.
 *
 * A task's iteration is one pass over the payloads, repeated until a pass
 * holds MIN_VALIDATIONS_PER_PASS validations, so that a sample is well
 * above the timer's resolution; figures per validation are tinybench's per
 * pass divided by the validations in it. The whole ruleset is timed
 * before and after each variant: the load of a shared machine drifts
 * during a run, so each rule is judged against its neighbours in time, and
 * their difference is part of the noise its share is judged against.
 *
 * tinybench is imported here only, when the command runs, so that no other
 * command pays for loading it.
 */
import { compileRuleset } from '../../compiler/compile-ruleset.ts';
import type { CompilerLimits, RuleDefinition, ValidatorFn } from '../../compiler/types.ts';
import { readFile } from 'node:fs/promises';
import type { TaskResult } from 'tinybench';
import { CommandError } from './cli-errors.ts';

/** A pass over the payloads holds at least this many validations. */
export const MIN_VALIDATIONS_PER_PASS = 200;
/** With no --time: the run's tasks share about this many milliseconds... */
const DEFAULT_RUN_BUDGET_MS = 20_000;
/** ...each timed for at least this long... */
const MIN_DEFAULT_TASK_MS = 100;
/** ...and at most this long. */
const MAX_DEFAULT_TASK_MS = 500;
/** A rule is screened alone (see `screenRules`) for this part of a task's time. */
const SCREEN_SHARE_OF_TASK = 0.25;

/** tinybench's figures for one validator: its own per pass, and per validation. */
export interface Figures {
  /** Mean time per validation, in microseconds. */
  meanUs: number;
  /** The median sample, per validation, in microseconds: what shares are worked out from. */
  medianUs: number;
  /** The margin of error of the median, per validation, in microseconds (95 %, from tinybench's median absolute deviation). */
  medianMarginUs: number;
  /** The 99th percentile of the samples, per validation: a pass's mean, not a single call's. */
  p99Us: number;
  /** Validations per second. */
  opsPerSecond: number;
  /** tinybench's samples (passes timed). */
  samples: number;
  /** tinybench's relative margin of error of the mean, in percent (95 % confidence). */
  rmePercent: number;
  /** tinybench's own figures, per pass over the payloads. */
  tinybench: { meanMs: number; p99Ms: number; hz: number };
}

/** One rule's share of the time per validation. */
export interface RuleCost {
  code: string;
  /** (all − without) / all, clamped to 0..1: the share shown. */
  share: number;
  /** The same, unclamped: negative when the validator ran faster with the rule than without. */
  measuredShare: number;
  /** all − without, medians per validation, in microseconds. */
  savedUs: number;
  /** All rules' median per validation, in the runs just before and after the one without this rule (averaged). */
  allUs: number;
  /**
   * The saving is within the noise: the larger of the run-to-run noise
   * (`noiseUs`) and the margins of the three medians plus half the
   * difference of the two runs of all rules beside it.
   */
  withinNoise: boolean;
  /** The validator without this rule. */
  without: Figures;
}

export interface RuleCostReport {
  /** Milliseconds tinybench timed each task for. */
  taskMs: number;
  validationsPerPass: number;
  /** All rules: the runs of `baselines` averaged. */
  validator: Figures;
  /** Each run of all rules, in order: one before the first variant and one after each. */
  baselines: Figures[];
  /**
   * The run-to-run noise, per validation, in microseconds: the 95 % margin
   * of a saving, from the spread (median absolute deviation) of the
   * medians of `baselines`: the same validator timed again and again.
   */
  noiseUs: number;
  /** Most expensive first; ties by code. */
  rules: RuleCost[];
  /** Rules left out of the with/without measurement by --top, costliest alone first (see `screened`). */
  unmeasured: string[];
  /** How the measured rules were chosen when there were more than --top: each rule's validator alone, median per validation. */
  screened: Array<{ code: string; aloneUs: number }> | null;
  /** The sum of the shares shown; the rest of the time is what every validation pays (the payload walk, the result) and noise. */
  shareSum: number;
}

export interface RuleCostOptions {
  /** Milliseconds per task; default from the number of tasks (see `defaultTaskMs`). */
  taskMs?: number;
  /** Measure at most this many rules with and without; when there are more, the costliest alone are chosen. */
  top: number;
  limits: Partial<CompilerLimits>;
}

/** With no --time: about DEFAULT_RUN_BUDGET_MS over the tasks, each MIN..MAX_DEFAULT_TASK_MS. */
export function defaultTaskMs(tasks: number): number {
  return Math.min(MAX_DEFAULT_TASK_MS, Math.max(MIN_DEFAULT_TASK_MS, Math.floor(DEFAULT_RUN_BUDGET_MS / tasks)));
}

/**
 * Times `rules` (compiled and enabled ones only) over `payloads`, whole and
 * without each rule. `payloads` must not be empty.
 *
 * @example
 * const report = await measureRuleCosts(ruleset.rules, tests.map((t) => t.payload), { top: 100, limits: {} });
 * report.rules[0].code; // the rule whose removal saves the most
 */
export async function measureRuleCosts(
  rules: readonly RuleDefinition[], payloads: readonly unknown[], options: RuleCostOptions,
): Promise<RuleCostReport> {
  const { Bench } = await loadTinybench();
  const enabled = rules.filter((rule) => rule.enabled !== false);
  const reps = Math.ceil(MIN_VALIDATIONS_PER_PASS / payloads.length);
  const pass = Array.from({ length: reps }, () => payloads).flat();
  const measured = Math.min(options.top, enabled.length);
  const taskMs = options.taskMs ?? defaultTaskMs(2 * measured + 1 + (measured < enabled.length ? enabled.length * SCREEN_SHARE_OF_TASK : 0));
  // One clock for every validation: rules reading now() see the same time in every variant.
  const now = Date.now();
  const compile = (subset: RuleDefinition[]): ValidatorFn => compileOrThrow(subset, options.limits);
  const time = async (validators: ReadonlyArray<readonly [string, ValidatorFn]>, ms: number): Promise<Map<string, Figures>> => {
    const bench = new Bench({ time: ms, warmupTime: Math.max(10, ms / 4), iterations: 4, warmupIterations: 2, throws: true });
    for (const [name, validate] of validators) bench.add(name, () => passOver(validate, pass, now));
    await bench.run();
    return new Map(validators.map(([name]) => [name, figuresOf(bench.getTask(name)?.result, name, pass.length)]));
  };

  let chosen = enabled;
  let screened: RuleCostReport['screened'] = null;
  if (measured < enabled.length) {
    const alone = await time(enabled.map((rule) => [rule.code, compile([rule])] as const), Math.max(10, taskMs * SCREEN_SHARE_OF_TASK));
    screened = enabled.map((rule) => ({ code: rule.code, aloneUs: alone.get(rule.code)!.medianUs })).sort((a, b) => b.aloneUs - a.aloneUs);
    const top = new Set(screened.slice(0, measured).map((entry) => entry.code));
    chosen = enabled.filter((rule) => top.has(rule.code));
  }

  // All rules are timed before and after each rule's variant: the rule is judged against its
  // neighbours in time, so the drift of a loaded machine over the run cancels.
  const all = compile([...enabled]);
  const variants: Array<readonly [string, ValidatorFn]> = [[allRules(0), all]];
  chosen.forEach((rule, index) => {
    variants.push([`without ${rule.code}`, compile(enabled.filter((other) => other !== rule))], [allRules(index + 1), all]);
  });
  const figures = await time(variants, taskMs);
  if (sink === undefined) throw new CommandError('no validation ran');
  const baselines = chosen.map((_, index) => figures.get(allRules(index))!).concat(figures.get(allRules(chosen.length))!);
  const noiseUs = runToRunNoise(baselines);
  const costs = chosen.map((rule, index) => ruleCost(rule.code, baselines[index], baselines[index + 1], figures.get(`without ${rule.code}`)!, noiseUs));
  costs.sort((a, b) => b.measuredShare - a.measuredShare || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  const measuredCodes = new Set(chosen.map((rule) => rule.code));
  return {
    taskMs,
    validationsPerPass: pass.length,
    validator: meanOf(baselines),
    baselines,
    noiseUs,
    rules: costs,
    unmeasured: (screened ?? []).filter((entry) => !measuredCodes.has(entry.code)).map((entry) => entry.code),
    screened,
    shareSum: costs.reduce((sum, cost) => sum + cost.share, 0),
  };
}

/**
 * 95 % margin of a median over sqrt(samples), per median absolute
 * deviation: 1.96 (95 %) x 1.2533 (the median's standard error over the
 * mean's) x 1.4826 (standard deviation over MAD, for normal noise).
 */
const MEDIAN_MARGIN_PER_MAD = 1.96 * 1.2533 * 1.4826;

function allRules(run: number): string {
  return `all rules #${run}`;
}

// Results land here so that V8 cannot drop a call whose value is never used.
let sink: unknown;

/**
 * One pass: every payload validated once, in order. Every validator is
 * called from this one call site, as the service calls every context's
 * validator from one: its cost is the same for each variant.
 */
function passOver(validate: ValidatorFn, payloads: readonly unknown[], now: number): void {
  for (let i = 0; i < payloads.length; i++) sink = validate(payloads[i], now);
}

/**
 * A rule's share against the runs of all rules just before and just after
 * its variant, worked out from medians: a pass that a busy machine
 * preempted is an outlier, which moves a mean and hardly a median.
 */
function ruleCost(code: string, before: Figures, after: Figures, without: Figures, noiseUs: number): RuleCost {
  const allUs = (before.medianUs + after.medianUs) / 2;
  const savedUs = allUs - without.medianUs;
  const measuredShare = allUs > 0 ? savedUs / allUs : 0;
  // The margin of a difference adds the medians' margins in quadrature; the two runs of all rules differ by drift too.
  const local = Math.hypot(before.medianMarginUs, after.medianMarginUs, without.medianMarginUs) + Math.abs(before.medianUs - after.medianUs) / 2;
  const margin = Math.max(local, noiseUs);
  return {
    code, share: Math.min(1, Math.max(0, measuredShare)), measuredShare, savedUs, allUs, withinNoise: Math.abs(savedUs) <= margin, without,
  };
}

/**
 * A sample's margin within one run understates how much a run differs
 * from the next on a busy machine (its load moves between runs, and so
 * does what V8 makes of each variant). The runs of all rules measure that:
 * a saving is one run's median minus the mean of two, whose spread is
 * sd x sqrt(1 + 1/2); its 95 % margin is 1.96 times that. The spread is
 * taken robustly, as 1.4826 x the median absolute deviation of the runs'
 * medians: one run that the machine stalled would otherwise set the noise
 * of every rule (and the runs beside it already widen the margin of the
 * rule they judge).
 */
function runToRunNoise(baselines: readonly Figures[]): number {
  const medians = baselines.map((run) => run.medianUs);
  const middle = medianOf(medians);
  const spread = 1.4826 * medianOf(medians.map((median) => Math.abs(median - middle)));
  return 1.96 * spread * Math.sqrt(1.5);
}

function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[half] : (sorted[half - 1] + sorted[half]) / 2;
}

/** Several runs' figures averaged (samples added, the widest margin kept). */
function meanOf(runs: readonly Figures[]): Figures {
  const mean = (pick: (figures: Figures) => number) => runs.reduce((sum, figures) => sum + pick(figures), 0) / runs.length;
  return {
    meanUs: mean((f) => f.meanUs),
    medianUs: mean((f) => f.medianUs),
    medianMarginUs: Math.max(...runs.map((figures) => figures.medianMarginUs)),
    p99Us: mean((f) => f.p99Us),
    opsPerSecond: mean((f) => f.opsPerSecond),
    samples: runs.reduce((sum, figures) => sum + figures.samples, 0),
    rmePercent: Math.max(...runs.map((figures) => figures.rmePercent)),
    tinybench: { meanMs: mean((f) => f.tinybench.meanMs), p99Ms: mean((f) => f.tinybench.p99Ms), hz: mean((f) => f.tinybench.hz) },
  };
}

function figuresOf(result: TaskResult | undefined, name: string, perPass: number): Figures {
  if (result?.state !== 'completed') throw new CommandError(`the benchmark of ${name} did not complete (${result?.state ?? 'not run'})`);
  const { latency, throughput } = result;
  return {
    meanUs: (latency.mean * 1000) / perPass,
    medianUs: (latency.p50 * 1000) / perPass,
    medianMarginUs: (MEDIAN_MARGIN_PER_MAD * latency.mad * 1000) / perPass / Math.sqrt(Math.max(1, latency.samplesCount)),
    p99Us: (latency.p99 * 1000) / perPass,
    opsPerSecond: throughput.mean * perPass,
    samples: latency.samplesCount,
    rmePercent: latency.rme,
    tinybench: { meanMs: latency.mean, p99Ms: latency.p99, hz: throughput.mean },
  };
}

/** A subset of rules that compiled together compiles; anything else is a defect worth stopping for. */
function compileOrThrow(rules: RuleDefinition[], limits: Partial<CompilerLimits>): ValidatorFn {
  const compiled = compileRuleset(rules, { limits });
  if (compiled.errors.length > 0) {
    throw new CommandError(`a subset of the rules did not compile: ${compiled.errors.map((error) => `${error.ruleCode}: ${error.message}`).join('; ')}`);
  }
  return compiled.validate;
}

type Tinybench = typeof import('tinybench');

async function loadTinybench(): Promise<Tinybench> {
  try {
    return await import('tinybench');
  } catch {
    throw new CommandError('bench needs tinybench, one of the service\'s dependencies: install them with "npm ci"');
  }
}

/** The version of tinybench that measured, for the report. */
export async function tinybenchVersion(): Promise<string> {
  try {
    // Its package.json is not among its exports: read beside its entry point.
    const manifest = await readFile(new URL('../package.json', import.meta.resolve('tinybench')), 'utf8');
    return (JSON.parse(manifest) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
