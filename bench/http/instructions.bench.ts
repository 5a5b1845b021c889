/**
 * Instructions per request (`npm run bench:instructions`): the service and
 * the bare Fastify route of `http.bench.ts`, each run under valgrind's
 * callgrind, counting the CPU instructions the server executes for a fixed
 * number of single validations.
 *
 * Why: throughput on a shared machine moves by tens of percent from one
 * second to the next, so small hot-path changes drown in noise. Instruction
 * counts do not depend on what else the machine is doing, so a change of a
 * few per cent in the work the server's code does shows reliably.
 *
 * What they do not show: the ratio is not the throughput ratio. Counts
 * leave out the kernel (sending the answer, waking the client) and weigh a
 * cache miss or a mispredicted branch like any instruction, so the
 * service's instructions per request, over the bare route's, understate
 * its CPU time over the bare route's (bench/README.md, "Instructions per
 * request"). Use this for
 * before/after comparisons of one change, and the throughput benchmark for
 * the target.
 *
 * How: each server starts with instrumentation off (valgrind still runs
 * it, several times slower), takes a warm-up load so that V8 has optimized
 * the hot path, then runs `windows` measured windows of `requests`
 * requests each: counters zeroed, instrumentation on, the requests (10
 * connections, autocannon in this process), instrumentation off, dump. A
 * window that met a major garbage collection or a late optimization counts
 * more; the figure is the smallest window, and the median is printed
 * beside it. Both servers are measured at the same time: instruction
 * counts do not mind sharing the CPU.
 *
 * Needs valgrind (Debian package `valgrind`). Uses PGlite in a temp folder
 * unless DATABASE_URL is set; the hot path touches neither.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { loanApplicationSuite as suite } from '../suites/loan-application.ts';
import { startChildServer, type ChildServer } from '../tools/child-server.ts';
import { runLoad } from '../tools/load.ts';
import { fixed, int, median, textTable } from '../tools/report-table.ts';
import { publishContext } from '../tools/rules-api.ts';
import { startService } from '../tools/service-process.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const run = promisify(execFile);
const SINGLE_PATH = '/api/v1/validation/validate';
/** The same route with a query string: the validation fast lane never takes it, so Fastify's route answers. */
const FASTIFY_PATH = `${SINGLE_PATH}?via=fastify`;

export interface InstructionsOptions {
  /** Requests before measuring (instrumentation off). Default 20 000. */
  warmupRequests?: number;
  /** Requests per measured window. Default 3000. */
  requests?: number;
  /** Measured windows per server. Default 4. */
  windows?: number;
  /**
   * Also count the service's Fastify route (the same path with a query
   * string, which the validation fast lane never takes): `fastify` in the
   * result, measured on the same process, its windows alternating with the
   * fast lane's.
   */
  bothPaths?: boolean;
  print?: boolean;
}

export interface ServerInstructions {
  /** Thousands of instructions per request, one figure per window. */
  windowsK: number[];
  /** The smallest window (thousands per request). */
  minK: number;
  medianK: number;
}

export interface InstructionsResult {
  requests: number;
  windows: number;
  service: ServerInstructions;
  /** The service's Fastify route (with bothPaths). */
  fastify?: ServerInstructions;
  bare: ServerInstructions;
  /** service minK / bare minK. */
  ratio: number;
}

/** True when valgrind can be run here. */
export async function hasValgrind(): Promise<boolean> {
  try {
    await run('valgrind', ['--version']);
    return true;
  } catch {
    return false;
  }
}

interface Instrumented {
  server: ChildServer;
  /** Runs one measured window and returns the instructions it counted. */
  measure(load: () => Promise<void>): Promise<number>;
  cleanup(): Promise<void>;
}

