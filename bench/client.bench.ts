/**
 * Local evaluation with the typed client (clients/typescript), against the
 * real service in a child process (`npm run bench:client`):
 *
 * 1. Local against remote: the loan context's validator run in this process
 *    by `client.localValidator` (tinybench, one `validateSync` per sample)
 *    against the same validation over HTTP on the same machine (a
 *    closed-loop client: one request at a time on one keep-alive
 *    connection), same ruleset, same payloads: median and p99 of each and
 *    remote / local.
 * 2. Freshness: the service holds SUBSCRIBERS raw change-feed connections
 *    (plain HTTP readers of `…/validator/events`, each parsing the events)
 *    plus FULL_VALIDATORS complete local validators (which, on the event,
 *    download, verify and load the new module). After each publish: the
 *    time from sending the publish request to each subscriber's receiving
 *    the `published` event of the new version, and to each full validator's
 *    running it; p50 / p99 / max, target p99 under one second.
 * 3. What held feeds cost the service: its memory (process.memoryUsage()
 *    of the service process after a full GC, which a preload runs on
 *    SIGUSR2: the service exposes neither) with the feeds held minus
 *    before, over the number of feeds, and its CPU time (from /proc) while
 *    they idle over a window that includes a heartbeat, against the same
 *    window with none held.
 *
 * The subscribers live in this process, the service in its own; both share
 * the machine's cores. `-- --quick` is a short version (fewer subscribers,
 * fewer publishes, shorter windows).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { Bench } from 'tinybench';
import { createRulesClient, type LocalValidator } from '../clients/typescript/src/index.ts';
import { loanApplicationSuite as suite } from './suites/loan-application.ts';
import { fixed, int, median, percentile, textTable, verdict } from './tools/report-table.ts';
import { callApi, publishContext } from './tools/rules-api.ts';
import { startService, type ServiceProcess } from './tools/service-process.ts';

/** Target: p99 from a publish to every subscriber having the event. */
export const FRESHNESS_TARGET_MS = 1000;

const PAYLOADS = ['passing', 'failing'] as const;
type PayloadName = (typeof PAYLOADS)[number];

export interface LatencyFigures {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  samples: number;
}

