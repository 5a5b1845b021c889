/**
 * WORKERS=2 against WORKERS=1 (`npm run bench -- --only=workers`, or
 * `node --import tsx bench/http/workers.bench.ts`): single-validation throughput of the service on
 * PostgreSQL with one and with two worker processes, the same database,
 * tenant, rules and load, alternating W2, W1, W1, W2 so drift cancels. The
 * ratio is the median of the per-pair ratios.
 *
 * Needs DATABASE_URL (a PostgreSQL server; a throwaway database is created
 * on it and dropped afterwards) and a service that really starts worker
 * processes: when WORKERS=2 starts no child process, the suite reports
 * "skipped: WORKERS not implemented" instead of a meaningless ratio.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { loanApplicationSuite as suite } from '../suites/loan-application.ts';
import { SINGLE_PATH, singleBody } from './http.bench.ts';
import { runLoad } from '../tools/load.ts';
import { fixed, int, median } from '../tools/report-table.ts';
import { publishContext } from '../tools/rules-api.ts';
import { startService, type ServiceProcess } from '../tools/service-process.ts';

export interface WorkersBenchOptions {
  quick?: boolean;
  print?: boolean;
  /** A PostgreSQL server to create the throwaway database on; default process.env.DATABASE_URL. */
  databaseUrl?: string;
}

export interface WorkersRound {
  workers: number;
  requestsPerSec: number;
  p99Ms: number;
}

export type WorkersBenchResult =
  | { skipped: string }
  | {
    skipped: null;
    rounds: WorkersRound[];
    durationS: number;
    connections: number;
    /** Worker processes seen under WORKERS=2. */
    workerProcesses: number;
    workers1Rps: number;
    workers2Rps: number;
    /** Median over the pairs of WORKERS=2 over WORKERS=1 throughput. */
    ratio: number;
  };

async function adminQuery(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the comparison, or says why it was skipped.
 *
 * @example
 * const result = await runWorkersBench({ databaseUrl: 'postgres://postgres@127.0.0.1:5432/test' });
 * if (result.skipped === null) console.log(result.ratio);
 */
export async function runWorkersBench(options: WorkersBenchOptions = {}): Promise<WorkersBenchResult> {
  const serverUrl = options.databaseUrl ?? process.env.DATABASE_URL;
  const print = options.print !== false;
  const skip = (reason: string): WorkersBenchResult => {
    if (print) console.log(`\nWORKERS benchmark: skipped: ${reason}`);
    return { skipped: reason };
  };
  if (serverUrl === undefined || serverUrl === '') return skip('DATABASE_URL not set (WORKERS above 1 needs PostgreSQL)');

  // Generated here, never taken from input, so it is safe to splice into DDL.
  const name = `bench_${randomBytes(6).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const tenantId = 'bench';
  const adminKey = `bench_${randomBytes(24).toString('base64url')}`;
  const start = (workers: number): Promise<ServiceProcess> => startService({ databaseUrl, workers, tenantId, adminKey });
  const durationS = options.quick === true ? 3 : 5;
  const connections = 10;
  const body = singleBody();

  let service: ServiceProcess | undefined;
  try {
    service = await start(2);
    // Workers may still be forking when the first one answers.
    for (let i = 0; i < 50 && service.childProcessCount() < 2; i++) await delay(100);
    const workerProcesses = service.childProcessCount();
    if (workerProcesses === 0) return skip('WORKERS not implemented (WORKERS=2 started no worker process)');
    await publishContext(service, suite.context, suite.rules);

    const rounds: WorkersRound[] = [];
    const measure = async (running: ServiceProcess, workers: number): Promise<void> => {
      const load = { url: running.baseUrl + SINGLE_PATH, headers: running.headers, body, connections };
      await runLoad({ ...load, durationS: 2 });
      const figures = await runLoad({ ...load, durationS });
      rounds.push({ workers, requestsPerSec: figures.requestsPerSec, p99Ms: figures.latencyP99Ms });
    };
    const order = options.quick === true ? [2, 1] : [2, 1, 1, 2];
    for (let i = 0; i < order.length; i++) {
      if (i > 0) {
        await service.stop();
        service = undefined;
        service = await start(order[i]);
      }
      await measure(service, order[i]);
    }
    const ratios: number[] = [];
    for (let i = 0; i + 1 < rounds.length; i += 2) {
      const [a, b] = [rounds[i], rounds[i + 1]];
      ratios.push(a.workers === 2 ? a.requestsPerSec / b.requestsPerSec : b.requestsPerSec / a.requestsPerSec);
    }
    const result: WorkersBenchResult = {
      skipped: null, rounds, durationS, connections, workerProcesses,
      workers1Rps: median(rounds.filter((r) => r.workers === 1).map((r) => r.requestsPerSec)),
      workers2Rps: median(rounds.filter((r) => r.workers === 2).map((r) => r.requestsPerSec)),
      ratio: median(ratios),
    };
    if (print) {
      console.log(`\nWORKERS benchmark (PostgreSQL, ${workerProcesses} worker processes): WORKERS=1 ${int(result.workers1Rps)} req/s,`
        + ` WORKERS=2 ${int(result.workers2Rps)} req/s, ratio ${fixed(result.ratio, 2)}`
        + ` (rounds ${rounds.map((r) => `W${r.workers} ${int(r.requestsPerSec)}`).join(', ')})`);
    }
    return result;
  } finally {
    await service?.stop();
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

const invokedDirectly = process.argv[1] !== undefined
  && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (invokedDirectly) {
  await runWorkersBench({ quick: process.argv.includes('--quick') });
}
