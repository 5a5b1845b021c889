/**
 * HTTP benchmark of the validation hot path (`npm run bench:http`).
 *
 * Child processes: the real service (its bundle, as `npm start` runs it;
 * PGlite in a temp folder, the loan rules created and published through
 * the HTTP API), three times in a full run, and a bare Fastify route that
 * parses the same body and answers a fixed JSON (`bare-server.ts`). The
 * load runs in this process
 * (autocannon for throughput, `fixed-rate-load.ts` for latency), against
 * one server at a time, alternating (service, bare, bare, service, ...),
 * with the same connections and body. Every figure is a ratio against the
 * bare route measured in the same run, or against the engine's in-process
 * time:
 *
 * 1. Single validation, passing payload: throughput of each in short
 *    alternating rounds; the ratio is the median of the per-round ratios,
 *    so a noisy second on a shared machine moves one round, not the figure.
 *    The rounds rotate over the service processes: processes of one build
 *    settle at different speeds (SERVICE_PROCESSES).
 * 2. Latency at half of the first service process's throughput, for it, the
 *    bare route, and the bare route made to spin for the service's extra
 *    CPU per request at that rate (measured in a run of each before, unpinned
 *    as the latency runs are: at a partial load each request costs both
 *    servers more than in step 1, the service more): open-loop load at a steady rate
 *    (`fixed-rate-load.ts`), latency from the moment each request was
 *    offered, so a stalled server is charged for every request that waited
 *    behind it. The CPU-matched route tells the service's own tail from the
 *    tail any server of its cost has when this machine stalls it. A fourth
 *    server, Node's own HTTP server answering without parsing
 *    (`floor-server.ts`), shows the machine's floor: the tail of a server
 *    that does next to nothing per request.
 * 3. The failing payload (15 full failure records in the answer, with 2026 dates).
 * 4. Batches of 100 and 1000 items (one in ten failing) and a transaction
 *    over 5 contexts: requests and items per second, against the bare route
 *    given the same body.
 * 5. Server time of a 1000-item batch (Server-Timing and executionTimeMs),
 *    one request at a time, against 1000 in-process calls of the compiled
 *    validator on the same payloads.
 *
 * Before any load, one request of each kind is checked against the compiled
 * validator in this process: figures for wrong answers would mean nothing.
 * `--quick` runs step 1 only (for `bench:guard`); `--cpu-prof` writes the
 * service's CPU profile to `<tmpdir>/rules-bench-profiles/` and summarises it.
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ValidationResult } from '../../compiler/types.ts';
import { compileOrThrow } from '../engines/compiled.ts';
import { loanApplicationSuite as suite } from '../suites/loan-application.ts';
import { startChildServer, type ChildServer } from '../tools/child-server.ts';
import { pooledLatency, runFixedRate, type FixedRateFigures } from '../tools/fixed-rate-load.ts';
import { runLoad, type LoadFigures } from '../tools/load.ts';
import { summarizeProfiles } from '../tools/profile-summary.ts';
import { fixed, int, median, percentile, textTable, verdict } from '../tools/report-table.ts';
import { cpuPinning } from '../tools/cpu-pinning.ts';
import { memoryMonitor } from '../tools/memory-monitor.ts';
import { publishContext } from '../tools/rules-api.ts';
import { startService, type ServiceProcess } from '../tools/service-process.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Targets printed beside the figures (the issue's acceptance numbers). */
export const httpTargets = {
  /** Service throughput at least this share of the bare route's. */
  minThroughputRatio: 0.8,
  /** p99 latency at half of the service's maximum throughput. */
  maxP99AtHalfRateMs: 5,
  /** Median server time of a 1000-item batch. */
  maxBatch1000ServerMs: 20,
} as const;

export interface HttpBenchOptions {
  /** Single-validation ratio only, short rounds (`bench:guard` measures its own, with a longer warm-up). */
  quick?: boolean;
  /** Print tables to stdout; default true. */
  print?: boolean;
  /** Write the service's CPU profile (node --cpu-prof) to this folder and print a summary. */
  profileDir?: string;
  /** autocannon connections for single and transaction loads; default 10. */
  connections?: number;
}

