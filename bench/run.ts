/**
 * All benchmark suites (`npm run bench`): the compiler engine benchmark,
 * the decision tables benchmark, the HTTP benchmark, the scaling benchmark,
 * local evaluation with the typed client, WORKERS=2 vs 1 and the noisy-neighbour benchmark, one after the other
 * (never two at once: each is the other's noise). Writes
 * `results/latest.json` (every figure), `results/latest.md` (the summary
 * tables with targets and verdicts) and the results table of
 * `bench/README.md` (readme-results.ts).
 *
 * `--quick` runs the short version of every suite; `--only=http,scaling`
 * runs some suites (and still writes every file, with the others absent);
 * with `--merge` too, the other suites' figures are kept from the existing
 * `results/latest.json`, and the files say which run each suite comes from.
 * `--readme-only` measures nothing: it rewrites `results/latest.md` and the
 * README's results table from the existing `results/latest.json`.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SUITES, type BenchResults, type SuiteName } from './tools/bench-results.ts';
import { clientTables, FRESHNESS_TARGET_MS, runClientBench, type ClientBenchResult } from './client.bench.ts';
import { fastestPeerMargin, runCompilerBench, targets as compilerTargets, type CompilerBenchResult } from './compiler.bench.ts';
import { httpTables, runHttpBench, type HttpBenchResult } from './http/http.bench.ts';
import { isolationSetting, isolationTable, phaseName, runIsolationBench, type IsolationBenchResult } from './isolation/isolation.bench.ts';
import { fixed, int, markdownTable, verdict } from './tools/report-table.ts';
import { memoryMonitor } from './tools/memory-monitor.ts';
import { runWorkersBench, type WorkersBenchResult } from './http/workers.bench.ts';
import { keptSuitesNote, writeReadmeResults } from './tools/readme-results.ts';
import { runScalingBench, scalingTables, type ScalingBenchResult } from './scaling.bench.ts';
import { runTablesBench, tableTargets, type TablesBenchResult } from './tables.bench.ts';


const benchDir = path.dirname(fileURLToPath(import.meta.url));
const resultsDir = path.join(benchDir, 'results');
const latestJson = path.join(resultsDir, 'latest.json');
const readmePath = path.join(benchDir, 'README.md');

function compilerSection(r: CompilerBenchResult): string[] {
  const engines = markdownTable({
    header: ['engine', 'payload', 'ops/s', 'mean ns', 'x hand-written'],
    rows: r.engines.map((e) => [e.engine, e.payload, int(e.opsPerSec), int(e.meanNs), fixed(e.vsHandWritten, 2)]),
  });
  const compile = markdownTable({
    header: ['rules', 'compile ms (median)', 'min ms', 'per rule us', 'warming pass ns', 'warming fail ns'],
    rows: r.compile.sizes.map((s) => [
      String(s.rules), fixed(s.medianMs, 1), fixed(s.minMs, 1), fixed(s.perRuleUs, 1), int(s.validatePassingNs), int(s.validateFailingNs),
    ]),
  });
  const fasterThanPeers = fastestPeerMargin(r);
  return [
    '## Engine (compiler benchmark)', '',
    `Compiled / hand-written, paired over ${r.ratio.rounds} alternating rounds: passing **${fixed(r.ratio.passing, 2)}**,`
      + ` failing **${fixed(r.ratio.failing, 2)}** (target <= ${compilerTargets.maxRatioToHandWritten}: ${verdict(r.ratio.met)}).`
      + ` The fastest peer engine takes at least ${fixed(fasterThanPeers, 1)}x the compiled validator's time`
      + ` (target: faster than every peer: ${verdict(fasterThanPeers > 1)}).`, '',
    engines, '',
    `Compile ${compilerTargets.compileRules} rules: ${fixed(r.compile.at1000.medianMs, 1)} ms (target < ${compilerTargets.maxCompileMs} ms:`
      + ` ${verdict(r.compile.at1000.met)}); worst per-rule growth ${fixed(r.compile.linear.worstGrowth, 2)}`
      + ` (target <= ${compilerTargets.maxPerRuleGrowth}: ${verdict(r.compile.linear.met)}).`, '',
    compile, '',
  ];
}

function tablesSection(r: TablesBenchResult): string[] {
  return [
    '## Decision tables', '',
    `One rule with a ${int(r.rows)}-row table under hit policy first (two equality columns, a list column, a range column),`
      + ' per evaluation, medians; the scan is the same cells searched row by row:', '',
    markdownTable({
      header: ['matching row', 'validator ns', 'index ns', 'row-by-row scan ns'],
      rows: r.positions.map((p) => [`${p.position} (${p.row < 0 ? 'none' : p.row})`, int(p.validatorNs), int(p.indexNs), int(p.scanNs)]),
    }), '',
    `Target: at most ${tableTargets.maxEvaluationUs} us in every position: ${verdict(r.met.evaluation)}. Compile: median`
      + ` ${fixed(r.compile.medianMs, 1)} ms over ${r.compile.runs} (target < ${tableTargets.maxCompileMs} ms: ${verdict(r.met.compile)}).`
      + ` Memory of one compiled validator: ${r.memoryMb === null ? 'not measured' : `${fixed(r.memoryMb, 1)} MB`};`
      + ` generated source ${int(r.sourceLength)} characters.`
      + (r.analysis === undefined ? '' : ` Save-time analysis of its first ${int(r.analysis.rows)} rows (noMatch "fail"): median ${fixed(r.analysis.medianMs, 1)} ms`
        + ` (target < ${tableTargets.maxAnalysisMs} ms: ${verdict(r.met.analysis === true)}); of all ${int(r.analysis.fullRows)} rows ${int(r.analysis.fullMs)} ms,`
        + ` ${r.analysis.fullComplete ? 'complete' : 'stopped at its budget'}.`), '',
  ];
}

function httpSection(r: HttpBenchResult): string[] {
  const { throughput, notes } = httpTables(r);
  return [
    '## HTTP (service vs bare Fastify route)', '',
    `${r.ruleCount}-rule loan context, ${r.singleBodyBytes}-byte body; service and bare route in child processes, the load in the`
      + ' parent (autocannon for throughput, a steady open-loop load for latency), alternating rounds. "x bare" is the median of'
      + ' per-round ratios; CPU is each server\'s own CPU time per request.', '',
    markdownTable(throughput), '',
    ...notes.map((n) => `- ${n}`), '',
  ];
}

function scalingSection(r: ScalingBenchResult): string[] {
  const [sizes, memory, footprint, first] = scalingTables(r);
  return [
    '## Scaling', '',
    `Baseline: the hand-written 20-rule loan validator, ${fixed(r.handWrittenPassingUs, 2)} us per call (passing payload), same run.`
      + ' "x hand per rule" is the compiled time per rule over the hand-written time per rule.', '',
    markdownTable(sizes), '',
    'Memory per cached validator (heap after full gc with N more validators held, minus before, over N):', '',
    markdownTable(memory), '',
    'Code footprint (passing payload): distinct validators called one after another, against one of them alone.'
      + ' The cost per rule follows the machine code a validation runs through, not the size of one context:', '',
    markdownTable(footprint), '',
    ...(first.rows.length === 0 ? [] : [
      'First validation after a publish against cached validations (HTTP, failing payload, medians):', '',
      markdownTable(first), '',
    ]),
  ];
}

function clientSection(r: ClientBenchResult): string[] {
  const [local, freshness, idle] = clientTables(r);
  const f = r.freshness;
  return [
    '## Local evaluation (typed client)', '',
    `${r.ruleCount}-rule loan context. Local: \`validateSync\` of \`client.localValidator\` (tinybench); HTTP: POST /api/v1/validation/validate,`
      + ' one request at a time on a keep-alive connection, same machine, same payloads:', '',
    markdownTable(local), '',
    `Freshness: ${int(f.subscribers)} raw change-feed connections plus ${f.fullValidators} full local validators held by one service process,`
      + ` ${f.publishes} publishes; ${int(f.refusedWhileOpening)} connections refused (503/429) while they opened and asked again after Retry-After`
      + ` (the publish request answered in ${fixed(f.publishAnswerMs, 1)} ms, median); target p99 < ${FRESHNESS_TARGET_MS} ms:`
      + ` ${verdict(f.met)}.`, '',
    markdownTable(freshness), '',
    'The service while the feeds idle (its own process: process.memoryUsage() after a full GC; CPU time from /proc):', '',
    markdownTable(idle), '',
  ];
}

function workersSection(r: WorkersBenchResult): string[] {
  if (r.skipped !== null) return ['## WORKERS', '', `skipped: ${r.skipped}`, ''];
  return [
    '## WORKERS (PostgreSQL)', '',
    markdownTable({
      header: ['workers', 'req/s (median)', 'rounds'],
      rows: [1, 2].map((w) => [
        String(w), int(w === 1 ? r.workers1Rps : r.workers2Rps),
        r.rounds.filter((x) => x.workers === w).map((x) => int(x.requestsPerSec)).join(', '),
      ]),
    }), '',
    `WORKERS=2 / WORKERS=1 throughput: **${fixed(r.ratio, 2)}** (${r.workerProcesses} worker processes, ${r.durationS} s rounds,`
      + ` ${r.connections} connections).`, '',
  ];
}

function isolationSection(r: IsolationBenchResult): string[] {
  const misses = r.runs.flatMap((run) => run.phases.filter((p) => !p.verdict.met).map((p) => `- ${phaseName(p)}: ${p.verdict.misses.join('; ')}`));
  return [
    '## Isolation (noisy neighbour)', '',
    `${isolationSetting(r)}. B's p99 against its idle p99 (target <= ${r.targets.maxP99ToIdle}x), its worst request (target`
      + ` < ${r.targets.maxWorstMs} ms), no 5xx and no uncounted answer (a 2xx without RateLimit headers) for either tenant,`
      + ` A's calls answered within ${r.targets.maxAnswerMs / 1000} s or with a clear 4xx.`, '',
    markdownTable(isolationTable(r, { noisyColumn: true })), '',
    ...(r.workers2Skipped === null ? [] : [`WORKERS=2: skipped: ${r.workers2Skipped}.`, '']),
    ...(misses.length === 0 ? [] : ['Misses:', '', ...misses, '']),
  ];
}

/** The summary written to results/latest.md. */
export function summaryMarkdown(results: BenchResults): string {
  const env = results.environment;
  const monitor = env.memoryMonitor === undefined ? ''
    : ` The kernel ran ${env.memoryMonitor}, which holds up processes for a few ms at each sample and shows in latency tails`
      + ' (bench/README, "Latency at half throughput").';
  const lines = [
    '# Benchmark results', '',
    `${results.generatedAt}${results.quick ? ' (quick)' : ''}: ${env.node} ${env.platform}/${env.arch}, ${env.cpu}, ${env.cores} cores;`
      + ` load average at the end ${env.loadAverage.map((l) => fixed(l, 1)).join(' / ')} (1/5/15 min; above the core count,`
      + ' other work shared the CPU). Every figure is a ratio against a baseline measured in the same run; absolute numbers'
      + ` depend on the machine.${monitor} Produced by \`npm run bench\` in ${fixed(results.durationS, 0)} s.${keptSuitesNote(results)}`, '',
  ];
  if (results.compiler !== undefined) lines.push(...compilerSection(results.compiler));
  if (results.tables !== undefined) lines.push(...tablesSection(results.tables));
  if (results.http !== undefined) lines.push(...httpSection(results.http));
  if (results.scaling !== undefined) lines.push(...scalingSection(results.scaling));
  if (results.client !== undefined) lines.push(...clientSection(results.client));
  if (results.workers !== undefined) lines.push(...workersSection(results.workers));
  if (results.isolation !== undefined) lines.push(...isolationSection(results.isolation));
  return `${lines.join('\n').trimEnd()}\n`;
}

