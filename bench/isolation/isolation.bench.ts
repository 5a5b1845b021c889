/**
 * Noisy-neighbour benchmark (`npm run bench:isolation`): does one tenant's
 * management work take the data plane's latency from another tenant?
 *
 * The real service (the bundle `npm start` runs, http/ and tools/ start it)
 * with two tenants from RULES_BOOTSTRAP_TENANTS, on PostgreSQL when
 * DATABASE_URL is set (a fresh database, dropped afterwards), else PGlite;
 * counting its rate limit in Redis when REDIS_URL is set. Tenant B, the
 * quiet one, sends single validations of the 20-rule loan context at a
 * fixed rate (one every 10 ms, open loop: fixed-rate-load.ts) and records
 * each answer's latency, status, and whether it carried the RateLimit
 * headers. Tenant A, the noisy one, runs the heavy operations of
 * `noisy-tenant.ts` at the sizes the service accepts, one at a time (each
 * repeated until the phase's minimum length has passed), then all at once;
 * then, on PostgreSQL, the idle and all-at-once phases again with
 * WORKERS=2. B's load runs through each phase and a second past A's last
 * answer, so what A leaves behind (a collection of a large answer) is A's.
 *
 * Targets per phase (`isolation-verdict.ts`): B's p99 at most 2x its idle
 * p99, B's worst request under 100 ms, no 5xx and no uncounted answer for
 * either tenant, and each of A's calls answered within 30 s (a clear 4xx
 * is an answer). Nothing is pinned to a core: the service's worker threads
 * need every core there is, as in production.
 *
 * `-- --quick` shortens every phase (same sizes); `-- --cpu-prof` writes the
 * first service's CPU profiles to `<tmpdir>/rules-bench-isolation-profiles/`
 * and prints each phase's span on the monotonic clock, for
 * `bench/tools/main-thread-tasks.ts --phase=FROM-TO`; figures go to stdout;
 * `npm run bench` puts them in the results files. Exit code 1 when a target
 * is missed.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { SINGLE_PATH, singleBody } from '../http/http.bench.ts';
import { loanApplicationSuite as suite } from '../suites/loan-application.ts';
import { benchDatabase } from '../tools/bench-database.ts';
import { runFixedRate } from '../tools/fixed-rate-load.ts';
import { fixed, int, textTable, verdict, type Table } from '../tools/report-table.ts';
import { publishContext } from '../tools/rules-api.ts';
import { createValidatorKey, startService, type ServiceProcess } from '../tools/service-process.ts';
import { HEADER_LIMIT } from '../../src/rate-limit/register-rate-limit.ts';
import {
  isolationTargets, judgePhase, summariseAnswers, type IsolationTargets, type OperationFigures, type PhaseVerdict, type QuietFigures,
} from './isolation-verdict.ts';
import type { CallTarget, ManagementAnswer } from './management-call.ts';
import {
  FULL_SIZES, OPERATION_LABELS, OPERATIONS, runOperation, setUpNoisyTenant, type NoisySizes, type NoisyTenant, type OperationName,
} from './noisy-tenant.ts';

/** B's offered rate: one validation every 10 ms. */
export const QUIET_RATE = 100;
const QUIET_CONNECTIONS = 8;
/** B's load goes on this long after A's last answer. */
const TAIL_MS = 1000;
/**
 * Unmeasured load before the idle phase: a service just started (with
 * WORKERS=2, a worker still warming up, the database still busy with the
 * previous process's last statements) answers slower for a few seconds.
 */
const SETTLE_MS = 3000;
/** A client gives up on one of A's calls after this (a call past the target's 30 s is already a miss). */
const CALL_TIMEOUT_MS = 120_000;
/** Parallel loops of the import dry run, as the issue's measurement ran them. */
const IMPORT_LOOPS = 3;
const NOISY = 'tenant-a';
const QUIET = 'tenant-b';