/** One alternating round: the service and the bare route, same body and connections. */
export interface PairedRound {
  /** Which of the pair's service processes ran this round (index into `HttpPair.services`). */
  serviceProcess: number;
  serviceRps: number;
  bareRps: number;
  ratio: number;
  /** CPU time of the server process per answered request (µs), from /proc. */
  serviceCpuUs: number;
  bareCpuUs: number;
}

export interface PairedThroughput {
  rounds: PairedRound[];
  durationS: number;
  connections: number;
  /** Medians over the rounds. */
  serviceRps: number;
  bareRps: number;
  /** Median of the per-round service/bare ratios. */
  ratio: number;
  serviceP99Ms: number;
  bareP99Ms: number;
  /**
   * Medians of CPU µs per request. Less sensitive than throughput to other
   * work on the machine (it counts only the server's own CPU time), so it
   * shows what each request costs even when the rounds are noisy.
   */
  serviceCpuUs: number;
  bareCpuUs: number;
  cpuRatio: number;
  /**
   * Each service process's own medians (rounds rotate over the processes):
   * a process's figure stays where it started, so these show how far
   * processes of the same build differ (bench/README.md, "One process is
   * one draw").
   */
  byProcess: { process: number; rounds: number; serviceRps: number; ratio: number; serviceCpuUs: number }[];
}

export interface LatencyAtRate {
  /** Requests per second, half of the median throughput of the service process measured here (the first). */
  rate: number;
  /** Seconds per run; each server ran `serviceP99Ms.length` times, alternating. */
  durationS: number;
  /** The run with the median p99, of each server. */
  service: FixedRateFigures;
  bare: FixedRateFigures;
  /** The bare route spinning `matchedBusyUs` per request: a server of the service's CPU cost that does nothing else. */
  matched: FixedRateFigures;
  /** Node's HTTP server answering a fixed JSON without parsing the body (floor-server.ts): the tail this machine gives any server. */
  floor: FixedRateFigures;
  /** The service's CPU per request less the bare route's, in a run of each at this rate before the measured ones. */
  matchedBusyUs: number;
  /** Each server's own CPU per request in its latency runs (median of the runs): how well the spin matched. */
  cpuUs: { service: number; bare: number; matched: number; floor: number };
  /** p99 of every run, in order. */
  serviceP99Ms: number[];
  bareP99Ms: number[];
  matchedP99Ms: number[];
  floorP99Ms: number[];
  /**
   * p99 over every request of each server's runs together. Reported, not
   * judged: one long stall of this VM in one run lifts it for every server
   * that meets one (bench/README.md, "Latency at half throughput").
   */
  pooledP99Ms: { service: number; bare: number; matched: number; floor: number };
  target: number;
  /** Judged on the median run's p99. */
  met: boolean;
}

/**
 * Alternating fixed-rate runs per server, judged on the median run: this
 * VM stalls a process for several ms now and then, even an idle one, and
 * one run's p99 moves with the stalls it happens to meet.
 */
const LATENCY_RUNS = 5;
/** Seconds of each fixed-rate run, and of the unmeasured one before them. */
const LATENCY_RUN_S = 6;
const LATENCY_WARMUP_S = 2;
/** Seconds of the run of the service and of the bare route that measures their CPU per request at the rate, for the spin. */
const LATENCY_CALIBRATION_S = 3;

export interface BatchFigure {
  name: string;
  /** Items per request (contexts for a transaction). */
  items: number;
  bodyBytes: number;
  throughput: PairedThroughput;
  /** service requests/s × items. */
  itemsPerSec: number;
}

export interface BatchServerTime {
  items: number;
  requests: number;
  /** Server-Timing `total;dur`, ms. */
  serverTimingMedianMs: number;
  serverTimingP90Ms: number;
  executionTimeMsMedian: number;
  /** 1000 in-process calls of the compiled validator on the same payloads, median of rounds, ms. */
  engineMs: number;
  /** Server time over engine time: what parsing, checking and serializing add. */
  vsEngine: number;
  /** Round trip seen by the client, ms. */
  roundTripMedianMs: number;
  target: number;
  met: boolean;
}

