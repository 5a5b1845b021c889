/**
 * The results table of bench/README.md: the headline figures of the last
 * `npm run bench`, each beside its baseline from the same run and its
 * target, written between two marker comments so that the README shows
 * what a run measured and never a figure typed by hand. `npm run bench`
 * rewrites it after every run; `npm run bench -- --readme-only` rewrites
 * it from the existing `results/latest.json` without measuring anything.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { SUITES, type BenchResults } from './bench-results.ts';
import { FRESHNESS_TARGET_MS, type ClientBenchResult } from '../client.bench.ts';
import { fastestPeerMargin, type CompilerBenchResult } from '../compiler.bench.ts';
import type { HttpBenchResult } from '../http/http.bench.ts';
import type { WorkersBenchResult } from '../http/workers.bench.ts';
import { phaseName, type IsolationBenchResult } from '../isolation/isolation.bench.ts';
import { serverErrors } from '../isolation/isolation-verdict.ts';
import { fixed, int, markdownTable, verdict } from './report-table.ts';
import type { ScalingBenchResult } from '../scaling.bench.ts';
import { tableTargets, type TablesBenchResult } from '../tables.bench.ts';

export const RESULTS_START = '<!-- results:start -->';
export const RESULTS_END = '<!-- results:end -->';

/** One figure: what it is, what it is measured against, the figure, its target and verdict (blank when it has no target). */
type Row = [figure: string, baseline: string, measured: string, target: string, verdict: string];