function selectedSuites(argv: string[]): SuiteName[] {
  const only = argv.find((a) => a.startsWith('--only='));
  if (only === undefined) return [...SUITES];
  const names = only.slice('--only='.length).split(',');
  for (const name of names) {
    if (!(SUITES as readonly string[]).includes(name)) throw new Error(`unknown suite "${name}"; suites: ${SUITES.join(', ')}`);
  }
  return names as SuiteName[];
}

async function rewriteReadmeFromLatest(): Promise<void> {
  const results = JSON.parse(await readFile(latestJson, 'utf8')) as BenchResults;
  await writeFile(path.join(resultsDir, 'latest.md'), summaryMarkdown(results));
  await writeReadmeResults(readmePath, results);
  console.log(`wrote results/latest.md and the results table of bench/README.md from bench/results/latest.json (run of ${results.generatedAt})`);
}

/** For `--merge`: the figures of the suites not measured now, from the existing results file, each with the date of its run. */
async function keptSuites(measured: readonly SuiteName[]): Promise<Pick<BenchResults, SuiteName | 'keptFrom'>> {
  let earlier: BenchResults;
  try {
    earlier = JSON.parse(await readFile(latestJson, 'utf8')) as BenchResults;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw error;
  }
  const kept: Pick<BenchResults, SuiteName | 'keptFrom'> = { keptFrom: {} };
  for (const name of SUITES) {
    if (measured.includes(name) || earlier[name] === undefined) continue;
    Object.assign(kept, { [name]: earlier[name] });
    kept.keptFrom![name] = earlier.keptFrom?.[name] ?? earlier.generatedAt;
  }
  return kept;
}

