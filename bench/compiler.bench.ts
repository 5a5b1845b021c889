/**
 * Engine benchmark of the rule compiler (`npm run bench:compiler`).
 *
 * 1. Checks, outside any timing, that the compiled validator and the
 *    hand-written baseline return deep-equal results on both payloads, and
 *    that every peer engine fails the same rules: a ratio between engines
 *    that disagree would mean nothing, so a mismatch stops the run.
 * 2. Times compiled, hand-written and the peers on the passing and the
 *    failing payload with tinybench. Sync engines run a batch of calls per
 *    sample so the timer's own cost (tens of ns) does not flatten a ratio
 *    between sub-microsecond functions; figures are per call.
 * 3. Times compiling generated rule sets of growing size (median of a few
 *    runs) and validating with them.
 *
 * Figures go to stdout as tables and to bench/results/compiler-latest.json.
 */
import { deepStrictEqual } from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Bench, type Task } from 'tinybench';
import type { RuleDefinition, ValidationResult } from '../compiler/types.ts';
import { createCelLoanEngine } from './engines/cel-loan.ts';
import { compileOrThrow } from './engines/compiled.ts';
import { validateLoanByHand } from './engines/hand-written-loan.ts';
import { createJsonLogicLoanEngine } from './engines/json-logic-loan.ts';
import { createJsonRulesEngineLoanEngine } from './engines/json-rules-engine-loan.ts';
import type { PeerEngine } from './engines/peer-engine.ts';
import { generateRuleset } from './suites/generated-ruleset.ts';
import { loanApplicationSuite as suite } from './suites/loan-application.ts';

/** Targets printed beside the figures (the issue's acceptance numbers). */
export const targets = {
  /** Compiled validator time at most this multiple of the hand-written one. */
  maxRatioToHandWritten: 1.5,
  /** Compiling this many rules takes under `maxCompileMs`. */
  compileRules: 1000,
  maxCompileMs: 250,
  /** Per-rule compile time may grow at most this much from one size to the next (linear is 1). */
  maxPerRuleGrowth: 1.25,
} as const;

export interface CompilerBenchOptions {
  /** Fewer and shorter samples, sizes up to 1000 rules: short enough for `bench:guard`. */
  quick?: boolean;
  /** Write bench/results/compiler-latest.json; default: only for full runs. */
  write?: boolean;
  /** Print tables to stdout; default true. */
  print?: boolean;
}

type PayloadName = 'passing' | 'failing';

/** One engine on one payload, per call. */
export interface EngineFigure {
  engine: string;
  payload: PayloadName;
  opsPerSec: number;
  meanNs: number;
  p50Ns: number;
  /** p99 of the samples; a sync sample is a batch of `batch` calls, divided by `batch`. */
  p99Ns: number;
  samples: number;
  batch: number;
  /** Mean time relative to the hand-written baseline on the same payload. */
  vsHandWritten: number;
}

export interface CompileFigure {
  rules: number;
  medianMs: number;
  /** The fastest run: on a busy machine, the closest to the compiler's own cost. */
  minMs: number;
  runsMs: number[];
  perRuleUs: number;
  /** Per-rule time relative to the previous size; null for the first. */
  perRuleGrowth: number | null;
  /** The first validation after compiling, before V8 has optimised anything. */
  firstValidateUs: number;
  /** Steady state, after warm-up. */
  validatePassingNs: number;
  validateFailingNs: number;
  failuresOnFailing: number;
}

export interface CompilerBenchResult {
  suite: string;
  ruleCount: number;
  quick: boolean;
  generatedAt: string;
  /** `loadAverage` is the 1-minute load when the run ended: above `cores`, other work shared the CPU. */
  environment: { node: string; platform: string; arch: string; cpu: string; cores: number; loadAverage: number };
  engines: EngineFigure[];
  /** Compiled over hand-written time, paired measurement (the figure the target applies to). */
  ratio: { passing: number; failing: number; rounds: number; target: number; met: boolean };
  compile: {
    sizes: CompileFigure[];
    at1000: { medianMs: number | null; target: number; met: boolean | null };
    linear: { worstGrowth: number | null; target: number; met: boolean | null };
  };
  peers: { engine: string; omitted: readonly string[]; notes: readonly string[] }[];
}

