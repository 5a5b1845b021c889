/**
 * Decision tables benchmark (`npm run bench:tables`).
 *
 * One rule with a 10,000-row table under hit policy `first`: two equality
 * columns (product, 10 values; country, 20), one list column (channel,
 * `in [...]`) and one range column (score, 50 bands of 20 points), so that
 * every product, country and band has its row. The matching row is placed
 * early (row 0), in the middle (row 5,000), late (row 9,999) or is missing
 * (a product no row names); `noMatch` is "pass", so that the missing case
 * times the search and not the building of a failure record.
 *
 * Timed, per evaluation (tinybench; a sample is 100 evaluations):
 * - `validator`: the compiled validator, `validate(payload, now)`, the
 *   whole rule (inputs read, index searched, `$value <= $row.maxAmount`);
 * - `index`: the table's index alone (table/table-index.ts, the strategy
 *   the compiler chose: Maps over product, country and channel, boundaries
 *   of score);
 * - `scan`: the same cells and runtime searched row by row in row order,
 *   what an interpreting engine does (the strategy forced to a scan).
 * Target: the validator's median at most 1 us in every position.
 *
 * Also: the compile of the rule (`compileRuleset`; median of several;
 * target under 250 ms), the memory of one compiled validator (heap after
 * a full gc with N more held, over N; run with --expose-gc, as the npm
 * script does), and the save-time analysis (`analyzeRule`: overlaps,
 * unreachable rows, gaps; table/table-analysis.ts) of the table's first
 * 1,000 rows with noMatch "fail" (median of several; target under 1 s),
 * and of all 10,000 (once; bounded by the analysis's budget).
 *
 * `-- --quick` runs shorter. Figures go to stdout; `runTablesBench` returns them.
 */
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { analyzeRule } from '../compiler/analysis/rule-warnings.ts';
import { compileRuleset } from '../compiler/compile-ruleset.ts';
import { DEFAULT_LIMITS } from '../compiler/limits.ts';
import { planRule } from '../compiler/rule-plan.ts';
import { TableIndex, type TableSpec } from '../compiler/table/table-index.ts';
import { tableSpecJson } from '../compiler/table/table-source.ts';
import { chooseStrategy } from '../compiler/table/table-strategy.ts';
import type { RuleDefinition } from '../compiler/types.ts';

export const tableTargets = Object.freeze({ maxEvaluationUs: 1, maxCompileMs: 250, maxAnalysisMs: 1000 });

const PRODUCTS = 10;
const COUNTRIES = 20;
const BANDS = 50;
const BAND_WIDTH = 20;
const CHANNELS = ['web', 'app', 'branch', 'phone'];
const EVALUATIONS_PER_SAMPLE = 100;

/** Row r: product r / 1000, country (r / 50) % 20, band r % 50; channel lists vary by band. */
export function tableRule(): RuleDefinition {
  const rows: { when: string[]; then: unknown[] }[] = [];
  for (let p = 0; p < PRODUCTS; p++) {
    for (let c = 0; c < COUNTRIES; c++) {
      for (let b = 0; b < BANDS; b++) {
        const channels = b % 2 === 0 ? CHANNELS : CHANNELS.slice(0, 2 + (b % 3));
        rows.push({
          when: [`"P${p}"`, `"C${c}"`, `in ${JSON.stringify(channels)}`, `[${b * BAND_WIDTH}..${(b + 1) * BAND_WIDTH})`],
          then: [1000 * (b + 1)],
        });
      }
    }
  }
  return {
    code: 'AMOUNT_WITHIN_LIMIT',
    name: 'Amount within the limit',
    fieldPath: 'loan.amount',
    table: {
      hitPolicy: 'first',
      inputs: [
        { name: 'product', path: 'loan.product' },
        { name: 'country', path: 'applicant.country' },
        { name: 'channel', path: 'channel' },
        { name: 'score', path: 'applicant.score' },
      ],
      outputs: ['maxAmount'],
      rows,
      noMatch: 'pass',
    },
    expression: '$value <= $row.maxAmount',
  };
}

interface Position {
  name: 'early' | 'middle' | 'late' | 'missing';
  row: number;
  payload: { loan: { amount: number; product: string }; applicant: { country: string; score: number }; channel: string };
}

function payloadFor(row: number): Position['payload'] {
  const p = Math.floor(row / (COUNTRIES * BANDS));
  const c = Math.floor(row / BANDS) % COUNTRIES;
  const b = row % BANDS;
  return { loan: { amount: 500, product: `P${p}` }, applicant: { country: `C${c}`, score: b * BAND_WIDTH + 5 }, channel: 'web' };
}

const POSITIONS: Position[] = [
  { name: 'early', row: 0, payload: payloadFor(0) },
  { name: 'middle', row: 5000, payload: payloadFor(5000) },
  { name: 'late', row: 9999, payload: payloadFor(9999) },
  { name: 'missing', row: -1, payload: { ...payloadFor(5000), loan: { amount: 500, product: 'P-none' } } },
];

export interface TablePositionFigure {
  position: Position['name'];
  row: number;
  validatorNs: number;
  indexNs: number;
  scanNs: number;
}