export interface IsolationBenchOptions {
  quick?: boolean;
  /**
   * One phase only (after the idle one), to see one change's effect: an operation's name, or `all`
   * for all of them at once (`--only=explain`, `--only=import dry run`). The WORKERS=2 run is only
   * `all`'s. The verdict is then that phase's alone: the full run is the one that counts.
   */
  only?: OperationName | 'all';
  print?: boolean;
  /** Write the first service's CPU profiles (node --cpu-prof) to this folder and print each phase's span. */
  profileDir?: string;
  /** More node flags for every service started (`--node-flag=--no-memory-reducer`): to measure a V8 setting's effect. */
  extraNodeFlags?: string[];
  /** A PostgreSQL server to make the run's database on; default process.env.DATABASE_URL (unset: PGlite). */
  databaseUrl?: string;
  /** Default process.env.REDIS_URL (unset: counters in memory). */
  redisUrl?: string;
  sizes?: NoisySizes;
}

export interface PhaseResult {
  name: string;
  workers: number;
  durationS: number;
  quiet: QuietFigures;
  noisy: OperationFigures[];
  verdict: PhaseVerdict;
  /**
   * CPU time the service's main thread had during the phase (ms; NaN with WORKERS > 1, whose
   * main thread only hands out connections, or off Linux): its own work, however loaded the machine.
   */
  mainThreadCpuMs?: number;
}

export interface IsolationRun {
  workers: number;
  idleP99Ms: number;
  phases: PhaseResult[];
}

export interface IsolationBenchResult {
  database: 'PostgreSQL' | 'PGlite';
  redis: boolean;
  quick: boolean;
  rate: number;
  sizes: NoisySizes;
  /** Items per recorded sample (the largest payload the service sampled, up to `sizes.quadraticItems`). */
  sampledItems: number;
  targets: IsolationTargets;
  runs: IsolationRun[];
  /** Why there is no WORKERS=2 run; null when there is one. */
  workers2Skipped: string | null;
  loadAverage: number[];
  met: boolean;
}

/** The service with both tenants, as the phases use it. */
export interface IsolationService {
  service: ServiceProcess;
  noisy: CallTarget;
  /** B's validation request: URL, headers with B's validator key, body. */
  quiet: { url: string; headers: Record<string, string>; body: string };
  stop(): Promise<void>;
}

/** Admin keys of both tenants, kept across restarts on the same database. */
export interface TenantKeys {
  noisy: string;
  quiet: string;
}

export function newTenantKeys(): TenantKeys {
  return { noisy: `bench_${randomBytes(24).toString('base64url')}`, quiet: `bench_${randomBytes(24).toString('base64url')}` };
}

/**
 * Starts the service with both tenants bootstrapped and makes B's
 * validator key; on the first start (`publishQuiet`), B's loan context too.
 */
export async function startIsolationService(options: {
  keys: TenantKeys; databaseUrl?: string; redisUrl?: string; workers?: number; publishQuiet: boolean; nodeFlags?: string[];
  /** A command that runs node (see ChildServerOptions.wrapper). */
  wrapper?: string[];
}): Promise<IsolationService> {
  const { keys } = options;
  const redis: Record<string, string> = options.redisUrl === undefined || options.redisUrl === ''
    ? {}
    : { REDIS_URL: options.redisUrl, REDIS_KEY_PREFIX: `bench-isolation-${randomBytes(4).toString('hex')}:` };
  const service = await startService({
    databaseUrl: options.databaseUrl, workers: options.workers, tenantId: NOISY, adminKey: keys.noisy, nodeFlags: options.nodeFlags,
    wrapper: options.wrapper, env: { RULES_BOOTSTRAP_TENANTS: `${NOISY}:${keys.noisy},${QUIET}:${keys.quiet}`, ...redis, ...budget() },
  });
  try {
    const quietAdmin = { ...service, tenantId: QUIET, adminKey: keys.quiet };
    if (options.publishQuiet) await publishContext(quietAdmin, suite.context, suite.rules);
    const quietKey = await createValidatorKey(service.baseUrl, QUIET, keys.quiet);
    return {
      service,
      noisy: { baseUrl: service.baseUrl, tenantId: NOISY, adminKey: keys.noisy },
      quiet: {
        url: service.baseUrl + SINGLE_PATH,
        headers: { 'content-type': 'application/json', 'x-api-key': quietKey, 'x-tenant-id': QUIET },
        body: singleBody(),
      },
      stop: () => service.stop(),
    };
  } catch (error) {
    await service.stop();
    throw error;
  }
}

