/**
 * The CI guard of the hot path (`npm run bench:guard`, under ~60 s): fails
 * (exit 1) when
 *
 * - the compiled validator takes more than 2x the hand-written baseline
 *   (paired median of alternating rounds, `runCompilerBench({ quick })`),
 *   on the passing or the failing payload, or
 * - on the realistic-loan suite (`realistic.bench.ts`: 20 rules of the
 *   kind tenants write, 1,000 payloads), the compiled validator takes more
 *   than 2x its hand-written baseline on the passing or the failing set, or
 * - the 10,000-row decision table's compiled validator takes more than 0.1
 *   of a row-by-row scan's time, matching row late or missing
 *   (`runTablesGuardCheck`, tables.bench.ts), or
 * - the service's single-validation throughput falls below 0.6 of the bare
 *   Fastify route's (median of 8 alternating 1.5-second rounds, both servers
 *   in child processes, see `http/http.bench.ts`), or
 * - with ISOLATION_GUARD_ENABLED: one tenant's validations at a fixed rate
 *   have a p99, while another tenant runs a stored-test run of a quadratic
 *   rule, above 5x their idle p99 and a worst request of 250 ms or more, or
 *   any answer is a 5xx or passed uncounted (`isolation/isolation-check.ts`),
 *
 * and prints the figures either way. A failed verdict is measured once
 * more, and the guard fails only when both fail. Both figures are ratios against a
 * baseline measured in the same run, and medians of several rounds, so a
 * busy machine or one noisy round does not fail it. The thresholds are
 * looser than the targets (1.5x and 0.8) on purpose: the guard catches
 * regressions, the full benchmark reports the targets.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { runCompilerBench } from './compiler.bench.ts';
import { runRealisticBench } from './realistic.bench.ts';
import { runTablesGuardCheck } from './tables.bench.ts';
import { checkAnswers, pairedThroughput, singleBody, SINGLE_PATH, startHttpPair, type PairedThroughput } from './http/http.bench.ts';
import { runIsolationCheck, type IsolationCheckFigures } from './isolation/isolation-check.ts';
import { fixed, int } from './tools/report-table.ts';

/**
 * Whether the guard runs the isolation check. On since stored-test runs
 * moved to the management threads (src/pool/): were they back on the event
 * loop that answers validations, the check would fail on every run. Off
 * only to bisect something else.
 */
export const ISOLATION_GUARD_ENABLED = true;

/** Where the guard fails. */
export const guardThresholds = {
  /** Compiled over hand-written time, either payload. */
  maxEngineRatio: 2,
  /** Compiled over hand-written time on the realistic-loan suite, either set. */
  maxRealisticRatio: 2,
  /**
   * The 10,000-row decision table's compiled validator over a row-by-row
   * scan of it, matching row late or missing: far below 0.01 with the index
   * lookups (0.0005 measured), near 1 if the generated code scanned the rows again.
   */
  maxTableScanRatio: 0.1,
  /** Service over bare-route throughput. */
  minHttpRatio: 0.6,
  /**
   * B's p99 during A's quadratic stored-test run over its idle p99; the
   * check passes below it, or when B's worst request is under
   * `isolationWorstMs`. A run on the event loop stalls B for the length of
   * each test (about 300 ms), far past both; a busy 2-core machine moves
   * the ratio, rarely both figures at once.
   */
  maxIsolationRatio: 5,
  isolationWorstMs: 250,
} as const;

export interface GuardFigures {
  engine: { passing: number; failing: number; rounds: number };
  /** The realistic-loan suite's compiled / hand-written ratios; absent when not measured. */
  realistic?: { passing: number; failing: number; rounds: number };
  /** The decision table's compiled / row-by-row scan ratios (tables.bench.ts); absent when not measured. */
  tables?: { late: number; missing: number };
  http: Pick<PairedThroughput, 'ratio' | 'serviceRps' | 'bareRps' | 'serviceCpuUs' | 'bareCpuUs' | 'cpuRatio'> & { roundRatios: number[] };
  /** The isolation check's figures; absent when it did not run (ISOLATION_GUARD_ENABLED). */
  isolation?: IsolationCheckFigures;
}