/** The valgrind command line for one server, and how to read what it counts. */
async function instrumentation(): Promise<{
  wrapper: string[]; control: (pid: number, ...args: string[]) => Promise<void>; discard: () => Promise<void>; totals: () => Promise<number>; dir: string;
}> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rules-callgrind-'));
  const prefix = path.join(dir, 'vgdb');
  const out = path.join(dir, 'callgrind.out');
  const wrapper = [
    'valgrind', '--tool=callgrind', '--instr-atstart=no', `--vgdb-prefix=${prefix}`, `--callgrind-out-file=${out}`,
    '--dump-instr=no', '--compress-strings=no', '--quiet',
  ];
  const control = async (pid: number, ...args: string[]): Promise<void> => {
    // vgdb finds the server by a file name that holds $USER and $HOST: give
    // it the environment startChildServer gives the server.
    await run('callgrind_control', [`--vgdb-prefix=${prefix}`, ...args, String(pid)], { env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1' } });
  };
  // Each dump writes `<out>.<n>` (shortly after callgrind_control returns);
  // its `totals:` line is the instruction count since the last zeroing.
  const dumps = async (): Promise<string[]> => (await readdir(dir)).filter((f) => f.startsWith('callgrind.out.'));
  const discard = async (): Promise<void> => {
    for (const name of await dumps()) await rm(path.join(dir, name));
  };
  const totals = async (): Promise<number> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      for (const name of await dumps()) {
        const file = path.join(dir, name);
        const match = /^totals: (\d+)/m.exec(await readFile(file, 'utf8'));
        if (match === null) continue;
        await rm(file);
        return Number(match[1]);
      }
      if (Date.now() > deadline) throw new Error(`callgrind wrote no dump in ${dir}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  return { wrapper, control, discard, totals, dir };
}

async function instrumented(start: (wrapper: string[]) => Promise<ChildServer>): Promise<Instrumented> {
  const { wrapper, control, discard, totals, dir } = await instrumentation();
  let server: ChildServer;
  try {
    server = await start(wrapper);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    server,
    async measure(load) {
      await discard();
      await control(server.pid, '--zero');
      await control(server.pid, '--instr=on');
      await load();
      await control(server.pid, '--instr=off');
      await control(server.pid, '--dump');
      return totals();
    },
    async cleanup() {
      await server.stop(20_000);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function summary(windowsK: number[]): ServerInstructions {
  return { windowsK, minK: Math.min(...windowsK), medianK: median(windowsK) };
}

/**
 * Counts instructions per single validation for the service and the bare route.
 *
 * @example
 * const { ratio } = await runInstructionsBench({ windows: 3 });
 */
export async function runInstructionsBench(options: InstructionsOptions = {}): Promise<InstructionsResult> {
  const warmupRequests = options.warmupRequests ?? 20_000;
  const requests = options.requests ?? 3000;
  const windows = options.windows ?? 4;
  const body = JSON.stringify({ context: suite.context, payload: suite.payloads.passing });
  // Under valgrind start-up and each request take many times longer.
  const startTimeoutMs = 600_000;

  let headers: Record<string, string> = {};
  const [service, bare] = await Promise.all([
    instrumented(async (wrapper) => {
      const started = await startService({ wrapper, startTimeoutMs, databaseUrl: process.env.DATABASE_URL || undefined });
      headers = started.headers;
      await publishContext(started, suite.context, suite.rules);
      return started;
    }),
    instrumented((wrapper) => startChildServer({ name: 'bare route', entry: path.join(here, '../tools/bare-server.ts'), env: {}, wrapper, startTimeoutMs })),
  ]);
  try {
    const load = (server: ChildServer, count: number, requestPath = SINGLE_PATH) => async (): Promise<void> => {
      await runLoad({ url: server.baseUrl + requestPath, headers, body, connections: 10, durationS: 0, requests: count, timeoutS: 60 });
    };
    const count = async (target: Instrumented): Promise<ServerInstructions> => {
      await load(target.server, warmupRequests)();
      const perRequestK: number[] = [];
      for (let i = 0; i < windows; i++) perRequestK.push((await target.measure(load(target.server, requests))) / requests / 1000);
      return summary(perRequestK);
    };
    /** The fast lane's path and Fastify's route on one process, warmed alike, windows alternating. */
    const countBoth = async (target: Instrumented): Promise<[ServerInstructions, ServerInstructions]> => {
      await load(target.server, warmupRequests)();
      await load(target.server, warmupRequests, FASTIFY_PATH)();
      const fast: number[] = [];
      const fastify: number[] = [];
      for (let i = 0; i < windows; i++) {
        fast.push((await target.measure(load(target.server, requests))) / requests / 1000);
        fastify.push((await target.measure(load(target.server, requests, FASTIFY_PATH))) / requests / 1000);
      }
      return [summary(fast), summary(fastify)];
    };
    const [[serviceFigures, fastifyFigures], bareFigures] = await Promise.all([
      options.bothPaths === true ? countBoth(service) : count(service).then((figures) => [figures, undefined] as const),
      count(bare),
    ]);
    const result: InstructionsResult = {
      requests, windows, service: serviceFigures, fastify: fastifyFigures, bare: bareFigures, ratio: serviceFigures.minK / bareFigures.minK,
    };
    if (options.print !== false) printInstructions(result);
    return result;
  } finally {
    await Promise.all([service.cleanup(), bare.cleanup()]);
  }
}

/** The figures as a table (shared with the summary writer). */
export function instructionsTable(r: InstructionsResult): { header: string[]; rows: string[][] } {
  const row = (name: string, s: ServerInstructions): string[] => [
    name, fixed(s.minK, 1), fixed(s.medianK, 1), s.windowsK.map((k) => fixed(k, 0)).join(' '),
  ];
  return {
    header: ['server', 'k instr/request (min)', 'median', 'windows'],
    rows: [
      row(r.fastify === undefined ? 'service' : 'service, fast lane', r.service),
      ...(r.fastify === undefined ? [] : [row('service, Fastify route', r.fastify)]),
      row('bare route', r.bare),
    ],
  };
}

function printInstructions(r: InstructionsResult): void {
  console.log(`\nInstructions per single validation (callgrind): ${suite.name}, ${int(r.windows)} windows of ${int(r.requests)} requests\n`);
  console.log(textTable(instructionsTable(r)));
  console.log(`service / bare route = ${fixed(r.ratio, 2)} instructions per request (work done, not the throughput ratio: see bench/README.md)`);
  if (r.fastify !== undefined) console.log(`fast lane / Fastify route = ${fixed(r.service.minK / r.fastify.minK, 2)} instructions per request`);
}

const invokedDirectly = process.argv[1] !== undefined
  && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (invokedDirectly) {
  if (!(await hasValgrind())) {
    console.error('bench:instructions needs valgrind (apt-get install valgrind)');
    process.exit(1);
  }
  const numberArg = (name: string): number | undefined => {
    const given = process.argv.find((a) => a.startsWith(`--${name}=`));
    return given === undefined ? undefined : Number(given.slice(name.length + 3));
  };
  await runInstructionsBench({
    windows: numberArg('windows'), requests: numberArg('requests'), warmupRequests: numberArg('warmup'),
    bothPaths: process.argv.includes('--both-paths'),
  });
}