/**
 * OPERATION_TIME_BUDGET_MS from this process's environment, passed on: on a
 * machine loaded by other work, setting up A's 5,000-rule context (its
 * stored tests run once) may need more than the default 10 s.
 */
function budget(): Record<string, string> {
  const ms = process.env.OPERATION_TIME_BUDGET_MS;
  return ms === undefined || ms === '' ? {} : { OPERATION_TIME_BUDGET_MS: ms };
}

/** One validation of A's own (for its samples), with its validator key; throws unless 200. */
function noisyValidation(service: ServiceProcess): (body: string) => Promise<void> {
  return async (body) => {
    const response = await fetch(service.baseUrl + SINGLE_PATH, { method: 'POST', headers: service.headers, body, signal: AbortSignal.timeout(30_000) });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`tenant A's validation answered ${response.status}: ${text.slice(0, 300)}`);
  };
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `operation` back to back until `minMs` has passed (at least once).
 * After a 429 or 503 with Retry-After it waits as told (at most 2 s), as a
 * well-behaved client would.
 */
async function repeatFor(tenant: NoisyTenant, operation: OperationName, minMs: number): Promise<ManagementAnswer[]> {
  const answers: ManagementAnswer[] = [];
  const started = performance.now();
  do {
    const got = await runOperation(tenant, operation, CALL_TIMEOUT_MS);
    answers.push(...got);
    const wait = Math.max(0, ...got.map((a) => a.retryAfterS ?? 0));
    if (wait > 0) await delay(Math.min(wait, 2) * 1000);
  } while (performance.now() - started < minMs);
  return answers;
}

/** What A does in a phase: `operations` together, the import dry run in three parallel loops. */
export async function noisyActivity(tenant: NoisyTenant, operations: readonly OperationName[], minMs: number): Promise<ManagementAnswer[]> {
  const loops = operations.flatMap((op) => (op === 'import dry run' ? Array.from({ length: IMPORT_LOOPS }, () => op) : [op]));
  return (await Promise.all(loops.map((op) => repeatFor(tenant, op, minMs)))).flat();
}

/**
 * B's load through one phase: during `activity` and TAIL_MS after it, or
 * for `idleMs` when there is none.
 */
export async function measurePhase(
  service: IsolationService, activity: (() => Promise<ManagementAnswer[]>) | { idleMs: number },
): Promise<{ durationS: number; quiet: QuietFigures; answers: ManagementAnswer[]; mainThreadCpuMs: number }> {
  const stop = new AbortController();
  const started = performance.now();
  const mainThreadCpu = (): number => service.service.mainThreadCpuMs?.() ?? Number.NaN;
  const cpuAtStart = mainThreadCpu();
  const load = runFixedRate({
    ...service.quiet, rate: QUIET_RATE, durationS: 600, connections: QUIET_CONNECTIONS, timeoutS: CALL_TIMEOUT_MS / 1000,
    stop: stop.signal, tally: { header: HEADER_LIMIT },
  });
  // Settled below; a rejection before then must not count as unhandled.
  load.catch(() => {});
  let answers: ManagementAnswer[] = [];
  try {
    if (typeof activity === 'function') {
      answers = await activity();
      await delay(TAIL_MS);
    } else {
      await delay(activity.idleMs);
    }
  } finally {
    stop.abort();
  }
  const durationS = (performance.now() - started) / 1000;
  const mainThreadCpuMs = mainThreadCpu() - cpuAtStart;
  try {
    const figures = await load;
    return {
      durationS,
      answers,
      mainThreadCpuMs,
      quiet: {
        requests: figures.requests, p50Ms: figures.latencyMs.p50, p90Ms: figures.latencyMs.p90, p99Ms: figures.latencyMs.p99,
        maxMs: figures.latencyMs.max, statuses: figures.statuses ?? {}, uncounted: figures.okWithoutHeader ?? 0,
        dispatchLagMaxMs: figures.dispatchLagMs.max,
      },
    };
  } catch (error) {
    const nan = Number.NaN;
    return {
      durationS,
      answers,
      mainThreadCpuMs,
      quiet: {
        requests: 0, p50Ms: nan, p90Ms: nan, p99Ms: nan, maxMs: nan, statuses: {}, uncounted: 0, dispatchLagMaxMs: nan,
        error: (error as Error).message.slice(0, 300),
      },
    };
  }
}