export interface GuardVerdict {
  ok: boolean;
  /** One line per check, with its figure, threshold and verdict. */
  lines: string[];
}

/**
 * Judges the figures against the thresholds; pure, so the verdict itself is testable.
 *
 * @example
 * judge({ engine: { passing: 1.3, failing: 1.4, rounds: 300 }, http: { ratio: 0.7, ... } }).ok // true
 */
export function judge(figures: GuardFigures, thresholds: Record<keyof typeof guardThresholds, number> = guardThresholds): GuardVerdict {
  const engineWorst = Math.max(figures.engine.passing, figures.engine.failing);
  // NaN fails every check: a figure that could not be measured proves nothing.
  const engineOk = engineWorst <= thresholds.maxEngineRatio;
  const r = figures.realistic;
  const realisticOk = r === undefined || Math.max(r.passing, r.failing) <= thresholds.maxRealisticRatio;
  const t = figures.tables;
  const tablesOk = t === undefined || Math.max(t.late, t.missing) <= thresholds.maxTableScanRatio;
  const httpOk = figures.http.ratio >= thresholds.minHttpRatio;
  const h = figures.http;
  const realisticLine = r === undefined ? [] : [
    `realistic: compiled / hand-written = passing ${fixed(r.passing, 2)}, failing ${fixed(r.failing, 2)}`
      + ` (paired median of ${r.rounds} rounds; fails above ${thresholds.maxRealisticRatio}): ${realisticOk ? 'ok' : 'FAILED'}`,
  ];
  const tablesLine = t === undefined ? [] : [
    `tables: 10,000-row table, compiled / row-by-row scan = matching row late ${fixed(t.late, 3)}, missing ${fixed(t.missing, 3)}`
      + ` (medians; fails above ${thresholds.maxTableScanRatio}): ${tablesOk ? 'ok' : 'FAILED'}`,
  ];
  const isolation = figures.isolation === undefined ? undefined : judgeIsolation(figures.isolation, thresholds);
  return {
    ok: engineOk && realisticOk && tablesOk && httpOk && (isolation?.ok ?? true),
    lines: [
      `engine: compiled / hand-written = passing ${fixed(figures.engine.passing, 2)}, failing ${fixed(figures.engine.failing, 2)}`
        + ` (paired median of ${figures.engine.rounds} rounds; fails above ${thresholds.maxEngineRatio}): ${engineOk ? 'ok' : 'FAILED'}`,
      ...realisticLine,
      ...tablesLine,
      `http: service / bare route throughput = ${fixed(h.ratio, 2)} (rounds ${h.roundRatios.map((r) => fixed(r, 2)).join(' ')};`
        + ` ${int(h.serviceRps)} vs ${int(h.bareRps)} req/s; CPU per request ${int(h.serviceCpuUs)} vs ${int(h.bareCpuUs)} us,`
        + ` ${fixed(h.cpuRatio, 2)}x; fails below ${thresholds.minHttpRatio}): ${httpOk ? 'ok' : 'FAILED'}`,
      ...(isolation === undefined ? [] : [isolation.line]),
    ],
  };
}

function judgeIsolation(i: IsolationCheckFigures, thresholds: Record<keyof typeof guardThresholds, number>): { ok: boolean; line: string } {
  // NaN fails: a ratio that could not be measured proves nothing.
  const latencyOk = i.ratio <= thresholds.maxIsolationRatio || i.worstMs < thresholds.isolationWorstMs;
  const ok = latencyOk && i.serverErrors === 0 && i.uncounted === 0;
  return {
    ok,
    line: `isolation: tenant B's p99 during tenant A's quadratic stored-test run / idle p99 = ${fixed(i.ratio, 1)}`
      + ` (${fixed(i.p99Ms, 1)} vs ${fixed(i.idleP99Ms, 1)} ms, worst ${fixed(i.worstMs, 0)} ms, ${i.requests} requests; A's run ${i.noisy};`
      + ` ${i.serverErrors} 5xx, ${i.uncounted} uncounted; fails above ${thresholds.maxIsolationRatio} with a worst of`
      + ` ${thresholds.isolationWorstMs} ms or more, or on any 5xx or uncounted answer): ${ok ? 'ok' : 'FAILED'}`,
  };
}

