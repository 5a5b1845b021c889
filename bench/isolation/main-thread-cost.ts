/**
 * What each of the noisy tenant's heavy operations costs the service's main
 * thread, with nothing else running: its CPU time per call (from /proc's
 * scheduler statistics, so a machine loaded by other work inflates it
 * little, unlike latencies), and, with `--cpu-prof`, the longest stretches
 * of main-thread work during the calls (bench/tools/main-thread-tasks.ts).
 * The same service and tenant as `npm run bench:isolation`; PostgreSQL when
 * DATABASE_URL is set, else PGlite.
 *
 * With `--gc-log=FILE`, the service runs with `--trace-gc` and its
 * standard output (the collector's lines) goes to FILE.
 *
 * `--node-flag=FLAG` (repeatable) runs the service with that node or V8 flag too.
 *
 * `node --import tsx bench/isolation/main-thread-cost.ts [--only=explain] [--calls=3] [--cpu-prof] [--gc-log=FILE] [--node-flag=FLAG]`
 */
import { readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { appendFile, readFile } from 'node:fs/promises';
import { benchDatabase } from '../tools/bench-database.ts';
import { fixed } from '../tools/report-table.ts';
import { mainThreadTasks } from '../tools/main-thread-tasks.ts';
import { newTenantKeys, startIsolationService } from './isolation.bench.ts';
import { FULL_SIZES, OPERATIONS, runOperation, setUpNoisyTenant, type OperationName } from './noisy-tenant.ts';

const only = process.argv.find((arg) => arg.startsWith('--only='))?.slice('--only='.length) as OperationName | undefined;
const calls = Number(process.argv.find((arg) => arg.startsWith('--calls='))?.slice('--calls='.length) ?? 3);
const profileDir = process.argv.includes('--cpu-prof') ? path.join(os.tmpdir(), `rules-bench-main-thread-${process.pid}`) : undefined;
const extraNodeFlags = process.argv.filter((arg) => arg.startsWith('--node-flag=')).map((arg) => arg.slice('--node-flag='.length));
const gcLog = process.argv.find((arg) => arg.startsWith('--gc-log='))?.slice('--gc-log='.length);
const operations = only === undefined ? OPERATIONS.filter((op) => op !== 'publish') : [only];

const db = await benchDatabase('bench-main-thread');
const spans: Array<{ op: OperationName; from: number; to: number }> = [];
try {
  const service = await startIsolationService({
    keys: newTenantKeys(), databaseUrl: db.databaseUrl, redisUrl: process.env.REDIS_URL, publishQuiet: false,
    nodeFlags: [
      ...(profileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-interval=200', `--cpu-prof-dir=${profileDir}`]),
      ...(gcLog === undefined ? [] : ['--trace-gc']),
      ...extraNodeFlags,
    ],
    // The shell runs node with its standard output sent to the log (the path as an argument, never as script text).
    wrapper: gcLog === undefined ? undefined : ['sh', '-c', 'log="$1"; shift; exec "$@" >>"$log"', 'sh', path.resolve(gcLog)],
  });
  try {
    const validate = async (body: string): Promise<void> => {
      await (await fetch(service.service.baseUrl + '/api/v1/validation/validate', { method: 'POST', headers: service.service.headers, body })).text();
    };
    const tenant = await setUpNoisyTenant(service.noisy, FULL_SIZES, validate, (line) => console.log(line), operations);
    const cpu = (): number => service.service.mainThreadCpuMs?.() ?? Number.NaN;
    for (const op of operations) {
      const perCall: number[] = [];
      const threadsBefore = service.service.threadsCpuMs?.();
      const from = Number(process.hrtime.bigint() / 1000n);
      // Marks the calls in the collector's log, which also holds the setup's collections.
      if (gcLog !== undefined) await appendFile(gcLog, `--- ${op}: ${calls} calls\n`);
      for (let i = 0; i < calls; i++) {
        const before = cpu();
        const started = performance.now();
        const answers = await runOperation(tenant, op, 120_000);
        perCall.push(cpu() - before);
        console.log(`  ${op} call ${i + 1}: ${answers.map((a) => a.status < 300 ? a.status : `${a.status} ${a.code ?? ''} (${a.note})`).join(',')} in ${fixed((performance.now() - started) / 1000, 1)} s`);
      }
      if (gcLog !== undefined) await appendFile(gcLog, `--- ${op}: end\n`);
      spans.push({ op, from, to: Number(process.hrtime.bigint() / 1000n) });
      console.log(`${op}: main thread on a core per call ${perCall.map((ms) => fixed(ms, 0)).join(', ')} ms`);
      const threadsAfter = service.service.threadsCpuMs?.();
      if (threadsBefore !== undefined && threadsAfter !== undefined) {
        const spent = (kind: keyof typeof threadsAfter): string => fixed((threadsAfter[kind] - threadsBefore[kind]) / calls, 0);
        console.log(`${op}: per call, on a core: main ${spent('main')} ms, niced threads ${spent('niced')} ms, other threads at normal priority ${spent('normal')} ms`);
      }
    }
  } finally {
    await service.stop();
  }
} finally {
  await db.drop();
}
if (profileDir !== undefined) {
  const [file] = (await readdir(profileDir)).filter((name) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(name));
  const profile = JSON.parse(await readFile(path.join(profileDir, file), 'utf8')) as Parameters<typeof mainThreadTasks>[0];
  for (const { op, from, to } of spans) {
    const tasks = mainThreadTasks(profile, 2, 4).filter((task) => task.startUs >= from && task.startUs <= to);
    console.log(`${op}: span --phase=${from}-${to}`);
    console.log(`${op}: longest main-thread stretches ${tasks.slice(0, 8).map((task) => fixed(task.durationMs, 1)).join(', ')} ms`);
    for (const task of tasks.slice(0, 3)) console.log(`    ${fixed(task.durationMs, 1)} ms: ${task.self.map((f) => `${f.fn} ${fixed(f.ms, 1)}`).join(' | ')}`);
  }
  console.log(`profiles in ${profileDir}`);
}
process.exit(0);