interface PhasePlan {
  name: string;
  operations: readonly OperationName[];
}

/** The phases after the idle one, for WORKERS=1 and for WORKERS=2; `only` keeps one of them. */
function phasePlans(workers: number, only: IsolationBenchOptions['only']): PhasePlan[] {
  const together: PhasePlan = { name: 'all of them at once', operations: OPERATIONS };
  if (workers > 1) return only === undefined || only === 'all' ? [together] : [];
  if (only === 'all') return [together];
  const single = OPERATIONS.filter((op) => only === undefined || op === only)
    .map((op) => ({ name: op === 'import dry run' ? `${IMPORT_LOOPS} loops of ${OPERATION_LABELS[op]}` : OPERATION_LABELS[op], operations: [op] }));
  return only === undefined ? [...single, together] : single;
}

/** `--only=<operation>` or `--only=all` from the command line; undefined without it; throws naming the choices for anything else. */
function onlyFromArgs(args: readonly string[]): IsolationBenchOptions['only'] {
  const arg = args.find((candidate) => candidate.startsWith('--only='));
  if (arg === undefined) return undefined;
  const value = arg.slice('--only='.length);
  if (value === 'all' || (OPERATIONS as readonly string[]).includes(value)) return value as OperationName | 'all';
  throw new Error(`--only takes one of: ${[...OPERATIONS, 'all'].map((name) => JSON.stringify(name)).join(', ')}`);
}

/** One service start: the idle phase, then each planned phase. */
async function runPhases(
  service: IsolationService, tenant: NoisyTenant, workers: number, timing: { idleMs: number; minMs: number; printSpans: boolean }, log: (line: string) => void,
  only: IsolationBenchOptions['only'],
): Promise<IsolationRun> {
  await measurePhase(service, { idleMs: SETTLE_MS });
  const idle = await measurePhase(service, { idleMs: timing.idleMs });
  const idleP99Ms = idle.quiet.p99Ms;
  const phases: PhaseResult[] = [];
  const record = (name: string, measured: Awaited<ReturnType<typeof measurePhase>>): void => {
    const noisy = summariseAnswers(measured.answers);
    const phase: PhaseResult = {
      name, workers, durationS: measured.durationS, quiet: measured.quiet, noisy, verdict: judgePhase({ quiet: measured.quiet, noisy }, idleP99Ms),
      mainThreadCpuMs: workers > 1 ? Number.NaN : measured.mainThreadCpuMs,
    };
    phases.push(phase);
    log(phaseLine(phase));
  };
  record('B idle', idle);
  for (const plan of phasePlans(workers, only)) {
    const from = monotonicUs();
    record(plan.name, await measurePhase(service, () => noisyActivity(tenant, plan.operations, timing.minMs)));
    if (timing.printSpans) log(`  (span on the monotonic clock: --phase=${from}-${monotonicUs()})`);
  }
  return { workers, idleP99Ms, phases };
}

/** Now on the clock V8's profiler stamps samples with, in µs. */
const monotonicUs = (): bigint => process.hrtime.bigint() / 1000n;

