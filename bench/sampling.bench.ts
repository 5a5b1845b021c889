/**
 * What sampling real traffic costs (docs/operations.md, "Sampling"): HTTP
 * throughput of single validations (the loan-application suite, the fast
 * lane's URL) by one service process whose tenant samples nothing, 1 %
 * and 100 % of its validations. One process and one tenant, its rate set
 * with PUT /tenant/sampling between runs, so the three settings share
 * everything else (process, heap, warm code, CPU pinning). Each round
 * measures all three in an order that rotates from round to round, so a
 * slow moment of a shared machine falls on each alike; every ratio is the
 * median of the per-round ratios against sampling off, of throughput and of
 * the server's CPU time per request (read from /proc). After a run at
 * 100 % the writer is given time to store the queue before the next run
 * starts.
 *
 *   npm run bench:sampling [-- --rounds=N --seconds=S]
 *
 * Target: at 1 %, throughput at least 0.97 of sampling off.
 */
import os from 'node:os';
import { singleBody, SINGLE_PATH } from './http/http.bench.ts';
import { loanApplicationSuite as suite } from './suites/loan-application.ts';
import { cpuPinning } from './tools/cpu-pinning.ts';
import { runLoad } from './tools/load.ts';
import { fixed, int, median, textTable, verdict } from './tools/report-table.ts';
import { callApi, publishContext } from './tools/rules-api.ts';
import { startService, type ServiceProcess } from './tools/service-process.ts';

const SETTINGS = { off: 0, '1 %': 0.01, '100 %': 1 } as const;
type Setting = keyof typeof SETTINGS;
const NAMES = Object.keys(SETTINGS) as Setting[];
/** At 1 %, throughput at least this share of sampling off. */
const ONE_PERCENT_TARGET = 0.97;
/** After a run at 100 %: the writer's interval and a half, so the next run starts with an empty queue (at 1 % it holds a few samples at most). */
const DRAIN_MS = 1500;

interface RunFigures {
  rps: number;
  cpuUs: number;
}

function option(name: string, fallback: number): number {
  const given = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  return given === undefined ? fallback : Number(given.slice(name.length + 3));
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function setRate(service: ServiceProcess, rate: number): Promise<void> {
  await callApi(service, 'PUT', '/api/v1/tenant/sampling', { rate });
}

/** The sample counters of the service's /metrics. */
async function sampleCounters(service: ServiceProcess): Promise<string> {
  const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
  return text.split('\n').filter((line) => line.startsWith('rules_samples')).join('; ');
}

async function main(): Promise<void> {
  // Many short rounds: on a shared machine, drift between the settings' runs matters more than each run's length.
  const rounds = option('rounds', 12);
  const durationS = option('seconds', 2);
  const connections = 10;
  const body = singleBody('passing');
  const loadBefore = os.loadavg()[0];
  const service = await startService();
  const pinning = cpuPinning();
  try {
    await publishContext(service, suite.context, suite.rules);
    pinning.pin([service.pid]);
    const measure = async (setting: Setting, seconds: number): Promise<RunFigures> => {
      await setRate(service, SETTINGS[setting]);
      const cpuBefore = service.cpuTimeMs();
      const figures = await runLoad({ url: service.baseUrl + SINGLE_PATH, headers: service.headers, body, connections, durationS: seconds });
      const cpuUs = ((service.cpuTimeMs() - cpuBefore) * 1000) / figures.requests;
      if (SETTINGS[setting] === 1) await sleep(DRAIN_MS);
      return { rps: figures.requestsPerSec, cpuUs };
    };
    for (const name of NAMES) await measure(name, 2);
    const results: Record<Setting, RunFigures>[] = [];
    for (let round = 0; round < rounds; round++) {
      const order = NAMES.map((_, i) => NAMES[(i + round) % NAMES.length]);
      const figures = {} as Record<Setting, RunFigures>;
      for (const name of order) figures[name] = await measure(name, durationS);
      results.push(figures);
      const line = NAMES.map((n) => `${n} ${int(figures[n].rps)} req/s ${fixed(figures[n].cpuUs, 1)} us`).join('; ');
      console.log(`round ${round + 1}/${rounds} (${order.join(', ')}): ${line}; 1 %/off ${fixed(figures['1 %'].rps / figures.off.rps, 3)}`);
    }
    await setRate(service, 0);
    const ratios = (name: Setting) => ({
      rps: median(results.map((r) => r[name].rps / r.off.rps)),
      cpu: median(results.map((r) => r[name].cpuUs / r.off.cpuUs)),
    });
    const onePercent = ratios('1 %').rps;
    console.log(`\nSampling cost: ${rounds} rounds of ${durationS} s per setting, ${connections} connections, one service process (PGlite); ${pinning.description}`);
    console.log(textTable({
      header: ['sampling', 'req/s (median)', 'CPU us/request (median)', 'throughput vs off', 'CPU/request vs off'],
      rows: NAMES.map((name) => {
        const ratio = ratios(name);
        return [
          name, int(median(results.map((r) => r[name].rps))), fixed(median(results.map((r) => r[name].cpuUs)), 1),
          fixed(ratio.rps, 3), fixed(ratio.cpu, 3),
        ];
      }),
    }));
    console.log(`target: at 1 %, throughput at least ${ONE_PERCENT_TARGET} of sampling off: ${fixed(onePercent, 3)} ${verdict(onePercent >= ONE_PERCENT_TARGET)}`);
    console.log(`load average (1 min) before ${fixed(loadBefore, 2)}, after ${fixed(os.loadavg()[0], 2)}; ${await sampleCounters(service)}`);
  } finally {
    pinning.unpin([]);
    await service.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