async function main(): Promise<void> {
  if (process.argv.includes('--readme-only')) {
    await rewriteReadmeFromLatest();
    return;
  }
  const quick = process.argv.includes('--quick');
  const suites = selectedSuites(process.argv);
  const started = Date.now();
  const results: Omit<BenchResults, 'environment' | 'durationS'> = { generatedAt: new Date().toISOString(), quick };
  if (process.argv.includes('--merge')) Object.assign(results, await keptSuites(suites));
  // The compiler benchmark writes its own compiler-latest.json on full runs, as `bench:compiler` does.
  if (suites.includes('compiler')) results.compiler = await runCompilerBench({ quick });
  if (suites.includes('tables')) results.tables = await runTablesBench({ quick });
  if (suites.includes('http')) results.http = await runHttpBench({ quick });
  if (suites.includes('scaling')) results.scaling = await runScalingBench({ quick });
  if (suites.includes('client')) results.client = await runClientBench({ quick });
  if (suites.includes('workers')) results.workers = await runWorkersBench({ quick });
  if (suites.includes('isolation')) results.isolation = await runIsolationBench({ quick });
  const all: BenchResults = {
    ...results,
    environment: {
      node: process.version, platform: process.platform, arch: process.arch,
      cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.availableParallelism(), loadAverage: os.loadavg(),
      memoryMonitor: memoryMonitor(),
    },
    durationS: (Date.now() - started) / 1000,
  };
  await mkdir(resultsDir, { recursive: true });
  const rounded = (_key: string, value: unknown): unknown =>
    typeof value === 'number' && !Number.isInteger(value) ? Number(value.toPrecision(4)) : value;
  const json = JSON.stringify(all, rounded, 2);
  await writeFile(latestJson, `${json}\n`);
  await writeFile(path.join(resultsDir, 'latest.md'), summaryMarkdown(all));
  // The README gets the figures as stored, rounded, so that `--readme-only` renders the same table.
  await writeReadmeResults(readmePath, JSON.parse(json) as BenchResults);
  console.log(`\nwrote bench/results/latest.json, bench/results/latest.md and the results table of bench/README.md (${fixed(all.durationS, 0)} s)`);
}

const invokedDirectly = process.argv[1] !== undefined
  && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (invokedDirectly) {
  await main();
  // Idle keep-alive sockets of the HTTP client would hold the process a few more seconds.
  process.exit(0);
}