function phaseLine(p: PhaseResult): string {
  const q = p.quiet;
  const head = `${phaseName(p)} (${fixed(p.durationS, 1)} s): B p50 ${fixed(q.p50Ms, 1)} p99 ${fixed(q.p99Ms, 1)}`
    + ` max ${fixed(q.maxMs, 1)} ms (${fixed(p.verdict.p99Ratio, 1)}x idle p99), ${q.requests} answers ${statusText(q.statuses)}`;
  const misses = p.verdict.misses.length === 0 ? 'met' : `MISSED: ${p.verdict.misses.join('; ')}`;
  const cpu = p.mainThreadCpuMs === undefined || Number.isNaN(p.mainThreadCpuMs) ? '' : `; service main thread on a core ${int(p.mainThreadCpuMs)} ms`;
  return `${head}${p.noisy.length === 0 ? '' : `; A: ${p.noisy.map(operationText).join('; ')}`}${cpu} -> ${misses}`;
}

function statusText(statuses: Record<string, number>): string {
  return Object.entries(statuses).map(([status, count]) => `${count}x${status === '0' ? 'none' : status}`).join(' ');
}

function operationText(op: OperationFigures): string {
  const bytes = op.maxBytes >= 1024 * 1024 ? `, up to ${fixed(op.maxBytes / 1024 / 1024, 0)} MB` : '';
  const codes = op.codes.length === 0 ? '' : ` (${op.codes.join(', ')})`;
  return `${op.operation} ${statusText(op.statuses)}${codes}, longest ${fixed(op.maxMs / 1000, 1)} s${bytes}`;
}

/**
 * The results as one table, a row per phase; `noisyColumn` adds A's calls
 * (long: the markdown summary has it, the terminal prints them per phase).
 *
 * @example
 * console.log(textTable(isolationTable(result)));
 */
export function isolationTable(r: IsolationBenchResult, { noisyColumn = false }: { noisyColumn?: boolean } = {}): Table {
  return {
    header: ['phase', 'B answers', 'p50 ms', 'p99 ms', 'max ms', 'p99 / idle', 'B statuses', 'uncounted', ...(noisyColumn ? ['A\'s calls'] : []), 'verdict'],
    rows: r.runs.flatMap((run) => run.phases.map((p) => [
      phaseName(p), int(p.quiet.requests), fixed(p.quiet.p50Ms, 1), fixed(p.quiet.p99Ms, 1),
      fixed(p.quiet.maxMs, 1), fixed(p.verdict.p99Ratio, 1), statusText(p.quiet.statuses) || (p.quiet.error ?? ''), String(p.quiet.uncounted),
      ...(noisyColumn ? [p.noisy.map(operationText).join('; ')] : []), verdict(p.verdict.met),
    ])),
  };
}

/** A phase as the tables name it. */
export function phaseName(p: PhaseResult): string {
  return `${p.name}${p.workers > 1 ? ` (WORKERS=${p.workers})` : ''}`;
}

/** What the run was, in a sentence (the results files and the README's table). */
export function isolationSetting(r: IsolationBenchResult): string {
  const s = r.sizes;
  return `${r.database}${r.redis ? ' and Redis' : ''}; B ${r.rate} validations/s; A: explain over ${s.storedTests} stored tests of a`
    + ` ${int(s.largeRules)}-rule context, ${s.quadraticTests} tests of a rule quadratic in ${int(s.quadraticItems)} items, an impact report over`
    + ` ${s.impactSamples} samples of ${int(r.sampledItems)} items, ${IMPORT_LOOPS} loops of a ${int(s.largeRules)}-rule import dry run, a ${int(s.largeRules)}-rule publish`
    + `${r.quick ? '; --quick (short phases)' : ''}`;
}

/**
 * Runs every phase and judges it.
 *
 * @example
 * const result = await runIsolationBench({ quick: true });
 * if (!result.met) process.exitCode = 1;
 */