/** `2026-11-25T02:22:14.490Z` as `2026-11-25 02:22 UTC`. */
function utcMinute(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/**
 * The suites a `--merge` run kept from earlier runs, in a sentence; empty
 * when it measured them all.
 *
 * @example
 * keptSuitesNote({ ...results, keptFrom: { http: '2026-11-27T19:37:00.000Z' } }) // ' Kept from an earlier run (`--merge`): http of 2026-11-27 19:37 UTC.'
 */
export function keptSuitesNote(results: BenchResults): string {
  const kept = SUITES.filter((name) => results.keptFrom?.[name] !== undefined && results[name] !== undefined);
  if (kept.length === 0) return '';
  const byRun = new Map<string, string[]>();
  for (const name of kept) {
    const at = utcMinute(results.keptFrom![name]!);
    byRun.set(at, [...(byRun.get(at) ?? []), name]);
  }
  return ` Kept from an earlier run (\`--merge\`): ${[...byRun].map(([at, names]) => `${names.join(', ')} of ${at}`).join('; ')}.`;
}

function compilerRows(r: CompilerBenchResult): Row[] {
  const margin = fastestPeerMargin(r);
  const rows: Row[] = [
    [
      'compiled validator time, passing / failing payload', 'hand-written validator',
      `${fixed(r.ratio.passing, 2)}x / ${fixed(r.ratio.failing, 2)}x (paired, ${r.ratio.rounds} rounds)`,
      `<= ${r.ratio.target}x`, verdict(r.ratio.met),
    ],
    [
      `fastest peer engine (${r.peers.map((p) => p.engine).join(', ')})`, 'compiled validator',
      `${fixed(margin, 1)}x the compiled time`, 'slower than compiled', verdict(margin > 1),
    ],
  ];
  if (r.compile.at1000.medianMs !== null) {
    rows.push(['compile 1000 rules (median)', '', `${fixed(r.compile.at1000.medianMs, 1)} ms`, `< ${r.compile.at1000.target} ms`, verdict(r.compile.at1000.met)]);
  }
  if (r.compile.linear.worstGrowth !== null) {
    const sizes = r.compile.sizes.map((s) => s.rules).join(' / ');
    rows.push([
      `compile time per rule, worst growth from one size to the next (${sizes} rules)`, 'the size before',
      `${fixed(r.compile.linear.worstGrowth, 2)}x`, `<= ${r.compile.linear.target}x`, verdict(r.compile.linear.met),
    ]);
  }
  return rows;
}

function tablesRows(r: TablesBenchResult): Row[] {
  const positions = r.positions.map((p) => p.position).join(' / ');
  const when = `measured ${utcMinute(r.generatedAt)}`;
  const memory = r.memoryMb === null ? 'not measured' : `${fixed(r.memoryMb, 1)} MB`;
  return [
    [
      `decision table of ${int(r.rows)} rows, hit policy first: evaluation, matching row ${positions} (median)`,
      `row-by-row scan of the same table: ${r.positions.map((p) => int(p.scanNs)).join(' / ')} ns`,
      `${r.positions.map((p) => int(p.validatorNs)).join(' / ')} ns (${when})`,
      `<= ${tableTargets.maxEvaluationUs} us each`, verdict(r.met.evaluation),
    ],
    [
      `compile the ${int(r.rows)}-row table (median); memory of the compiled validator`, '',
      `${fixed(r.compile.medianMs, 1)} ms; ${memory}`, `< ${tableTargets.maxCompileMs} ms`, verdict(r.met.compile),
    ],
    ...(r.analysis === undefined ? [] : [[
      `save-time analysis of a ${int(r.analysis.rows)}-row table (overlaps, unreachable rows, gaps; median)`,
      `all ${int(r.analysis.fullRows)} rows: ${int(r.analysis.fullMs)} ms, ${r.analysis.fullComplete ? 'complete' : 'stopped at its budget'}`,
      `${fixed(r.analysis.medianMs, 1)} ms (${when})`, `< ${tableTargets.maxAnalysisMs} ms`, verdict(r.met.analysis === true),
    ] satisfies Row]),
  ];
}

function httpRows(r: HttpBenchResult): Row[] {
  const single = r.single;
  const byProcess = single.byProcess.length > 1 ? `; by process ${single.byProcess.map((p) => fixed(p.ratio, 2)).join(' / ')}` : '';
  const rows: Row[] = [
    [
      'HTTP single validation throughput', `bare Fastify route, ${int(single.bareRps)} req/s`,
      `${fixed(single.ratio, 2)} of it (${int(single.serviceRps)} req/s${byProcess})`, `>= ${single.target}`, verdict(single.met),
    ],
    [
      'HTTP CPU per single validation', `bare route, ${int(single.bareCpuUs)} us`,
      `${int(single.serviceCpuUs)} us (${fixed(single.cpuRatio, 2)}x)`, '', '',
    ],
  ];
  if (r.latency !== null) {
    const l = r.latency;
    rows.push([
      `p99 latency at half throughput (${int(l.rate)} req/s, steady load; median of ${l.serviceP99Ms.length} runs)`,
      `bare route ${fixed(l.bare.latencyMs.p99, 1)} ms; the machine's floor ${fixed(l.floor.latencyMs.p99, 1)} ms`,
      `${fixed(l.service.latencyMs.p99, 1)} ms (runs ${l.serviceP99Ms.map((p) => fixed(p, 1)).join(' ')})`,
      `< ${l.target} ms`, verdict(l.met),
    ]);
  }
  if (r.batchServerTime !== null) {
    const b = r.batchServerTime;
    rows.push([
      `${b.items}-item batch, server time (Server-Timing median)`, `${b.items} in-process validations, ${fixed(b.engineMs, 2)} ms`,
      `${fixed(b.serverTimingMedianMs, 1)} ms`, `< ${b.target} ms`, verdict(b.met),
    ]);
  }
  if (r.failing !== null) {
    rows.push(['HTTP failing payload throughput (full failure records)', 'bare route', `${fixed(r.failing.ratio, 2)} of it`, '', '']);
  }
  for (const b of r.batches) {
    rows.push([`HTTP ${b.name}: validations per second`, 'bare route, same body', `${int(b.itemsPerSec)} (${fixed(b.throughput.ratio, 2)} of the bare route's requests/s)`, '', '']);
  }
  return rows;
}

function scalingRows(r: ScalingBenchResult): Row[] {
  const rows: Row[] = [];
  const slash = (values: string[]): string => values.join(' / ');
  if (r.sizes.length > 0) {
    rows.push([
      `validation time per rule at ${slash(r.sizes.map((s) => String(s.rules)))} rules`, 'hand-written validator, per rule',
      `${slash(r.sizes.map((s) => fixed(s.vsHandPerRule, 2)))}x`, '', '',
    ]);
  }
  if (r.memory.length > 0) {
    rows.push([
      `heap per cached validator, ${slash(r.memory.map((m) => String(m.rules)))} rules`, '',
      `${slash(r.memory.map((m) => fixed(m.bytesPerValidator / 1024, 0)))} KiB`, '', '',
    ]);
  }
  for (const f of r.footprint) {
    rows.push([`${f.contexts} distinct ${f.rules}-rule validators called in turn, time per rule`, 'one of them called alone', `${fixed(f.ratio, 2)}x`, '', '']);
  }
  if (r.firstRequest.length > 0) {
    rows.push([
      `first validation after a publish, ${slash(r.firstRequest.map((f) => String(f.rules)))} rules (server time)`, 'cached validation',
      `${slash(r.firstRequest.map((f) => fixed(f.ratio, 2)))}x`, '', '',
    ]);
  }
  return rows;
}

function clientRows(r: ClientBenchResult): Row[] {
  const us = (ms: number): string => fixed(ms * 1000, 1);
  const f = r.freshness;
  const i = r.idle;
  return [
    ...r.localVsRemote.map((x): Row => [
      `local validation with the typed client, ${x.payload} payload: median / p99`,
      `the same validation over HTTP (keep-alive, one at a time): ${us(x.remote.p50Ms)} / ${us(x.remote.p99Ms)} us`,
      `${us(x.local.p50Ms)} / ${us(x.local.p99Ms)} us; HTTP / local ${int(x.ratio)}x (medians)`, '', '',
    ]),
    [
      `publish to the event on ${int(f.subscribers)} held change feeds (raw readers), p50 / p99 / max`,
      `the publish request's own answer: ${fixed(f.publishAnswerMs, 0)} ms`,
      `${fixed(f.event.p50Ms, 0)} / ${fixed(f.event.p99Ms, 0)} / ${fixed(f.event.maxMs, 0)} ms`, `p99 < ${FRESHNESS_TARGET_MS} ms`,
      verdict(f.event.p99Ms < FRESHNESS_TARGET_MS),
    ],
    [
      `publish to the new version running in ${f.fullValidators} full local validators (alongside those feeds), p50 / p99 / max`, '',
      `${fixed(f.running.p50Ms, 0)} / ${fixed(f.running.p99Ms, 0)} / ${fixed(f.running.maxMs, 0)} ms`, `p99 < ${FRESHNESS_TARGET_MS} ms`,
      verdict(f.running.p99Ms < FRESHNESS_TARGET_MS),
    ],
    [
      `service memory per idle change feed (${int(i.feeds)} held; after a full GC), heap used / rss`,
      `no feed: ${fixed(i.heapBeforeMb, 0)} / ${fixed(i.rssBeforeMb, 0)} MB`, `${fixed(i.heapBytesPerFeed / 1024, 1)} / ${fixed(i.bytesPerFeed / 1024, 1)} KiB`, '', '',
    ],
    [
      `service CPU while ${int(i.feeds)} feeds idle (${fixed(i.windowS, 0)} s window)`, `no feed: ${fixed(i.cpuMsPerSecNone, 1)} ms per s`,
      `${fixed(i.cpuMsPerSecHeld, 1)} ms per s`, '', '',
    ],
  ];
}

function workersRow(r: WorkersBenchResult): Row {
  if (r.skipped !== null) return ['WORKERS=2 throughput', 'WORKERS=1', `skipped: ${r.skipped}`, '', ''];
  return ['WORKERS=2 throughput (PostgreSQL)', `WORKERS=1, ${int(r.workers1Rps)} req/s`, `${fixed(r.ratio, 2)} of it`, '', ''];
}

/** Milliseconds as `12.3 ms`, or `4.6 s` from a second up. */
function duration(ms: number): string {
  return ms >= 1000 ? `${fixed(ms / 1000, 1)} s` : `${fixed(ms, 1)} ms`;
}

/**
 * A row per phase for B's latency against its idle p99, then one each for
 * the targets that hold over every phase: no 5xx, nothing uncounted, A's
 * calls answered.
 */
function isolationRows(r: IsolationBenchResult): Row[] {
  const phases = r.runs.flatMap((run) => run.phases.filter((p) => p.noisy.length > 0).map((p) => ({ p, idle: run.idleP99Ms })));
  const all = r.runs.flatMap((run) => run.phases);
  const t = r.targets;
  const setting = `${r.database}${r.redis ? ' and Redis' : ''}, B at ${r.rate}/s`;
  const rows: Row[] = phases.map(({ p, idle }) => [
    `isolation: B's validations while A runs ${phaseName(p)} (${setting})`, `B idle: p99 ${duration(idle)}`,
    `p99 ${duration(p.quiet.p99Ms)} (${fixed(p.verdict.p99Ratio, 1)}x), worst ${duration(p.quiet.maxMs)}`,
    `p99 <= ${t.maxP99ToIdle}x idle, worst < ${t.maxWorstMs} ms`, verdict(p.verdict.latencyMet),
  ]);
  const count = (of: (p: (typeof all)[number]) => number): number => all.reduce((sum, p) => sum + of(p), 0);
  const quiet5xx = count((p) => serverErrors(p.quiet.statuses));
  const noisy5xx = count((p) => p.noisy.reduce((sum, op) => sum + serverErrors(op.statuses), 0));
  const quietUncounted = count((p) => p.quiet.uncounted);
  const noisyUncounted = count((p) => p.noisy.reduce((sum, op) => sum + op.uncounted, 0));
  const late = count((p) => p.noisy.reduce((sum, op) => sum + op.late + op.unclear, 0));
  const calls = count((p) => p.noisy.reduce((sum, op) => sum + op.calls, 0));
  rows.push(
    ['isolation: 5xx answers, every phase', '', `B ${quiet5xx}, A ${noisy5xx}`, 'none', verdict(all.every((p) => p.verdict.noServerErrors))],
    [
      'isolation: answers passed uncounted (2xx without RateLimit headers), every phase', '', `B ${quietUncounted}, A ${noisyUncounted}`,
      'none', verdict(all.every((p) => p.verdict.allCounted)),
    ],
    [
      `isolation: A's ${calls} calls answered within ${t.maxAnswerMs / 1000} s, a 4xx with a problem code`, '',
      `${late} late, unanswered or unclear`, 'none', verdict(all.every((p) => p.verdict.noisyAnswered)),
    ],
  );
  if (r.workers2Skipped !== null) rows.push(['isolation with WORKERS=2', '', `skipped: ${r.workers2Skipped}`, '', '']);
  return rows;
}

/**
 * The text that goes between the markers: the run's date and machine, then
 * one row per headline figure of the suites that ran.
 *
 * @example
 * resultsTable(JSON.parse(await readFile('bench/results/latest.json', 'utf8')));
 */
export function resultsTable(results: BenchResults): string {
  const env = results.environment;
  const ran = SUITES.filter((name) => results[name] !== undefined);
  const rows: Row[] = [
    ...(results.compiler === undefined ? [] : compilerRows(results.compiler)),
    ...(results.tables === undefined ? [] : tablesRows(results.tables)),
    ...(results.http === undefined ? [] : httpRows(results.http)),
    ...(results.scaling === undefined ? [] : scalingRows(results.scaling)),
    ...(results.client === undefined ? [] : clientRows(results.client)),
    ...(results.workers === undefined ? [] : [workersRow(results.workers)]),
    ...(results.isolation === undefined ? [] : isolationRows(results.isolation)),
  ];
  const monitor = env.memoryMonitor === undefined ? '' : ` The kernel ran ${env.memoryMonitor}.`;
  return [
    `Run of ${utcMinute(results.generatedAt)}${results.quick ? ' (`--quick`: short rounds, figures less steady)' : ''},`
      + ` suites ${ran.join(', ')}, on ${env.cpu}, ${env.cores} cores, Node ${env.node} (${env.platform}/${env.arch});`
      + ` load average at the end ${env.loadAverage.map((l) => fixed(l, 1)).join(' / ')} (1/5/15 min).${monitor}${keptSuitesNote(results)}`
      + ' Every table of the run: [results/latest.md](results/latest.md).',
    '',
    markdownTable({ header: ['figure', 'baseline (same run)', 'measured', 'target', 'verdict'], rows }, { align: 'left' }),
  ].join('\n');
}

/**
 * `readme` with the text between the markers replaced by `table`; the rest
 * is returned byte for byte. Throws when the markers are missing, repeated
 * or out of order, naming them, rather than guess where the table goes.
 * `source` names the file in that error.
 *
 * @example
 * replaceResults(`# Benchmarks\n${RESULTS_START}\nold\n${RESULTS_END}\n`, 'new'); // '# Benchmarks\n<!-- results:start -->\nnew\n<!-- results:end -->\n'
 */
export function replaceResults(readme: string, table: string, source = 'the README'): string {
  const start = readme.indexOf(RESULTS_START);
  const end = readme.indexOf(RESULTS_END);
  const once = (marker: string, at: number): boolean => at >= 0 && readme.indexOf(marker, at + marker.length) < 0;
  if (!once(RESULTS_START, start) || !once(RESULTS_END, end) || end < start) {
    throw new Error(`${source} needs exactly one "${RESULTS_START}" and, after it, one "${RESULTS_END}"`
      + ' on lines of their own where the results table goes; the table was not written');
  }
  return `${readme.slice(0, start + RESULTS_START.length)}\n${table}\n${readme.slice(end)}`;
}

/** Rewrites the results table of the README at `readmePath` from `results`. */
export async function writeReadmeResults(readmePath: string, results: BenchResults): Promise<void> {
  const readme = await readFile(readmePath, 'utf8');
  await writeFile(readmePath, replaceResults(readme, resultsTable(results), readmePath));
}
