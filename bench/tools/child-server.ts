/**
 * An HTTP server in a child process, so the load generator never shares
 * its event loop. The child gets a free port on 127.0.0.1 through PORT, is
 * ready once a GET of `readyPath` answers 200, and is stopped with SIGTERM
 * (SIGKILL if it has not exited a few seconds later). Children still
 * running when the benchmark process exits are killed, so a crashed or
 * interrupted run leaves nothing behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export interface ChildServerOptions {
  /** Shown in errors. */
  name: string;
  /** The entry point: a TypeScript file runs with `node --import tsx`, a JavaScript file (the service's bundle) with plain node. */
  entry: string;
  /** The child's whole environment, besides PORT, HOST and PATH. */
  env: Record<string, string>;
  readyPath?: string;
  /** Give up (and kill the child) when it is not ready by then. */
  startTimeoutMs?: number;
  /** Extra node flags, e.g. `--cpu-prof`. */
  nodeFlags?: string[];
  /** A command that runs node, e.g. `['valgrind', '--tool=callgrind']` (its pid is the child's). */
  wrapper?: string[];
}

export interface ChildServer {
  readonly name: string;
  readonly pid: number;
  readonly baseUrl: string;
  /** Processes the child started itself (cluster workers), read from /proc; 0 elsewhere. */
  childProcessCount(): number;
  /**
   * CPU time (user + system, ms) used so far by the child and the processes
   * it started, from /proc; NaN elsewhere. Clock-tick resolution (10 ms).
   */
  cpuTimeMs(): number;
  /**
   * CPU time (ms) the child's main thread (its JavaScript event loop) has
   * had so far, from /proc's scheduler statistics (nanoseconds); NaN
   * elsewhere. Unlike wall time, it does not grow while the thread waits
   * for a core, so it measures the thread's own work on a loaded machine.
   */
  mainThreadCpuMs?(): number;
  /**
   * Time on a core of the process's threads by kind (ms): the main thread; the threads that lowered their priority (nice > 0: the
   * management threads); every other thread (nice 0: V8's platform threads, which run every isolate's parallel and concurrent GC and
   * background compiles, the compile lane, libuv's pool). What the third spends competes with the main thread as an equal.
   */
  threadsCpuMs?(): { main: number; niced: number; normal: number };
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      for (const child of running) child.kill('SIGKILL');
      // The handler is gone (once): raised again, the signal ends this process as it would have.
      process.kill(process.pid, signal);
    });
  }
}

/** A port that was free a moment ago (the child binds it right after). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address === null || typeof address === 'string') reject(new Error('no port assigned'));
        else resolve(address.port);
      });
    });
  });
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts `entry` in a child process and waits until it answers.
 *
 * @example
 * const bare = await startChildServer({ name: 'bare', entry: 'bench/tools/bare-server.ts', env: {} });
 * await bare.stop();
 */
export async function startChildServer(options: ChildServerOptions): Promise<ChildServer> {
  installExitHook();
  const port = await freePort();
  const loader = options.entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const nodeArgs = [...(options.nodeFlags ?? []), ...loader, options.entry];
  const [command, ...args] = [...(options.wrapper ?? []), process.execPath, ...nodeArgs];
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH ?? '', ...options.env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  // Kept for error messages only, and bounded: a chatty child must not grow the parent's heap.
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      running.delete(child);
      resolve();
    });
  });

  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async (graceMs = 5000): Promise<void> => {
    if (exited !== undefined) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exit;
    clearTimeout(timer);
  };

  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  for (;;) {
    if (exited !== undefined) {
      throw new Error(`${options.name} exited before it was ready (code ${exited.code}, signal ${exited.signal}):\n${output}`);
    }
    if (Date.now() > deadline) {
      await stop(0);
      throw new Error(`${options.name} was not ready within ${options.startTimeoutMs ?? 60_000} ms:\n${output}`);
    }
    try {
      const response = await fetch(baseUrl + (options.readyPath ?? '/health/live'), { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) break;
    } catch {
      // Not listening yet.
    }
    await delay(100);
  }

  return {
    name: options.name,
    pid: child.pid!,
    baseUrl,
    childProcessCount: () => childPids(child.pid!).length,
    cpuTimeMs: () => [child.pid!, ...childPids(child.pid!)].reduce((sum, pid) => sum + processCpuMs(pid), 0),
    mainThreadCpuMs: () => threadCpuMs(child.pid!, child.pid!),
    threadsCpuMs: () => threadsCpuMs(child.pid!),
    stop,
  };
}

/** Clock ticks per second of /proc/<pid>/stat: USER_HZ, 100 on every Linux that Node supports. */
const USER_HZ = 100;

/** Time on a core of one thread (ms): the first field of its schedstat, in ns; NaN when /proc cannot tell. */
function threadCpuMs(pid: number, tid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

/** Time on a core of a process's threads (ms) by kind: see ChildServer.threadsCpuMs. */
function threadsCpuMs(pid: number): { main: number; niced: number; normal: number } {
  const sums = { main: 0, niced: 0, normal: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`).map(Number)) {
    try {
      // Fields resume after the last ')'; nice is field 19 of the line, the 17th after the command.
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      const ms = threadCpuMs(pid, tid);
      if (tid === pid) sums.main += ms;
      else if (nice > 0) sums.niced += ms;
      else sums.normal += ms;
    } catch {
      // The thread ended meanwhile.
    }
  }
  return sums;
}

/** utime + stime of one process (ms), NaN when /proc cannot tell. */
function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses; fields resume after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
  } catch {
    return Number.NaN;
  }
}

/** Direct children of a process, from /proc (Linux). */
function childPids(pid: number): number[] {
  try {
    const pids: number[] = [];
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (text !== '') pids.push(...text.split(/\s+/).map(Number));
    }
    return pids;
  } catch {
    return [];
  }
}