export interface ClientBenchResult {
  generatedAt: string;
  quick: boolean;
  ruleCount: number;
  /** Local against remote, per payload. */
  localVsRemote: {
    payload: PayloadName;
    local: LatencyFigures;
    remote: LatencyFigures;
    /** Remote median / local median. */
    ratio: number;
  }[];
  freshness: {
    subscribers: number;
    fullValidators: number;
    publishes: number;
    /** Feeds refused (503 or 429) while the subscribers connected, each asked again after Retry-After. */
    refusedWhileOpening: number;
    /** Publish request sent to each raw subscriber's receiving the new version's event. */
    event: LatencyFigures;
    /** Publish request sent to each full validator's running the new version. */
    running: LatencyFigures;
    /** Publish request sent to its answer, median. */
    publishAnswerMs: number;
    met: boolean;
  };
  idle: {
    /** Feeds held by the service (raw subscribers plus full validators). */
    feeds: number;
    rssBeforeMb: number;
    rssWithFeedsMb: number;
    /** (RSS with the feeds - before) / feeds, both after a full GC. */
    bytesPerFeed: number;
    heapBeforeMb: number;
    heapWithFeedsMb: number;
    /** (heap used with the feeds - before) / feeds, both after a full GC. */
    heapBytesPerFeed: number;
    windowS: number;
    /** Service CPU over the window with no feed held, and with them; ms of CPU per second. */
    cpuMsPerSecNone: number;
    cpuMsPerSecHeld: number;
    heartbeatMs: number;
  };
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function figures(values: readonly number[]): LatencyFigures {
  return {
    p50Ms: percentile(values, 50), p99Ms: percentile(values, 99), maxMs: values.length === 0 ? Number.NaN : Math.max(...values), samples: values.length,
  };
}

/**
 * Preloaded into the service process (`node --expose-gc --require`, written
 * to a temp file at start): on SIGUSR2 it runs a full GC and writes
 * process.memoryUsage() as JSON to BENCH_MEMORY_FILE, so the figures are
 * the service's own, after GC, which the service does not expose.
 */
const MEMORY_PRELOAD = `'use strict';
process.on('SIGUSR2', () => {
  globalThis.gc();
  require('node:fs').writeFileSync(process.env.BENCH_MEMORY_FILE, JSON.stringify(process.memoryUsage()));
});
`;

/** The service process's memory after a full GC (process.memoryUsage(), bytes), through the preload. */
async function memoryAfterGc(service: ServiceProcess, file: string): Promise<NodeJS.MemoryUsage> {
  await rm(file, { force: true });
  process.kill(service.pid, 'SIGUSR2');
  for (let waited = 0; waited < 10_000; waited += 100) {
    await delay(100);
    try {
      return JSON.parse(await readFile(file, 'utf8')) as NodeJS.MemoryUsage;
    } catch {
      // Not written (or not whole) yet.
    }
  }
  throw new Error('the service did not report its memory within 10 s');
}

/** The service's CPU time over `ms`, per second. */
async function cpuMsPerSecond(service: ServiceProcess, ms: number): Promise<number> {
  const before = service.cpuTimeMs();
  await delay(ms);
  return ((service.cpuTimeMs() - before) * 1000) / ms;
}

/** One change-feed connection read as plain HTTP: every `published` event's version, with when it arrived. */
interface RawSubscriber {
  /** Resolves at the first time a version >= `version` arrives, with that time (performance.now()). */
  reached(version: number): Promise<number>;
  close(): void;
}

function rawSubscriber(service: ServiceProcess, key: string, context: string): Promise<RawSubscriber> {
  const url = new URL(`${service.baseUrl}/api/v1/contexts/${encodeURIComponent(context)}/validator/events`);
  const arrivals: { version: number; at: number }[] = [];
  const waiting: { version: number; resolve: (at: number) => void }[] = [];
  return new Promise((resolve, reject) => {
    const request = http.get(url, {
      agent: false,
      headers: { accept: 'text/event-stream', 'x-api-key': key, 'x-tenant-id': service.tenantId },
    }, (response) => {
      if (response.statusCode !== 200) {
        reject(new FeedRefused(response.statusCode ?? 0, Number(response.headers['retry-after'])));
        response.resume();
        return;
      }
      response.setEncoding('utf8');
      let buffer = '';
      response.on('data', (chunk: string) => {
        const at = performance.now();
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!/^event: published$/m.test(block)) continue;
          const data = /^data: (.*)$/m.exec(block);
          if (data === null) continue;
          const version = (JSON.parse(data[1]) as { version: number }).version;
          arrivals.push({ version, at });
          for (let i = waiting.length - 1; i >= 0; i--) {
            if (version >= waiting[i].version) {
              waiting[i].resolve(at);
              waiting.splice(i, 1);
            }
          }
        }
      });
      resolve({
        reached: (version) => {
          const seen = arrivals.find((a) => a.version >= version);
          if (seen !== undefined) return Promise.resolve(seen.at);
          return new Promise((done) => waiting.push({ version, resolve: done }));
        },
        close: () => request.destroy(),
      });
    });
    request.on('error', reject);
  });
}

class FeedRefused extends Error {
  constructor(readonly status: number, readonly retryAfterS: number) {
    super(`change feed answered ${status}`);
  }
}

/**
 * Opens `count` raw subscribers, a few dozen at a time. A feed refused with
 * 503 or 429 (the instance sheds load while its event loop lags: opening
 * hundreds of feeds at once does that on a busy machine) is asked again
 * after Retry-After, as a client would; the refusals are counted.
 */
async function openSubscribers(
  service: ServiceProcess, key: string, context: string, count: number,
): Promise<{ subscribers: RawSubscriber[]; refusals: number }> {
  const subscribers: RawSubscriber[] = [];
  let refusals = 0;
  const open = async (): Promise<RawSubscriber> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await rawSubscriber(service, key, context);
      } catch (error) {
        if (!(error instanceof FeedRefused) || ![429, 503].includes(error.status) || attempt >= 20) throw error;
        refusals++;
        await delay(Number.isFinite(error.retryAfterS) ? error.retryAfterS * 1000 : 1000);
      }
    }
  };
  for (let i = 0; i < count; i += 25) {
    subscribers.push(...await Promise.all(Array.from({ length: Math.min(25, count - i) }, open)));
  }
  return { subscribers, refusals };
}