export interface TablesBenchResult {
  quick: boolean;
  generatedAt: string;
  rows: number;
  positions: TablePositionFigure[];
  compile: { medianMs: number; minMs: number; runs: number };
  /** Heap of one compiled validator (MB), or null without --expose-gc. */
  memoryMb: number | null;
  /** Characters of its generated source. */
  sourceLength: number;
  /** The save-time analysis of the first 1,000 rows (median) and of all rows (once); absent in results from before it was measured. */
  analysis?: TableAnalysisFigure;
  met: { evaluation: boolean; compile: boolean; analysis?: boolean };
}

export interface TableAnalysisFigure {
  rows: number;
  medianMs: number;
  runs: number;
  /** Warnings it gave, and whether it finished within its budget. */
  warnings: number;
  complete: boolean;
  fullRows: number;
  fullMs: number;
  fullComplete: boolean;
}

/** Times `analyzeRule` on the table's first `rows` rows, with noMatch "fail" (so that gaps are looked for). */
function timeAnalysis(rule: RuleDefinition, rows: number): { ms: number; warnings: number; complete: boolean } {
  const table = rule.table as NonNullable<RuleDefinition['table']>;
  const cut: RuleDefinition = { ...rule, table: { ...table, rows: table.rows.slice(0, rows), noMatch: 'fail' } };
  const start = performance.now();
  const warnings = analyzeRule(cut);
  const ms = performance.now() - start;
  return { ms, warnings: warnings.length, complete: !warnings.some((w) => w.code === 'TABLE_INCOMPLETE') };
}

function measureAnalysis(rule: RuleDefinition, quick: boolean): TableAnalysisFigure {
  const runs = quick ? 3 : 7;
  const times: number[] = [];
  let last = timeAnalysis(rule, 1000);
  for (let i = 0; i < runs; i++) {
    last = timeAnalysis(rule, 1000);
    times.push(last.ms);
  }
  const full = timeAnalysis(rule, Number.MAX_SAFE_INTEGER);
  return {
    rows: 1000, medianMs: median(times), runs, warnings: last.warnings, complete: last.complete,
    fullRows: (rule.table?.rows.length ?? 0), fullMs: full.ms, fullComplete: full.complete,
  };
}

let sink = 0;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function indexesOf(rule: RuleDefinition): { index: TableIndex; scan: TableIndex } {
  const planned = planRule(rule, DEFAULT_LIMITS);
  if (!planned.ok || planned.plan.table === undefined) throw new Error('the table rule does not plan');
  const table = planned.plan.table;
  const spec = JSON.parse(tableSpecJson(table)) as TableSpec;
  return {
    index: new TableIndex(spec, null),
    scan: new TableIndex({ ...spec, strategy: chooseStrategy(table.cells, true) }, null),
  };
}

/** Fills the index's slots as the generated code does, then searches. */
function search(index: TableIndex, payload: Position['payload']): number {
  index.values[0] = payload.loan.product;
  index.values[1] = payload.applicant.country;
  index.values[2] = payload.channel;
  index.values[3] = payload.applicant.score;
  return index.first(payload, 0);
}