export interface HttpBenchResult {
  quick: boolean;
  generatedAt: string;
  environment: {
    node: string; platform: string; arch: string; cpu: string; cores: number; loadAverage: number; pinning?: string;
    /** The kernel's memory-access sampling, when on (memory-monitor.ts): it shows in both servers' p99. */
    memoryMonitor?: string;
  };
  suite: string;
  ruleCount: number;
  /** Bytes of the single-validation request body. */
  singleBodyBytes: number;
  single: PairedThroughput & { target: number; met: boolean };
  latency: LatencyAtRate | null;
  failing: PairedThroughput | null;
  batches: BatchFigure[];
  batchServerTime: BatchServerTime | null;
  /** Top self-time functions of the service under load (with profileDir). */
  profile: { file: string; top: { fn: string; where: string; selfPct: number }[] }[] | null;
}

export const SINGLE_PATH = '/api/v1/validation/validate';
const BATCH_PATH = '/api/v1/validation/validate-batch';
const TRANSACTION_PATH = '/api/v1/validation/validate-transaction';
/**
 * Service processes in a full run. Processes of the same build settle at
 * clearly different throughputs and keep them (bench/README.md, "One
 * process is one draw"), so a ratio from one process is one draw; the single
 * validation's 6 rounds give each of 3 processes two.
 */
const SERVICE_PROCESSES = 3;
/** The transaction contexts: the loan rules published under five names. */
const TRANSACTION_CONTEXTS = [suite.context, ...[2, 3, 4, 5].map((n) => `${suite.context}-${n}`)];

/** The service and the bare route, both running, and the request bodies they are measured with. */
export interface HttpPair {
  /** The first service process: the one the latency and batch steps measure. */
  service: ServiceProcess;
  /** Every service process, same build and rules; throughput rounds rotate over them. */
  services: ServiceProcess[];
  bare: ChildServer;
  /** Where the servers and the load generator run (cpu-pinning.ts). */
  pinning: string;
  /** Servers and load generator on cores of their own (the state after start). */
  pin(): void;
  /** Everyone on every core (latency). */
  unpin(): void;
  stop(): Promise<void>;
}

/**
 * Starts `serviceProcesses` service processes (default 1; each with its own
 * database, tenant and key, the loan context published under `contexts`)
 * and the bare route, all as child processes. `nodeFlags` are the service
 * processes' own (a profiler), `bareNodeFlags` the bare route's.
 */
export async function startHttpPair(
  options: { contexts?: readonly string[]; nodeFlags?: string[]; bareNodeFlags?: string[]; serviceProcesses?: number } = {},
): Promise<HttpPair> {
  const serviceCount = options.serviceProcesses ?? 1;
  const started = await Promise.allSettled([
    startChildServer({ name: 'bare route', entry: path.join(here, '../tools/bare-server.ts'), env: {}, nodeFlags: options.bareNodeFlags }),
    ...Array.from({ length: serviceCount }, () => startService({ nodeFlags: options.nodeFlags })),
  ]);
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(started.map((s) => (s.status === 'fulfilled' ? s.value.stop() : Promise.resolve())));
    throw failed.reason;
  }
  const [bare, ...services] = started.map((s) => (s as PromiseFulfilledResult<ChildServer>).value) as [ChildServer, ...ServiceProcess[]];
  const pinning = cpuPinning();
  const pids = [...services.map((s) => s.pid), bare.pid];
  const pair: HttpPair = {
    service: services[0],
    services,
    bare,
    pinning: pinning.description,
    pin: () => pinning.pin(pids),
    unpin: () => pinning.unpin(pids),
    async stop() {
      pinning.unpin([]);
      await Promise.all([...services, bare].map((server) => server.stop()));
    },
  };
  try {
    for (const service of services) {
      for (const context of options.contexts ?? [suite.context]) await publishContext(service, context, suite.rules);
    }
    pair.pin();
  } catch (error) {
    await pair.stop();
    throw error;
  }
  return pair;
}

/** The request body of a single validation of the suite's passing or failing payload. */
export function singleBody(payload: 'passing' | 'failing' = 'passing'): string {
  return JSON.stringify({ context: suite.context, payload: suite.payloads[payload] });
}

function batchItems(count: number): { id: string; payload: unknown }[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `item-${i}`,
    payload: i % 10 === 9 ? suite.payloads.failing : suite.payloads.passing,
  }));
}

/**
 * Throughput of the service and the bare route on the same body, in
 * alternating rounds (ABBA), after one short warm-up of each server.
 * Round r measures service process r mod n.
 */
