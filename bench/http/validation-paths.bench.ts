/**
 * The single validation's two ways through one service process, against
 * the bare route: the exact path (which the validation fast lane answers
 * when it is on), the same path with a query string (which only Fastify's
 * route answers), and the bare Fastify route (`bare-server.ts`). Each round
 * measures all three, in an order that rotates from round to round, so a
 * slow moment of a shared machine falls on each of them alike; every ratio
 * is the median of the per-round ratios, of throughput and of each
 * server's own CPU time per request (read from /proc: steadier than
 * throughput when other work shares the machine).
 *
 *   node --import tsx bench/http/validation-paths.bench.ts [--rounds=N] [--seconds=S] [--processes=P]
 *
 * A diagnostic for the question "does the fast lane still pay for
 * itself" (docs/architecture.md, "The path of one validation"); not part of
 * `npm run bench`.
 */
import { fixed, int, median } from '../tools/report-table.ts';
import { runLoad } from '../tools/load.ts';
import { singleBody, SINGLE_PATH, startHttpPair } from './http.bench.ts';
import type { ChildServer } from '../tools/child-server.ts';

const PATHS = {
  'fast lane': SINGLE_PATH,
  'Fastify route': `${SINGLE_PATH}?via=fastify`,
  bare: SINGLE_PATH,
} as const;
type PathName = keyof typeof PATHS;
const NAMES = Object.keys(PATHS) as PathName[];

function option(name: string, fallback: number): number {
  const given = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  return given === undefined ? fallback : Number(given.slice(name.length + 3));
}

async function main(): Promise<void> {
  const rounds = option('rounds', 9);
  const durationS = option('seconds', 3);
  const processes = option('processes', 1);
  const connections = 10;
  const body = singleBody('passing');
  const pair = await startHttpPair({ serviceProcesses: processes });
  try {
    const measure = async (name: PathName, serviceIndex: number, seconds: number): Promise<{ rps: number; cpuUs: number }> => {
      const service = pair.services[serviceIndex];
      const server: ChildServer = name === 'bare' ? pair.bare : service;
      const cpuBefore = server.cpuTimeMs();
      const figures = await runLoad({ url: server.baseUrl + PATHS[name], headers: service.headers, body, connections, durationS: seconds });
      return { rps: figures.requestsPerSec, cpuUs: ((server.cpuTimeMs() - cpuBefore) * 1000) / figures.requests };
    };
    for (let p = 0; p < processes; p++) for (const name of NAMES) await measure(name, p, 2);
    const results: Record<PathName, { rps: number; cpuUs: number }>[] = [];
    for (let round = 0; round < rounds; round++) {
      const order = NAMES.map((_, i) => NAMES[(i + round) % NAMES.length]);
      const figures = {} as Record<PathName, { rps: number; cpuUs: number }>;
      for (const name of order) figures[name] = await measure(name, round % processes, durationS);
      results.push(figures);
      console.log(`round ${round + 1}/${rounds} (${order.join(', ')}): ${NAMES.map((n) => `${n} ${int(figures[n].rps)} req/s ${fixed(figures[n].cpuUs, 1)} us`).join('; ')}`);
    }
    const ratio = (a: PathName, b: PathName): string => {
      const each = results.map((r) => r[a].rps / r[b].rps);
      const cpu = results.map((r) => r[a].cpuUs / r[b].cpuUs);
      return `throughput ${fixed(median(each), 3)} (rounds ${each.map((x) => fixed(x, 2)).join(' ')}); `
        + `CPU per request ${fixed(median(cpu), 3)} (rounds ${cpu.map((x) => fixed(x, 2)).join(' ')})`;
    };
    console.log(`\n${rounds} rounds of ${durationS} s, ${connections} connections, ${processes} service process(es)`);
    for (const name of NAMES) {
      console.log(`${name}: median ${int(median(results.map((r) => r[name].rps)))} req/s, ${fixed(median(results.map((r) => r[name].cpuUs)), 1)} us CPU per request`);
    }
    console.log(`fast lane / Fastify route: ${ratio('fast lane', 'Fastify route')}`);
    console.log(`Fastify route / bare: ${ratio('Fastify route', 'bare')}`);
    console.log(`fast lane / bare: ${ratio('fast lane', 'bare')}`);
  } finally {
    await pair.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