/** Times `count` single validations over HTTP, one at a time on one keep-alive connection (ms each). */
async function remoteLatencies(service: ServiceProcess, payload: PayloadName, count: number): Promise<number[]> {
  const body = JSON.stringify({ context: suite.context, payload: suite.payloads[payload] });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const url = new URL(`${service.baseUrl}/api/v1/validation/validate`);
  const once = (): Promise<void> => new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent, headers: { ...service.headers, 'content-length': Buffer.byteLength(body) } }, (response) => {
      response.resume();
      response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`validation answered ${response.statusCode}`))));
    });
    request.on('error', reject);
    request.end(body);
  });
  try {
    for (let i = 0; i < Math.min(200, count); i++) await once();
    const latencies: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      await once();
      latencies.push(performance.now() - started);
    }
    return latencies;
  } finally {
    agent.destroy();
  }
}

async function localFigures(validator: LocalValidator, quick: boolean): Promise<Map<PayloadName, LatencyFigures>> {
  let sink = 0;
  const bench = new Bench({ time: quick ? 200 : 1000, warmupTime: quick ? 50 : 250, throws: true });
  for (const name of PAYLOADS) {
    const payload = suite.payloads[name] as Record<string, unknown>;
    bench.add(name, () => {
      sink += validator.validateSync(payload).totalRulesEvaluated;
    });
  }
  await bench.run();
  if (sink === 0) throw new Error('the local validator evaluated no rule');
  const result = new Map<PayloadName, LatencyFigures>();
  for (const name of PAYLOADS) {
    const r = bench.getTask(name)?.result;
    if (r?.state !== 'completed') throw new Error(`local ${name}: ${r?.state ?? 'missing'}`);
    result.set(name, { p50Ms: r.latency.p50, p99Ms: r.latency.p99, maxMs: r.latency.max, samples: r.latency.samplesCount });
  }
  return result;
}

/** The same answer locally and over HTTP, or the comparison means nothing. */
async function checkSameAnswers(service: ServiceProcess, validator: LocalValidator): Promise<void> {
  for (const name of PAYLOADS) {
    const payload = suite.payloads[name] as Record<string, unknown>;
    const local = validator.validateSync(payload);
    const remote = await callApi({ ...service, adminKey: service.validatorKey }, 'POST', '/api/v1/validation/validate', { context: suite.context, payload });
    const codes = (r: { failures: { ruleCode: string }[] }): string => r.failures.map((f) => f.ruleCode).sort().join(',');
    if (local.isValid !== remote.isValid || codes(local) !== codes(remote)) {
      throw new Error(`${name}: local and remote answers differ (${codes(local)} / ${codes(remote)})`);
    }
  }
}

let extraRules = 0;
/** Adds a rule and publishes: a new ruleset version. Returns the version and when the publish request was sent. */
async function publishNewVersion(service: ServiceProcess): Promise<{ version: number; sentAt: number; answerMs: number }> {
  extraRules++;
  await callApi(service, 'POST', '/api/v1/rules', {
    context: suite.context, code: `BENCH_EXTRA_${extraRules}`, name: 'Extra', fieldPath: 'extra', expression: '$value != "never"',
  }, 201);
  const sentAt = performance.now();
  const published = await callApi(service, 'POST', `/api/v1/contexts/${encodeURIComponent(suite.context)}/publish`, {});
  return { version: published.rulesetVersion as number, sentAt, answerMs: performance.now() - sentAt };
}