export async function pairedThroughput(
  pair: HttpPair, requestPath: string, body: string,
  options: { rounds: number; durationS: number; connections: number; warmupS: number },
): Promise<PairedThroughput> {
  const load = async (server: ChildServer, durationS: number, headers: Record<string, string>): Promise<LoadFigures & { cpuUs: number }> => {
    const cpuBefore = server.cpuTimeMs();
    const figures = await runLoad({ url: server.baseUrl + requestPath, headers, body, connections: options.connections, durationS });
    return { ...figures, cpuUs: ((server.cpuTimeMs() - cpuBefore) * 1000) / figures.requests };
  };
  // The bare route ignores the key; each service process knows only its own.
  if (options.warmupS > 0) {
    for (const service of pair.services) await load(service, options.warmupS, service.headers);
    await load(pair.bare, options.warmupS, pair.service.headers);
  }
  const rounds: PairedRound[] = [];
  const p99s = { service: [] as number[], bare: [] as number[] };
  for (let round = 0; round < options.rounds; round++) {
    const serviceProcess = round % pair.services.length;
    const serviceServer = pair.services[serviceProcess];
    const headers = serviceServer.headers;
    const serviceFirst = round % 2 === 0;
    const first = await load(serviceFirst ? serviceServer : pair.bare, options.durationS, headers);
    const second = await load(serviceFirst ? pair.bare : serviceServer, options.durationS, headers);
    const [service, bare] = serviceFirst ? [first, second] : [second, first];
    rounds.push({
      serviceProcess,
      serviceRps: service.requestsPerSec, bareRps: bare.requestsPerSec, ratio: service.requestsPerSec / bare.requestsPerSec,
      serviceCpuUs: service.cpuUs, bareCpuUs: bare.cpuUs,
    });
    p99s.service.push(service.latencyP99Ms);
    p99s.bare.push(bare.latencyP99Ms);
  }
  return {
    rounds, durationS: options.durationS, connections: options.connections,
    serviceRps: median(rounds.map((r) => r.serviceRps)),
    bareRps: median(rounds.map((r) => r.bareRps)),
    ratio: median(rounds.map((r) => r.ratio)),
    serviceP99Ms: median(p99s.service),
    bareP99Ms: median(p99s.bare),
    serviceCpuUs: median(rounds.map((r) => r.serviceCpuUs)),
    bareCpuUs: median(rounds.map((r) => r.bareCpuUs)),
    cpuRatio: median(rounds.map((r) => r.serviceCpuUs / r.bareCpuUs)),
    byProcess: pair.services.flatMap((_, index) => {
      const own = rounds.filter((r) => r.serviceProcess === index);
      // Fewer rounds than processes (the two-round steps) leave some processes out.
      if (own.length === 0) return [];
      return [{
        process: index,
        rounds: own.length,
        serviceRps: median(own.map((r) => r.serviceRps)),
        ratio: median(own.map((r) => r.ratio)),
        serviceCpuUs: median(own.map((r) => r.serviceCpuUs)),
      }];
    }),
  };
}

/** Failure keys `CODE:fieldPath` in order, for comparing an HTTP answer with the in-process result. */
function failureKeys(result: Pick<ValidationResult, 'failures'>): string {
  return result.failures.map((f) => `${f.ruleCode}:${'fieldPath' in f ? f.fieldPath : ''}`).join(' ');
}