function heapUsedAfterGc(): number | null {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return null;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** The median of a completed task, per evaluation, in nanoseconds (each sample runs EVALUATIONS_PER_SAMPLE). */
function medianNs(bench: Bench, name: string): number {
  const result = bench.getTask(name)?.result;
  if (result?.state !== 'completed') throw new Error(`${name}: ${result?.state ?? 'missing'}`);
  return (result.latency.p50 * 1e6) / EVALUATIONS_PER_SAMPLE;
}

/** Adds `${kind} ${position}` tasks: EVALUATIONS_PER_SAMPLE calls of `evaluate` on the position's payload a sample. */
function addTasks(bench: Bench, kind: string, positions: readonly Position[], evaluate: (payload: Position['payload']) => number): void {
  for (const position of positions) {
    const payload = position.payload;
    bench.add(`${kind} ${position.name}`, () => {
      for (let i = 0; i < EVALUATIONS_PER_SAMPLE; i++) sink += evaluate(payload);
    });
  }
}

/**
 * The CI guard's short form (guard.ts): the compiled validator's time over
 * a row-by-row scan's on the 10,000-row table, where the scan is longest
 * (the matching row late, and no matching row), median of a short
 * tinybench run each. The indexed code is hundreds of times faster; code
 * that scanned the rows again would come out near 1.
 */
export async function runTablesGuardCheck(): Promise<{ late: number; missing: number }> {
  const rule = tableRule();
  const compiled = compileRuleset([rule]);
  if (compiled.errors.length > 0) throw new Error(compiled.errors[0].message);
  const validate = compiled.validate;
  const { scan } = indexesOf(rule);
  const positions = POSITIONS.filter((p) => p.name === 'late' || p.name === 'missing');
  const bench = new Bench({ time: 150, warmupTime: 50, throws: true });
  addTasks(bench, 'validator', positions, (payload) => validate(payload, 0).totalRulesEvaluated);
  addTasks(bench, 'scan', positions, (payload) => search(scan, payload));
  await bench.run();
  const p50 = (name: string): number => medianNs(bench, name);
  return {
    late: p50('validator late') / p50('scan late'),
    missing: p50('validator missing') / p50('scan missing'),
  };
}

export async function runTablesBench(options: { quick?: boolean } = {}): Promise<TablesBenchResult> {
  const quick = options.quick === true;
  const rule = tableRule();
  const runs = quick ? 3 : 9;
  const times: number[] = [];
  let compiled = compileRuleset([rule]);
  for (let i = 0; i < runs; i++) {
    compiled = compileRuleset([rule]);
    if (compiled.errors.length > 0) throw new Error(compiled.errors[0].message);
    times.push(compiled.compileMs);
  }
  const validate = compiled.validate;
  const { index, scan } = indexesOf(rule);
  for (const position of POSITIONS) {
    const found = [search(index, position.payload), search(scan, position.payload)];
    if (found.some((r) => r !== position.row)) throw new Error(`${position.name}: expected row ${position.row}, found ${found.join(' and ')}`);
    if (!validate(position.payload, 0).isValid) throw new Error(`${position.name}: the payload should pass`);
  }

  const bench = new Bench({ time: quick ? 150 : 800, warmupTime: quick ? 50 : 200, throws: true });
  addTasks(bench, 'validator', POSITIONS, (payload) => validate(payload, 0).totalRulesEvaluated);
  addTasks(bench, 'index', POSITIONS, (payload) => search(index, payload));
  addTasks(bench, 'scan', POSITIONS, (payload) => search(scan, payload));
  await bench.run();
  const nsOf = (name: string): number => medianNs(bench, name);
  const positions = POSITIONS.map((p) => ({
    position: p.name,
    row: p.row,
    validatorNs: nsOf(`validator ${p.name}`),
    indexNs: nsOf(`index ${p.name}`),
    scanNs: nsOf(`scan ${p.name}`),
  }));

  const held: unknown[] = [];
  const count = quick ? 3 : 8;
  const before = heapUsedAfterGc();
  for (let i = 0; i < count; i++) held.push(compileRuleset([rule]).validate);
  const after = heapUsedAfterGc();
  const memoryMb = before === null || after === null ? null : (after - before) / count / 1e6;
  sink += held.length;

  const compileMs = median(times);
  const analysis = measureAnalysis(rule, quick);
  return {
    quick,
    generatedAt: new Date().toISOString(),
    rows: 10_000,
    positions,
    compile: { medianMs: compileMs, minMs: Math.min(...times), runs },
    memoryMb,
    sourceLength: compiled.source.length,
    analysis,
    met: {
      evaluation: positions.every((p) => p.validatorNs <= tableTargets.maxEvaluationUs * 1000),
      compile: compileMs < tableTargets.maxCompileMs,
      analysis: analysis.medianMs < tableTargets.maxAnalysisMs,
    },
  };
}

function print(r: TablesBenchResult): void {
  console.log(`\nDecision tables: ${r.rows} rows, hit policy first; node ${process.version}, ${os.cpus()[0]?.model ?? '?'}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(2)}${r.quick ? ' (quick)' : ''}`);
  console.table(r.positions.map((p) => ({
    position: p.position,
    'matching row': p.row < 0 ? 'none' : p.row,
    'validator ns (median)': Math.round(p.validatorNs),
    'index ns': Math.round(p.indexNs),
    'row-by-row scan ns': Math.round(p.scanNs),
    'scan / index': Number((p.scanNs / p.indexNs).toFixed(0)),
  })));
  console.log(`target: validator median at most ${tableTargets.maxEvaluationUs} us in every position: ${r.met.evaluation ? 'met' : 'MISSED'}`);
  console.log(`compile of the 10,000-row rule: median ${r.compile.medianMs.toFixed(1)} ms, min ${r.compile.minMs.toFixed(1)} ms over ${r.compile.runs} (target < ${tableTargets.maxCompileMs} ms: ${r.met.compile ? 'met' : 'MISSED'})`);
  console.log(`memory of one compiled validator: ${r.memoryMb === null ? 'not measured (run with --expose-gc)' : `${r.memoryMb.toFixed(1)} MB of heap`}; generated source ${r.sourceLength.toLocaleString('en-US')} characters`);
  const a = r.analysis;
  if (a !== undefined) {
    console.log(`analysis of a ${a.rows.toLocaleString('en-US')}-row table (noMatch "fail"): median ${a.medianMs.toFixed(1)} ms over ${a.runs}, ${a.warnings} warnings, ${a.complete ? 'complete' : 'stopped at its budget'} (target < ${tableTargets.maxAnalysisMs} ms: ${r.met.analysis === true ? 'met' : 'MISSED'}); all ${a.fullRows.toLocaleString('en-US')} rows: ${a.fullMs.toFixed(0)} ms, ${a.fullComplete ? 'complete' : 'stopped at its budget'}`);
  }
  if (sink < 0) console.log(sink);
}

const invokedDirectly = process.argv[1] !== undefined
  && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (invokedDirectly) {
  print(await runTablesBench({ quick: process.argv.includes('--quick') }));
}
