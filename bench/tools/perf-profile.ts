/**
 * Time profiles of a server process with Linux `perf`, sampling the
 * software clock (`cpu-clock`), so they work on a VM that exposes no
 * hardware counters.
 *
 * Why not `node --cpu-prof`: V8's profiler sees JavaScript only, and under
 * it every service process ran at the same pace, so it could not show
 * what separates a fast process from a slow one (bench/README.md, "One
 * process is one draw"). perf samples every thread of the process, kernel
 * included, and names JIT code when the process was started with
 * `--perf-basic-prof` (V8 then writes `/tmp/perf-<pid>.map`).
 */
import { execFile, spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Node's flag that makes V8 write the JIT code map perf reads (removed by `removeJitMap`). */
export const PERF_NODE_FLAGS = ['--perf-basic-prof'];

/** Where a sample's code lives. */
export type CodeArea = 'kernel' | 'JIT code' | 'node binary' | 'libc' | 'other';

export interface ProfileEntry {
  area: CodeArea;
  /** The function, e.g. `JS:*answer file:///.../server.js:8123:18` or `v8::internal::JsonParser<unsigned char>::ScanJsonString`. */
  symbol: string;
  /** Share of all samples, 0-1. */
  share: number;
}

/**
 * The area of perf's "shared object" column.
 *
 * @example
 * areaOf('[kernel.kallsyms]'); // 'kernel'
 * areaOf('[JIT] tid 4242');    // 'JIT code'
 */
export function areaOf(dso: string): CodeArea {
  if (dso.startsWith('[kernel')) return 'kernel';
  if (dso.startsWith('[JIT]')) return 'JIT code';
  if (dso === 'node') return 'node binary';
  if (dso.startsWith('libc.so')) return 'libc';
  return 'other';
}

/**
 * The rows of `perf report --no-children -n --sort dso,sym -g none -t '|'`
 * (`  11.55% | 2310 |[kernel.kallsyms]  |[k] pvm_irq_enable`); comment and
 * blank lines are skipped. Shares come from the sample counts, not from
 * the printed percentages: those are rounded to 0.01 %, and over the
 * thousand-odd rows of a server's profile the rounding added up to a few
 * per cent. Symbols keep their text but lose C++ argument lists, so that
 * one function's clones and overloads add up.
 */
export function parsePerfReport(text: string): ProfileEntry[] {
  const rows: { area: CodeArea; symbol: string; samples: number }[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const [, samplesField, dso, symbolField] = line.split('|');
    if (symbolField === undefined) continue;
    const samples = Number(samplesField.trim());
    if (!Number.isInteger(samples)) continue;
    rows.push({ area: areaOf(dso.trim()), symbol: simplify(symbolField.trim().replace(/^\[.\] /, '')), samples });
  }
  const total = rows.reduce((sum, row) => sum + row.samples, 0);
  const bySymbol = new Map<string, ProfileEntry>();
  for (const { area, symbol, samples } of rows) {
    const key = `${area}\0${symbol}`;
    const entry = bySymbol.get(key);
    if (entry === undefined) bySymbol.set(key, { area, symbol, share: samples / total });
    else entry.share += samples / total;
  }
  return [...bySymbol.values()].sort((a, b) => b.share - a.share);
}

function simplify(symbol: string): string {
  // `JS:*answer file:///...:8123:18` names JavaScript; keep its location.
  if (symbol.startsWith('JS:') || symbol.startsWith('RegExp:')) return symbol;
  const args = symbol.indexOf('(');
  return args > 0 ? symbol.slice(0, args) : symbol;
}

/** True when `perf record -e cpu-clock` can sample a process here. */
export async function perfAvailable(): Promise<boolean> {
  try {
    await run('perf', ['record', '-q', '-e', 'cpu-clock', '-o', '/dev/null', '--', 'true']);
    return true;
  } catch {
    return false;
  }
}

/**
 * Samples process `pid` (all its threads) while `during` runs and returns
 * its profile.
 *
 * @example
 * const entries = await profileWhile(server.pid, '/tmp/service.data', () => runLoad(...));
 */
export async function profileWhile<T>(
  pid: number, dataFile: string, during: () => Promise<T>, frequencyHz = 4999,
): Promise<{ entries: ProfileEntry[]; result: T }> {
  const recorder = spawn('perf', ['record', '-q', '-e', 'cpu-clock', '-F', String(frequencyHz), '-p', String(pid), '-o', dataFile], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  recorder.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-2000);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    recorder.once('exit', (code, signal) => resolve({ code, signal }));
  });
  // Give perf time to attach, so that the load's first requests are sampled too.
  await new Promise((resolve) => setTimeout(resolve, 300));
  try {
    let result: T;
    try {
      result = await during();
    } finally {
      recorder.kill('SIGINT');
      await exited;
    }
    // perf writes its data and exits on SIGINT, sometimes by the signal itself.
    const { code, signal } = await exited;
    if (code !== 0 && signal !== 'SIGINT') throw new Error(`perf record on process ${pid} exited with ${code ?? signal}: ${stderr}`);
    const { stdout } = await run('perf', ['report', '-i', dataFile, '--no-children', '-n', '--sort', 'dso,sym', '-g', 'none', '--stdio', '-t', '|'], { maxBuffer: 64 * 1024 * 1024 });
    return { entries: parsePerfReport(stdout), result };
  } finally {
    await rm(dataFile, { force: true });
  }
}

/** Removes the JIT code map V8 wrote for `pid` (it grows with every compiled function). */
export async function removeJitMap(pid: number): Promise<void> {
  await rm(`/tmp/perf-${pid}.map`, { force: true });
}