interface Contender {
  name: string;
  async: boolean;
  batch: number;
  run: (payload: unknown) => unknown;
}

const HAND_WRITTEN = 'hand-written';
const COMPILED = 'compiled';
const resultsFile = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results', 'compiler-latest.json');

// Results land here so V8 cannot drop a call whose value is never used.
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- written, never read: V8 cannot drop a call whose result is stored
let sink: unknown;

/** Keys of the failed rules, `CODE` or `CODE[i]` for forEach elements, one per rule and element. */
function failureKeys(result: ValidationResult, rules: readonly RuleDefinition[]): string[] {
  const forEach = new Set(rules.filter((r) => r.forEach !== undefined).map((r) => r.code));
  const keys: string[] = [];
  for (const f of result.failures) {
    const index = forEach.has(f.ruleCode) ? /\[(\d+)\]/.exec(f.fieldPath)?.[1] : undefined;
    const key = index === undefined ? f.ruleCode : `${f.ruleCode}[${index}]`;
    if (keys.at(-1) !== key) keys.push(key);
  }
  return keys;
}

async function checkAgreement(
  validate: (payload: unknown, now: number) => ValidationResult, peers: PeerEngine[],
): Promise<void> {
  for (const name of ['passing', 'failing'] as const) {
    const payload = suite.payloads[name];
    const compiled = validate(payload, suite.now);
    const byHand = validateLoanByHand(payload, suite.now);
    try {
      deepStrictEqual(compiled, byHand);
    } catch (error) {
      throw new Error(`compiled and hand-written results differ on the ${name} payload; the ratio would be meaningless.\n`
        + `${(error as Error).message}`, { cause: error });
    }
    if (JSON.stringify(compiled) !== JSON.stringify(byHand)) {
      throw new Error(`compiled and hand-written results have different key order on the ${name} payload`);
    }
    if (compiled.isValid !== (name === 'passing')) throw new Error(`the ${name} payload has isValid ${compiled.isValid}`);
    const expected = failureKeys(compiled, suite.rules);
    for (const peer of peers) {
      const omitted = new Set(peer.omitted);
      const got = (await peer.run(payload)).filter((k) => !omitted.has(k.replace(/\[\d+\]$/, '')));
      const want = expected.filter((k) => !omitted.has(k.replace(/\[\d+\]$/, '')));
      if (JSON.stringify([...got].sort()) !== JSON.stringify([...want].sort())) {
        throw new Error(`${peer.name} disagrees on the ${name} payload:\n  got  ${got.join(' ')}\n  want ${want.join(' ')}`);
      }
    }
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function timeBatch(contender: Contender, payload: unknown): number {
  const { run, batch } = contender;
  const start = performance.now();
  for (let i = 0; i < batch; i++) sink = run(payload);
  return performance.now() - start;
}

/**
 * Candidate time over baseline time, as the median of many short rounds
 * that alternate the two (ABBA, so drift cancels). On a shared machine the
 * load changes from one second to the next; a ratio of two tinybench tasks
 * measured a second apart inherits that change, a paired ratio does not.
 */
function pairedRatio(baseline: Contender, candidate: Contender, payload: unknown, rounds: number): number {
  for (let i = 0; i < 50; i++) {
    timeBatch(baseline, payload);
    timeBatch(candidate, payload);
  }
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const flip = round % 2 === 1;
    const first = timeBatch(flip ? candidate : baseline, payload);
    const second = timeBatch(flip ? baseline : candidate, payload);
    ratios.push(flip ? first / second : second / first);
  }
  return median(ratios);
}

function statistics(task: Task): { meanMs: number; p50Ms: number; p99Ms: number; samples: number } {
  const result = task.result;
  if (result.state !== 'completed' && result.state !== 'aborted-with-statistics') {
    const reason = result.state === 'errored' ? result.error.message : result.state;
    throw new Error(`benchmark task "${task.name}" did not complete: ${reason}`);
  }
  const { mean, p50, p99, samplesCount } = result.latency;
  return { meanMs: mean, p50Ms: p50, p99Ms: p99, samples: samplesCount };
}

function addTask(bench: Bench, name: string, contender: Contender, payload: unknown): void {
  if (contender.async) {
    bench.add(name, async () => {
      sink = await contender.run(payload);
    }, { async: true });
    return;
  }
  const { run, batch } = contender;
  bench.add(name, () => {
    for (let i = 0; i < batch; i++) sink = run(payload);
  }, { async: false });
}

async function measureEngines(contenders: Contender[], quick: boolean): Promise<EngineFigure[]> {
  const bench = new Bench({ time: quick ? 200 : 1000, warmupTime: quick ? 50 : 250, throws: true });
  const payloads: PayloadName[] = ['passing', 'failing'];
  for (const contender of contenders) {
    for (const payload of payloads) addTask(bench, `${contender.name}|${payload}`, contender, suite.payloads[payload]);
  }
  await bench.run();
  const figures: EngineFigure[] = [];
  for (const contender of contenders) {
    for (const payload of payloads) {
      const s = statistics(bench.getTask(`${contender.name}|${payload}`)!);
      const per = 1e6 / contender.batch;
      figures.push({
        engine: contender.name, payload, opsPerSec: 1e3 / (s.meanMs / contender.batch),
        meanNs: s.meanMs * per, p50Ns: s.p50Ms * per, p99Ns: s.p99Ms * per, samples: s.samples,
        batch: contender.batch, vsHandWritten: Number.NaN,
      });
    }
  }
  for (const figure of figures) {
    const base = figures.find((f) => f.engine === HAND_WRITTEN && f.payload === figure.payload)!;
    figure.vsHandWritten = figure.meanNs / base.meanNs;
  }
  return figures;
}

async function measureCompile(sizes: number[], runs: number, quick: boolean): Promise<CompileFigure[]> {
  // Let the compiler's own code reach its optimised tiers before any timing.
  for (let i = 0; i < 3; i++) compileOrThrow(generateRuleset(100));
  const figures: CompileFigure[] = [];
  for (const size of sizes) {
    const rules = generateRuleset(size);
    const runsMs: number[] = [];
    let compiled = compileOrThrow(rules);
    for (let run = 0; run < (size >= 5000 ? Math.min(runs, 3) : runs); run++) {
      const start = performance.now();
      compiled = compileOrThrow(rules);
      runsMs.push(performance.now() - start);
    }
    const validate = compiled.validate;
    const coldStart = performance.now();
    sink = validate(suite.payloads.passing, suite.now);
    const firstValidateUs = (performance.now() - coldStart) * 1000;
    // A validator of many rules is optimised by V8 only after thousands of
    // calls. This short warm-up reaches the steady state up to 100 rules; at
    // 1000 and 5000 the figures below are of a validator still being
    // optimised (the scaling benchmark warms longer; bench/README.md, "Large
    // contexts"). The warm-up uses the passing payload only: at 5000 rules the
    // failing one allocates thousands of records per call, and the garbage it
    // leaves would be collected during the passing measurement.
    const deadline = performance.now() + (quick ? 1500 : 8000);
    for (let i = 0; i < 3000 && performance.now() < deadline; i++) sink = validate(suite.payloads.passing, suite.now);
    const contender: Contender = {
      name: 'compiled', async: false, batch: Math.max(1, Math.round(2000 / size)),
      run: (payload) => validate(payload, suite.now),
    };
    const bench = new Bench({ time: quick ? 150 : 500, warmupTime: quick ? 50 : 100, throws: true });
    addTask(bench, 'passing', contender, suite.payloads.passing);
    addTask(bench, 'failing', contender, suite.payloads.failing);
    await bench.run();
    const medianMs = median(runsMs);
    const previous = figures.at(-1);
    const perRuleUs = (medianMs * 1000) / size;
    figures.push({
      rules: size, medianMs, minMs: Math.min(...runsMs), runsMs, perRuleUs, firstValidateUs,
      perRuleGrowth: previous === undefined ? null : perRuleUs / previous.perRuleUs,
      validatePassingNs: (statistics(bench.getTask('passing')!).meanMs * 1e6) / contender.batch,
      validateFailingNs: (statistics(bench.getTask('failing')!).meanMs * 1e6) / contender.batch,
      failuresOnFailing: validate(suite.payloads.failing, suite.now).failures.length,
    });
  }
  return figures;
}

/**
 * How many times the compiled validator's time the fastest peer engine
 * takes, on the payload where it comes closest: "faster than every peer"
 * holds per payload, so the smaller margin of the two is the figure.
 *
 * @example
 * fastestPeerMargin(result) > 1 // the compiled validator beat every peer on both payloads
 */
export function fastestPeerMargin(r: Pick<CompilerBenchResult, 'engines'>): number {
  const margins = (['passing', 'failing'] as const).map((payload) => {
    const onPayload = r.engines.filter((e) => e.payload === payload);
    const compiled = onPayload.find((e) => e.engine === COMPILED)!.meanNs;
    const fastestPeer = Math.min(...onPayload.filter((e) => e.engine !== COMPILED && e.engine !== HAND_WRITTEN).map((e) => e.meanNs));
    return fastestPeer / compiled;
  });
  return Math.min(...margins);
}

/**
 * Runs the whole compiler benchmark and returns its figures; `quick` keeps
 * it short enough for a regression guard.
 *
 * @example
 * const { ratio } = await runCompilerBench({ quick: true });
 * if (!ratio.met) process.exitCode = 1;
 */
export async function runCompilerBench(options: CompilerBenchOptions = {}): Promise<CompilerBenchResult> {
  const quick = options.quick === true;
  const compiled = compileOrThrow(suite.rules);
  const peers = [
    createCelLoanEngine(suite.now),
    createJsonLogicLoanEngine(suite.now),
    createJsonRulesEngineLoanEngine(suite.now),
  ];
  await checkAgreement(compiled.validate, peers);

  const validate = compiled.validate;
  const now = suite.now;
  const contenders: Contender[] = [
    { name: HAND_WRITTEN, async: false, batch: 64, run: (payload) => validateLoanByHand(payload, now) },
    { name: COMPILED, async: false, batch: 64, run: (payload) => validate(payload, now) },
    ...peers.map((peer) => ({ name: peer.name, async: peer.async, batch: peer.async ? 1 : 8, run: peer.run })),
  ];
  const engines = await measureEngines(contenders, quick);
  const rounds = quick ? 300 : 2000;
  const paired = {
    passing: pairedRatio(contenders[0], contenders[1], suite.payloads.passing, rounds),
    failing: pairedRatio(contenders[0], contenders[1], suite.payloads.failing, rounds),
  };

  const sizes = await measureCompile(quick ? [10, 100, 1000] : [10, 100, 1000, 5000], quick ? 3 : 5, quick);
  const at1000 = sizes.find((s) => s.rules === targets.compileRules)?.medianMs ?? null;
  const growths = sizes.map((s) => s.perRuleGrowth).filter((g): g is number => g !== null);
  const worstGrowth = growths.length === 0 ? null : Math.max(...growths);

  const result: CompilerBenchResult = {
    suite: suite.name,
    ruleCount: suite.rules.length,
    quick,
    generatedAt: new Date().toISOString(),
    environment: {
      node: process.version, platform: process.platform, arch: process.arch,
      cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.availableParallelism(), loadAverage: os.loadavg()[0],
    },
    engines,
    ratio: {
      passing: paired.passing, failing: paired.failing, rounds, target: targets.maxRatioToHandWritten,
      met: Math.max(paired.passing, paired.failing) <= targets.maxRatioToHandWritten,
    },
    compile: {
      sizes,
      at1000: { medianMs: at1000, target: targets.maxCompileMs, met: at1000 === null ? null : at1000 < targets.maxCompileMs },
      linear: {
        worstGrowth, target: targets.maxPerRuleGrowth,
        met: worstGrowth === null ? null : worstGrowth <= targets.maxPerRuleGrowth,
      },
    },
    peers: peers.map((p) => ({ engine: p.name, omitted: p.omitted, notes: p.notes })),
  };
  if (options.print !== false) printResult(result);
  if (options.write ?? !quick) {
    await mkdir(path.dirname(resultsFile), { recursive: true });
    const rounded = (_key: string, value: unknown): unknown =>
      typeof value === 'number' && !Number.isInteger(value) ? Number(value.toPrecision(4)) : value;
    await writeFile(resultsFile, `${JSON.stringify(result, rounded, 2)}\n`);
  }
  return result;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const fixed = (n: number, digits: number): string => n.toFixed(digits);
const verdict = (met: boolean | null): string => (met === null ? 'n/a' : met ? 'met' : 'MISSED');

function printResult(r: CompilerBenchResult): void {
  const env = r.environment;
  console.log(`\nCompiler benchmark: ${r.suite}, ${r.ruleCount} rules${r.quick ? ' (quick)' : ''}`);
  console.log(`${env.node} ${env.platform}/${env.arch}, ${env.cpu}, ${env.cores} cores, load ${fixed(env.loadAverage, 1)}\n`);
  console.log(table(
    ['engine', 'payload', 'ops/s', 'mean ns', 'p50 ns', 'p99 ns', 'x hand'],
    r.engines.map((f) => [
      f.engine, f.payload, int(f.opsPerSec), int(f.meanNs), int(f.p50Ns), int(f.p99Ns), fixed(f.vsHandWritten, 2),
    ]),
  ));
  console.log('(sync engines: p50/p99 over samples of a batch of calls, divided by the batch size)');
  console.log(`compiled / hand-written, paired over ${r.ratio.rounds} alternating rounds: passing`
    + ` ${fixed(r.ratio.passing, 2)}, failing ${fixed(r.ratio.failing, 2)}`
    + ` (target <= ${fixed(r.ratio.target, 1)}: ${verdict(r.ratio.met)})\n`);
  console.log(table(
    ['rules', 'compile ms', 'min ms', 'per rule us', 'growth', 'first validate us', 'warming pass ns', 'warming fail ns', 'failures'],
    r.compile.sizes.map((s) => [
      String(s.rules), fixed(s.medianMs, 1), fixed(s.minMs, 1), fixed(s.perRuleUs, 1),
      s.perRuleGrowth === null ? '-' : fixed(s.perRuleGrowth, 2), int(s.firstValidateUs),
      int(s.validatePassingNs), int(s.validateFailingNs), String(s.failuresOnFailing),
    ]),
  ));
  const c = r.compile;
  console.log(`compile ${targets.compileRules} rules: ${c.at1000.medianMs === null ? 'n/a' : `${fixed(c.at1000.medianMs, 1)} ms`}`
    + ` (target < ${c.at1000.target} ms: ${verdict(c.at1000.met)}); per-rule growth worst`
    + ` ${c.linear.worstGrowth === null ? 'n/a' : fixed(c.linear.worstGrowth, 2)}`
    + ` (target <= ${c.linear.target}, linear = 1: ${verdict(c.linear.met)})\n`);
  for (const peer of r.peers) {
    console.log(`${peer.engine}: omitted ${peer.omitted.length === 0 ? 'none' : peer.omitted.join(', ')}`);
    for (const note of peer.notes) console.log(`  - ${note}`);
  }
}

const invokedDirectly = process.argv[1] !== undefined
  && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (invokedDirectly) {
  await runCompilerBench({ quick: process.argv.includes('--quick') });
}