export async function runIsolationBench(options: IsolationBenchOptions = {}): Promise<IsolationBenchResult> {
  const log = options.print === false ? () => {} : (line: string) => console.log(line);
  const quick = options.quick === true;
  const sizes = options.sizes ?? FULL_SIZES;
  const timing = { ...(quick ? { idleMs: 5000, minMs: 3000 } : { idleMs: 10_000, minMs: 8000 }), printSpans: options.profileDir !== undefined };
  const extraNodeFlags = options.extraNodeFlags ?? [];
  const nodeFlags = [...(options.profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`]), ...extraNodeFlags];
  const serverUrl = options.databaseUrl ?? process.env.DATABASE_URL;
  const db = await benchDatabase('bench-isolation', serverUrl);
  const redisUrl = options.redisUrl ?? process.env.REDIS_URL;
  const keys = newTenantKeys();
  const runs: IsolationRun[] = [];
  let workers2Skipped: string | null = null;
  const started = performance.now();
  let tenant: NoisyTenant | undefined;
  try {
    const first = await startIsolationService({ keys, databaseUrl: db.databaseUrl, redisUrl, publishQuiet: true, nodeFlags });
    try {
      log(`\nIsolation benchmark: setting up tenant A on ${db.databaseUrl === undefined ? 'PGlite' : 'PostgreSQL'}`);
      tenant = await setUpNoisyTenant(first.noisy, sizes, noisyValidation(first.service), log);
      runs.push(await runPhases(first, tenant, 1, timing, log, options.only));
    } finally {
      await first.stop();
    }
    if (tenant === undefined) throw new Error('tenant A was not set up');
    if (options.only !== undefined && options.only !== 'all') {
      workers2Skipped = `--only=${options.only} (the WORKERS=2 run is all of them at once)`;
      log(`WORKERS=2: skipped: ${workers2Skipped}`);
    } else if (db.databaseUrl === undefined) {
      workers2Skipped = 'WORKERS=2 needs PostgreSQL (DATABASE_URL not set)';
      log(`WORKERS=2: skipped: ${workers2Skipped}`);
    } else {
      const second = await startIsolationService({ keys, databaseUrl: db.databaseUrl, redisUrl, workers: 2, publishQuiet: false, nodeFlags: extraNodeFlags });
      try {
        runs.push(await runPhases(second, { ...tenant, target: second.noisy }, 2, timing, log, options.only));
      } finally {
        await second.stop();
      }
    }
  } finally {
    await db.drop();
  }
  const result: IsolationBenchResult = {
    database: db.databaseUrl === undefined ? 'PGlite' : 'PostgreSQL', redis: redisUrl !== undefined && redisUrl !== '', quick, rate: QUIET_RATE,
    sizes, sampledItems: tenant?.sampledItems ?? 0, targets: isolationTargets, runs, workers2Skipped, loadAverage: os.loadavg(),
    met: runs.every((run) => run.phases.every((p) => p.verdict.met)),
  };
  log(`\nIsolation (${isolationSetting(result)}); ${fixed((performance.now() - started) / 1000, 0)} s;`
    + ` load average ${result.loadAverage.map((l) => fixed(l, 1)).join(' ')}`);
  log(textTable(isolationTable(result)));
  log(`Targets: B's p99 <= ${isolationTargets.maxP99ToIdle}x its idle p99 and its worst < ${isolationTargets.maxWorstMs} ms in every phase,`
    + ` no 5xx and no uncounted answer for either tenant, A's calls answered within ${isolationTargets.maxAnswerMs / 1000} s: ${verdict(result.met)}`);
  return result;
}

const invokedDirectly = process.argv[1] !== undefined
  && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (invokedDirectly) {
  const profileDir = process.argv.includes('--cpu-prof') ? path.join(os.tmpdir(), 'rules-bench-isolation-profiles') : undefined;
  const extraNodeFlags = process.argv.filter((arg) => arg.startsWith('--node-flag=')).map((arg) => arg.slice('--node-flag='.length));
  const result = await runIsolationBench({ quick: process.argv.includes('--quick'), only: onlyFromArgs(process.argv.slice(2)), profileDir, extraNodeFlags });
  if (profileDir !== undefined) console.log(`CPU profiles in ${profileDir} (main thread: CPU.*.0.*.cpuprofile)`);
  // Idle keep-alive sockets of the HTTP client would hold the process a few more seconds.
  process.exit(result.met ? 0 : 1);
}