async function post(server: ChildServer, requestPath: string, headers: Record<string, string>, body: string): Promise<{
  status: number; json: any; serverTimingMs: number; roundTripMs: number;
}> {
  const start = performance.now();
  const response = await fetch(server.baseUrl + requestPath, { method: 'POST', headers, body, signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  const roundTripMs = performance.now() - start;
  const timing = /dur=([0-9.]+)/.exec(response.headers.get('server-timing') ?? '');
  return { status: response.status, json: text === '' ? undefined : JSON.parse(text), serverTimingMs: timing === null ? Number.NaN : Number(timing[1]), roundTripMs };
}

/**
 * One request of each kind the benchmark sends, checked against the
 * compiled validator in this process (same rules, same payloads).
 */
export async function checkAnswers(pair: HttpPair, kinds: { batch: boolean; transaction: boolean }): Promise<void> {
  const { validate } = compileOrThrow(suite.rules);
  const expect = (what: string, ok: boolean, got: unknown): void => {
    if (!ok) throw new Error(`the service answered ${what} wrongly; no figures for wrong answers:\n${JSON.stringify(got).slice(0, 2000)}`);
  };
  // Every process is measured, so every process is checked: each has its own database and published rules.
  for (const [index, service] of pair.services.entries()) {
    const which = pair.services.length > 1 ? ` (service process #${index})` : '';
    for (const name of ['passing', 'failing'] as const) {
      const local = validate(suite.payloads[name], Date.now());
      const { status, json } = await post(service, SINGLE_PATH, service.headers, singleBody(name));
      expect(`the ${name} single validation${which}`, status === 200 && json.isValid === local.isValid
        && json.totalRulesEvaluated === local.totalRulesEvaluated && failureKeys(json) === failureKeys(local)
        && Number.isInteger(json.executionTimeMs), json);
    }
    if (kinds.batch) {
      const items = batchItems(100);
      const { status, json } = await post(service, BATCH_PATH, service.headers, JSON.stringify({ context: suite.context, items }));
      expect(`a batch${which}`, status === 200 && json.totalProcessed === 100 && json.totalFailed === 10
        && json.results[9].failures.length === validate(suite.payloads.failing, Date.now()).failures.length
        && Object.keys(json.results[9].failures[0]).join() === 'ruleCode,message', json);
    }
    if (kinds.transaction) {
      const body = JSON.stringify({ transactionId: 'tx-1', contexts: TRANSACTION_CONTEXTS, payload: suite.payloads.passing });
      const { status, json } = await post(service, TRANSACTION_PATH, service.headers, body);
      expect(`a transaction${which}`, status === 200 && json.overallResult === 'Approved'
        && json.contextResults.length === TRANSACTION_CONTEXTS.length, json);
    }
  }
  const bare = await post(pair.bare, SINGLE_PATH, pair.service.headers, singleBody());
  expect('the bare route', bare.status === 200 && bare.json.isValid === true, bare.json);
}

async function measureBatchServerTime(pair: HttpPair, items: number, requests: number): Promise<BatchServerTime> {
  const batch = batchItems(items);
  const body = JSON.stringify({ context: suite.context, items: batch });
  for (let i = 0; i < 3; i++) await post(pair.service, BATCH_PATH, pair.service.headers, body);
  const timings: number[] = [];
  const executions: number[] = [];
  const roundTrips: number[] = [];
  for (let i = 0; i < requests; i++) {
    const answer = await post(pair.service, BATCH_PATH, pair.service.headers, body);
    if (answer.status !== 200 || answer.json.totalProcessed !== items) throw new Error(`batch answered ${answer.status}`);
    timings.push(answer.serverTimingMs);
    executions.push(answer.json.executionTimeMs);
    roundTrips.push(answer.roundTripMs);
  }
  // The engine floor: the same payloads, parsed from the same JSON, validated in this process.
  const { validate } = compileOrThrow(suite.rules);
  const payloads = (JSON.parse(body) as { items: { payload: unknown }[] }).items.map((item) => item.payload);
  const rounds: number[] = [];
  for (let round = 0; round < 25; round++) {
    const now = Date.now();
    const start = performance.now();
    for (const payload of payloads) validate(payload, now);
    rounds.push(performance.now() - start);
  }
  const engineMs = median(rounds.slice(5));
  const serverTimingMedianMs = median(timings);
  return {
    items, requests, serverTimingMedianMs, serverTimingP90Ms: percentile(timings, 90),
    executionTimeMsMedian: median(executions), engineMs, vsEngine: serverTimingMedianMs / engineMs,
    roundTripMedianMs: median(roundTrips),
    target: httpTargets.maxBatch1000ServerMs, met: serverTimingMedianMs < httpTargets.maxBatch1000ServerMs,
  };
}

function environment(): HttpBenchResult['environment'] {
  return {
    node: process.version, platform: process.platform, arch: process.arch,
    cpu: os.cpus()[0]?.model ?? 'unknown', cores: os.cpus().length, loadAverage: os.loadavg()[0],
    memoryMonitor: memoryMonitor(),
  };
}

/**
 * Runs the HTTP benchmark and returns its figures.
 *
 * @example
 * const { single } = await runHttpBench({ quick: true });
 * if (single.ratio < 0.6) process.exitCode = 1;
 */
export async function runHttpBench(options: HttpBenchOptions = {}): Promise<HttpBenchResult> {
  const quick = options.quick === true;
  const connections = options.connections ?? 10;
  const nodeFlags = options.profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`];
  const profileStart = Date.now();
  const pair = await startHttpPair({
    contexts: quick ? [suite.context] : TRANSACTION_CONTEXTS, nodeFlags, serviceProcesses: quick ? 1 : SERVICE_PROCESSES,
  });
  let result: HttpBenchResult;
  try {
    await checkAnswers(pair, { batch: !quick, transaction: !quick });
    const body = singleBody();
    const single = await pairedThroughput(pair, SINGLE_PATH, body, quick
      ? { rounds: 8, durationS: 1.5, connections, warmupS: 1 }
      : { rounds: 6, durationS: 4, connections, warmupS: 2 });
    result = {
      quick, generatedAt: new Date().toISOString(), environment: { ...environment(), pinning: pair.pinning }, suite: suite.name,
      ruleCount: suite.rules.length, singleBodyBytes: Buffer.byteLength(body),
      single: { ...single, target: httpTargets.minThroughputRatio, met: single.ratio >= httpTargets.minThroughputRatio },
      latency: null, failing: null, batches: [], batchServerTime: null, profile: null,
    };
    if (!quick) {
      // Half of what the measured process (the first) answered flat out: processes differ (SERVICE_PROCESSES).
      const rate = single.byProcess[0].serviceRps / 2;
      const at = (server: ChildServer, durationS: number): Promise<FixedRateFigures> => runFixedRate({
        url: server.baseUrl + SINGLE_PATH, headers: pair.service.headers, body, connections, durationS, rate,
      });
      // Unpinned: see cpu-pinning.ts. A first, unmeasured run each lets the servers settle at the new rate and client.
      pair.unpin();
      const cpuPerRequest = async (server: ChildServer, durationS: number): Promise<{ figures: FixedRateFigures; cpuUs: number }> => {
        const cpuBefore = server.cpuTimeMs();
        const figures = await at(server, durationS);
        return { figures, cpuUs: ((server.cpuTimeMs() - cpuBefore) * 1000) / figures.requests };
      };
      // The spin is what the service costs beyond the bare route in these conditions, not in step 1's:
      // a server answering one request per wake-up pays more per request than one answering flat out.
      for (const server of [pair.service, pair.bare]) await at(server, LATENCY_WARMUP_S);
      const serviceCalibration = await cpuPerRequest(pair.service, LATENCY_CALIBRATION_S);
      const bareCalibration = await cpuPerRequest(pair.bare, LATENCY_CALIBRATION_S);
      const matchedBusyUs = Math.max(0, Math.round(serviceCalibration.cpuUs - bareCalibration.cpuUs));
      const [matched, floor] = await Promise.all([
        startChildServer({
          name: 'CPU-matched bare route', entry: path.join(here, '../tools/bare-server.ts'), env: { BARE_BUSY_US: String(matchedBusyUs) },
        }),
        startChildServer({ name: 'floor server', entry: path.join(here, '../tools/floor-server.ts'), env: {} }),
      ]);
      const servers = { service: pair.service, bare: pair.bare, matched, floor } as const;
      const names = ['service', 'bare', 'matched', 'floor'] as const;
      type Name = (typeof names)[number];
      const runs = Object.fromEntries(names.map((name) => [name, [] as FixedRateFigures[]])) as Record<Name, FixedRateFigures[]>;
      const cpu = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<Name, number[]>;
      try {
        for (const server of [matched, floor]) await at(server, LATENCY_WARMUP_S);
        for (let run = 0; run < LATENCY_RUNS; run++) {
          for (const name of run % 2 === 0 ? names : [...names].reverse()) {
            const { figures, cpuUs } = await cpuPerRequest(servers[name], LATENCY_RUN_S);
            cpu[name].push(cpuUs);
            runs[name].push(figures);
          }
        }
      } finally {
        await Promise.all([matched.stop(), floor.stop()]);
      }
      pair.pin();
      const medianRun = (figures: FixedRateFigures[]): FixedRateFigures =>
        [...figures].sort((a, b) => a.latencyMs.p99 - b.latencyMs.p99)[Math.floor(figures.length / 2)];
      const service = medianRun(runs.service);
      const p99s = (figures: FixedRateFigures[]): number[] => figures.map((f) => f.latencyMs.p99);
      result.latency = {
        rate, durationS: LATENCY_RUN_S, service, bare: medianRun(runs.bare), matched: medianRun(runs.matched),
        floor: medianRun(runs.floor), matchedBusyUs,
        cpuUs: { service: median(cpu.service), bare: median(cpu.bare), matched: median(cpu.matched), floor: median(cpu.floor) },
        serviceP99Ms: p99s(runs.service), bareP99Ms: p99s(runs.bare), matchedP99Ms: p99s(runs.matched), floorP99Ms: p99s(runs.floor),
        pooledP99Ms: {
          service: pooledLatency(runs.service).p99, bare: pooledLatency(runs.bare).p99,
          matched: pooledLatency(runs.matched).p99, floor: pooledLatency(runs.floor).p99,
        },
        target: httpTargets.maxP99AtHalfRateMs,
        met: service.latencyMs.p99 < httpTargets.maxP99AtHalfRateMs,
      };
      result.failing = await pairedThroughput(pair, SINGLE_PATH, singleBody('failing'), { rounds: 2, durationS: 3, connections, warmupS: 1 });
      for (const items of [100, 1000]) {
        const batchBody = JSON.stringify({ context: suite.context, items: batchItems(items) });
        const throughput = await pairedThroughput(pair, BATCH_PATH, batchBody, { rounds: 2, durationS: 4, connections: 4, warmupS: 1 });
        result.batches.push({ name: `batch of ${items}`, items, bodyBytes: Buffer.byteLength(batchBody), throughput, itemsPerSec: throughput.serviceRps * items });
      }
      const transactionBody = JSON.stringify({ transactionId: 'tx-1', contexts: TRANSACTION_CONTEXTS, payload: suite.payloads.passing });
      const transaction = await pairedThroughput(pair, TRANSACTION_PATH, transactionBody, { rounds: 2, durationS: 3, connections, warmupS: 1 });
      result.batches.push({
        name: `transaction of ${TRANSACTION_CONTEXTS.length} contexts`, items: TRANSACTION_CONTEXTS.length,
        bodyBytes: Buffer.byteLength(transactionBody), throughput: transaction,
        itemsPerSec: transaction.serviceRps * TRANSACTION_CONTEXTS.length,
      });
      result.batchServerTime = await measureBatchServerTime(pair, 1000, 30);
    }
  } finally {
    await pair.stop();
  }
  if (options.profileDir !== undefined) result.profile = await summarizeProfiles(options.profileDir, profileStart, 12);
  if (options.print !== false) printHttpResult(result);
  return result;
}

function throughputRow(name: string, t: PairedThroughput, items = 1): string[] {
  return [
    name, int(t.serviceRps), int(t.serviceRps * items), int(t.bareRps), fixed(t.ratio, 2),
    t.rounds.map((r) => fixed(r.ratio, 2)).join(' '), int(t.serviceCpuUs), int(t.bareCpuUs), fixed(t.cpuRatio, 2),
    String(t.connections),
  ];
}

/** The HTTP figures as tables (shared with the summary writer). */
export function httpTables(r: HttpBenchResult): { throughput: { header: string[]; rows: string[][] }; notes: string[] } {
  const rows = [throughputRow('single, passing payload', r.single)];
  if (r.failing !== null) rows.push(throughputRow('single, failing payload', r.failing));
  for (const b of r.batches) rows.push(throughputRow(b.name, b.throughput, b.items));
  const notes = [
    `single validation: service / bare route = ${fixed(r.single.ratio, 2)} (median of ${r.single.rounds.length} alternating`
      + ` ${r.single.durationS} s rounds; target >= ${r.single.target}: ${verdict(r.single.met)})`,
  ];
  if (r.single.byProcess.length > 1) {
    notes.push(`single validation by service process (rounds rotate over ${r.single.byProcess.length}): `
      + r.single.byProcess.map((p) => `#${p.process} ${fixed(p.ratio, 2)} (${int(p.serviceRps)} req/s, ${int(p.serviceCpuUs)} us/req)`).join(', '));
  }
  if (r.latency !== null) {
    const l = r.latency;
    const ms = (n: number): string => fixed(n, 1);
    const figures = (f: FixedRateFigures, p99s: number[]): string => `p50 ${ms(f.latencyMs.p50)} ms, p99 ${ms(f.latencyMs.p99)} ms`
      + ` (runs ${p99s.map(ms).join(' ')}), p99.9 ${ms(f.latencyMs.p999)} ms, max ${ms(f.latencyMs.max)} ms`;
    notes.push(`at ${int(l.rate)} req/s (half the throughput of service process #0), steady open-loop load, median of ${l.serviceP99Ms.length}`
      + ` alternating ${l.durationS} s runs: service ${figures(l.service, l.serviceP99Ms)}; bare route ${figures(l.bare, l.bareP99Ms)};`
      + ` bare route spinning ${l.matchedBusyUs} us a request (the service's CPU cost) ${figures(l.matched, l.matchedP99Ms)};`
      + ` the machine's floor (node:http, no parsing) ${figures(l.floor, l.floorP99Ms)};`
      + ` CPU per request in these runs ${int(l.cpuUs.service)} / ${int(l.cpuUs.bare)} / ${int(l.cpuUs.matched)} / ${int(l.cpuUs.floor)} us`
      + ` (target p99 < ${l.target} ms: ${verdict(l.met)}); p99 over all ${l.serviceP99Ms.length} runs' requests together`
      + ` ${ms(l.pooledP99Ms.service)} / ${ms(l.pooledP99Ms.bare)} / ${ms(l.pooledP99Ms.matched)} / ${ms(l.pooledP99Ms.floor)} ms (not judged);`
      + ` the load generator dispatched late by p99 ${ms(l.service.dispatchLagMs.p99)}`
      + ` / ${ms(l.bare.dispatchLagMs.p99)} / ${ms(l.matched.dispatchLagMs.p99)} / ${ms(l.floor.dispatchLagMs.p99)} ms in those runs`
      + ' (not counted in the latency)');
  }
  if (r.batchServerTime !== null) {
    const b = r.batchServerTime;
    notes.push(`${b.items}-item batch, ${b.requests} requests one at a time: Server-Timing median ${fixed(b.serverTimingMedianMs, 1)} ms,`
      + ` p90 ${fixed(b.serverTimingP90Ms, 1)} ms, executionTimeMs median ${b.executionTimeMsMedian}, round trip ${fixed(b.roundTripMedianMs, 1)} ms;`
      + ` the same ${b.items} validations in-process ${fixed(b.engineMs, 2)} ms (server / engine ${fixed(b.vsEngine, 1)}x)`
      + ` (target < ${b.target} ms: ${verdict(b.met)})`);
  }
  return {
    throughput: {
      header: ['request', 'service req/s', 'items/s', 'bare req/s', 'x bare', 'rounds', 'service cpu us/req', 'bare cpu us/req', 'cpu x bare', 'conns'],
      rows,
    },
    notes,
  };
}

function printHttpResult(r: HttpBenchResult): void {
  const env = r.environment;
  console.log(`\nHTTP benchmark: ${r.suite}, ${r.ruleCount} rules, ${r.singleBodyBytes}-byte body${r.quick ? ' (quick)' : ''}`);
  console.log(`${env.node} ${env.platform}/${env.arch}, ${env.cpu}, ${env.cores} cores, load ${fixed(env.loadAverage, 1)}`
    + `${env.pinning === undefined ? '' : `; ${env.pinning}`}${env.memoryMonitor === undefined ? '' : `; kernel: ${env.memoryMonitor}`}\n`);
  const { throughput, notes } = httpTables(r);
  console.log(textTable(throughput));
  for (const note of notes) console.log(note);
  for (const profile of r.profile ?? []) {
    console.log(`\nCPU profile ${profile.file}, top self time:`);
    console.log(textTable({
      header: ['function', 'where', 'self %'],
      rows: profile.top.map((t) => [t.fn, t.where, fixed(t.selfPct, 1)]),
    }));
  }
}

const invokedDirectly = process.argv[1] !== undefined
  && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (invokedDirectly) {
  // Profiles are tens of megabytes: written outside the repository.
  const profileDir = process.argv.includes('--cpu-prof') ? path.join(os.tmpdir(), 'rules-bench-profiles') : undefined;
  await runHttpBench({ quick: process.argv.includes('--quick'), profileDir });
}