/** Resolves with the time a full validator first runs `version` or later. */
function running(validator: LocalValidator, version: number): Promise<number> {
  if ((validator.version ?? 0) >= version) return Promise.resolve(performance.now());
  return new Promise((resolve) => {
    const stop = validator.onUpdate((update) => {
      if (update.version >= version) {
        stop();
        resolve(performance.now());
      }
    });
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function runClientBench({ quick = false }: { quick?: boolean } = {}): Promise<ClientBenchResult> {
  const subscriberCount = quick ? 200 : 1000;
  const fullCount = 5;
  const publishes = quick ? 2 : 5;
  const remoteCount = quick ? 500 : 3000;
  const windowMs = quick ? 3000 : 16_000;
  const heartbeatMs = 15_000;
  const tempDir = await mkdtemp(path.join(tmpdir(), 'rules-bench-client-'));
  const memoryFile = path.join(tempDir, 'memory.json');
  const preload = path.join(tempDir, 'memory-on-signal.cjs');
  await writeFile(preload, MEMORY_PRELOAD);
  const service = await startService({
    nodeFlags: ['--expose-gc', '--require', preload],
    env: { BENCH_MEMORY_FILE: memoryFile, SSE_MAX_CONNECTIONS_PER_TENANT: '5000', SSE_MAX_CONNECTIONS: '5000', SSE_HEARTBEAT_MS: String(heartbeatMs) },
  });
  const validators: LocalValidator[] = [];
  let subscribers: RawSubscriber[] = [];
  try {
    await publishContext(service, suite.context, suite.rules);
    await callApi(service, 'PUT', `/api/v1/contexts/${encodeURIComponent(suite.context)}/settings`, { localValidation: true });
    const clientKey = (await callApi(service, 'POST', '/api/v1/api-keys', { name: 'bench-client', role: 'client' }, 201)).key as string;
    const publicKey = (await callApi(service, 'GET', '/api/v1/signing-key')).publicKey as string;
    const client = createRulesClient({ baseUrl: service.baseUrl, tenantId: service.tenantId, apiKey: clientKey });
    const openValidator = (): LocalValidator => {
      // Polling set far beyond the run, so a new version arrives through the feed or not at all.
      const validator = client.localValidator(suite.context, { publicKey, pollIntervalMs: 3_600_000 });
      validators.push(validator);
      return validator;
    };

    // 1. Local against remote.
    const measured = openValidator();
    await measured.ready;
    await checkSameAnswers(service, measured);
    const local = await localFigures(measured, quick);
    const localVsRemote = [];
    for (const name of PAYLOADS) {
      const remote = figures(await remoteLatencies(service, name, remoteCount));
      localVsRemote.push({ payload: name, local: local.get(name)!, remote, ratio: remote.p50Ms / local.get(name)!.p50Ms });
    }
    await measured.close();
    validators.length = 0;

    // 3a. The service with no feed held.
    await delay(2000);
    const before = await memoryAfterGc(service, memoryFile);
    const cpuNone = await cpuMsPerSecond(service, windowMs);

    // 2. Feeds held: raw subscribers and full validators.
    const opened = await openSubscribers(service, clientKey, suite.context, subscriberCount);
    subscribers = opened.subscribers;
    for (let i = 0; i < fullCount; i++) openValidator();
    await Promise.all(validators.map((v) => v.ready));
    await delay(2000);
    const withFeeds = await memoryAfterGc(service, memoryFile);
    const cpuHeld = await cpuMsPerSecond(service, windowMs);

    const eventMs: number[] = [];
    const runningMs: number[] = [];
    const answerMs: number[] = [];
    for (let round = 0; round < publishes; round++) {
      const { version, sentAt, answerMs: answer } = await publishNewVersion(service);
      answerMs.push(answer);
      const [events, runs] = await withTimeout(Promise.all([
        Promise.all(subscribers.map((s) => s.reached(version))),
        Promise.all(validators.map((v) => running(v, version))),
      ]), 60_000, `version ${version} reaching every subscriber`);
      eventMs.push(...events.map((at) => at - sentAt));
      runningMs.push(...runs.map((at) => at - sentAt));
      await delay(1000);
    }
    const feeds = subscriberCount + fullCount;
    const event = figures(eventMs);
    return {
      generatedAt: new Date().toISOString(),
      quick,
      ruleCount: suite.rules.length,
      localVsRemote,
      freshness: {
        subscribers: subscriberCount, fullValidators: fullCount, publishes, refusedWhileOpening: opened.refusals,
        event, running: figures(runningMs), publishAnswerMs: median(answerMs),
        met: event.p99Ms < FRESHNESS_TARGET_MS && percentile(runningMs, 99) < FRESHNESS_TARGET_MS,
      },
      idle: {
        feeds, rssBeforeMb: before.rss / 2 ** 20, rssWithFeedsMb: withFeeds.rss / 2 ** 20, bytesPerFeed: (withFeeds.rss - before.rss) / feeds,
        heapBeforeMb: before.heapUsed / 2 ** 20, heapWithFeedsMb: withFeeds.heapUsed / 2 ** 20,
        heapBytesPerFeed: (withFeeds.heapUsed - before.heapUsed) / feeds,
        windowS: windowMs / 1000, cpuMsPerSecNone: cpuNone, cpuMsPerSecHeld: cpuHeld, heartbeatMs,
      },
    };
  } finally {
    for (const s of subscribers) s.close();
    await Promise.all(validators.map((v) => v.close()));
    await service.stop();
    await rm(tempDir, { recursive: true, force: true });
  }
}

/** Microseconds with 1 decimal below 10 us, else whole. */
function us(ms: number): string {
  const value = ms * 1000;
  return value < 10 ? fixed(value, 1) : int(value);
}

/** The three tables: local against remote, freshness, idle cost. */
export function clientTables(r: ClientBenchResult): { header: string[]; rows: string[][] }[] {
  const f = r.freshness;
  const i = r.idle;
  return [
    {
      header: ['payload', 'local median us', 'local p99 us', 'HTTP median us', 'HTTP p99 us', 'HTTP / local (medians)'],
      rows: r.localVsRemote.map((x) => [x.payload, us(x.local.p50Ms), us(x.local.p99Ms), us(x.remote.p50Ms), us(x.remote.p99Ms), `${int(x.ratio)}x`]),
    },
    {
      header: ['from the publish request to', 'count', 'p50 ms', 'p99 ms', 'max ms', `target p99 < ${FRESHNESS_TARGET_MS} ms`],
      rows: [
        [`the event, ${int(f.subscribers)} raw feeds`, int(f.event.samples), fixed(f.event.p50Ms, 1), fixed(f.event.p99Ms, 1), fixed(f.event.maxMs, 1), verdict(f.event.p99Ms < FRESHNESS_TARGET_MS)],
        [
          `the new version running, ${f.fullValidators} full validators`, int(f.running.samples), fixed(f.running.p50Ms, 1), fixed(f.running.p99Ms, 1),
          fixed(f.running.maxMs, 1), verdict(f.running.p99Ms < FRESHNESS_TARGET_MS),
        ],
      ],
    },
    {
      header: ['service, idle', 'no feed', `${int(i.feeds)} feeds held`, 'per feed'],
      rows: [
        ['resident memory after GC (rss)', `${fixed(i.rssBeforeMb, 1)} MB`, `${fixed(i.rssWithFeedsMb, 1)} MB`, `${fixed(i.bytesPerFeed / 1024, 1)} KiB`],
        ['heap used after GC', `${fixed(i.heapBeforeMb, 1)} MB`, `${fixed(i.heapWithFeedsMb, 1)} MB`, `${fixed(i.heapBytesPerFeed / 1024, 1)} KiB`],
        [`CPU over ${fixed(i.windowS, 0)} s (ms per s)`, fixed(i.cpuMsPerSecNone, 1), fixed(i.cpuMsPerSecHeld, 1), ''],
      ],
    },
  ];
}

/** Report lines for the terminal. */
export function clientReport(r: ClientBenchResult): string {
  const f = r.freshness;
  return [
    `Local evaluation (${r.ruleCount}-rule loan context${r.quick ? ', quick' : ''}): local validateSync (tinybench) against POST /api/v1/validation/validate`
      + ' over HTTP, one request at a time on a keep-alive connection, same machine:',
    '',
    ...clientTables(r).flatMap((t) => [textTable(t), '']),
    `${int(f.subscribers)} raw change-feed connections plus ${f.fullValidators} full local validators (each its own feed) held by one service process,`
      + ` ${f.publishes} publishes; ${int(f.refusedWhileOpening)} connections refused (503/429) while they opened, each asked again after Retry-After;`
      + ` the publish request itself answered in ${fixed(f.publishAnswerMs, 1)} ms (median).`
      + ` Freshness p99 < ${FRESHNESS_TARGET_MS} ms: ${verdict(f.met)}.`,
    `Idle CPU window ${fixed(r.idle.windowS, 0)} s, ${r.idle.windowS * 1000 > r.idle.heartbeatMs ? 'which includes' : 'shorter than the interval of'}`
      + ` the heartbeat to every feed (SSE_HEARTBEAT_MS ${int(r.idle.heartbeatMs)}). Memory: process.memoryUsage() of the service process after a full GC`
      + ' (a preload runs it on SIGUSR2).',
  ].join('\n');
}

const invokedDirectly = process.argv[1] !== undefined
  && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (invokedDirectly) {
  const result = await runClientBench({ quick: process.argv.includes('--quick') });
  console.log(clientReport(result));
  process.exit(0);
}