export interface GuardOptions {
  print?: boolean;
  /** HTTP rounds and their length; the defaults fit the ~60 s budget. */
  httpRounds?: number;
  httpRoundS?: number;
  /**
   * Unmeasured load on each server first; default 3 s. With a shorter
   * warm-up the first rounds measured far below the others: the servers
   * were still being optimised.
   */
  httpWarmupS?: number;
  /** Skip the engine benchmarks, compiler, realistic-loan and tables (the smoke test of the machinery uses this). */
  engine?: boolean;
  /** Run the isolation check; default ISOLATION_GUARD_ENABLED. */
  isolation?: boolean;
}

/**
 * Measures both figures and judges them.
 *
 * @example
 * const { verdict } = await runGuard();
 * process.exitCode = verdict.ok ? 0 : 1;
 */
export async function runGuard(options: GuardOptions = {}): Promise<{ figures: GuardFigures; verdict: GuardVerdict }> {
  const log = options.print === false ? () => {} : (line: string) => console.log(line);
  // The servers start (several seconds of their own CPU) while the engine
  // benchmark runs: its ratio is paired round by round, so it is not moved by that.
  const starting = startHttpPair();
  starting.catch(() => {});
  let engine: GuardFigures['engine'] = { passing: Number.NaN, failing: Number.NaN, rounds: 0 };
  let realistic: GuardFigures['realistic'];
  let tables: GuardFigures['tables'];
  try {
    if (options.engine !== false) {
      const compiler = await runCompilerBench({ quick: true, print: false, write: false });
      engine = { passing: compiler.ratio.passing, failing: compiler.ratio.failing, rounds: compiler.ratio.rounds };
      log(`engine figures measured (${compiler.ruleCount} rules)`);
      const { ratio } = await runRealisticBench({ quick: true, print: false, ratiosOnly: true });
      realistic = { passing: ratio.passing, failing: ratio.failing, rounds: ratio.rounds };
      log('realistic-loan figures measured');
      tables = await runTablesGuardCheck();
      log('decision-table figures measured');
    }
  } catch (error) {
    await starting.then((pair) => pair.stop(), () => {});
    throw error;
  }
  const pair = await starting;
  let http: PairedThroughput;
  try {
    await checkAnswers(pair, { batch: false, transaction: false });
    http = await pairedThroughput(pair, SINGLE_PATH, singleBody(), {
      rounds: options.httpRounds ?? 8, durationS: options.httpRoundS ?? 1.5, connections: 10, warmupS: options.httpWarmupS ?? 3,
    });
  } finally {
    await pair.stop();
  }
  let isolation: IsolationCheckFigures | undefined;
  if (options.isolation ?? ISOLATION_GUARD_ENABLED) isolation = await runIsolationCheck();
  else log('isolation: not checked (ISOLATION_GUARD_ENABLED is false in bench/guard.ts)');
  const figures: GuardFigures = {
    engine,
    realistic,
    tables,
    http: {
      ratio: http.ratio, serviceRps: http.serviceRps, bareRps: http.bareRps, serviceCpuUs: http.serviceCpuUs,
      bareCpuUs: http.bareCpuUs, cpuRatio: http.cpuRatio, roundRatios: http.rounds.map((r) => r.ratio),
    },
    isolation,
  };
  const verdict = judge(figures);
  for (const line of verdict.lines) log(line);
  log(verdict.ok ? 'bench:guard passed' : 'bench:guard FAILED');
  return { figures, verdict };
}

const invokedDirectly = process.argv[1] !== undefined
  && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (invokedDirectly) {
  const started = Date.now();
  let { verdict } = await runGuard();
  if (!verdict.ok) {
    // CI runs this on a shared 2-core VM whose speed moves by the minute: a
    // regression fails every measurement, a slow moment of the machine rarely two.
    console.log('bench:guard: measuring once more before failing');
    ({ verdict } = await runGuard());
  }
  console.log(`(${((Date.now() - started) / 1000).toFixed(0)} s)`);
  // Idle keep-alive sockets of the HTTP client would hold the process a few more seconds.
  process.exit(verdict.ok ? 0 : 1);
}
