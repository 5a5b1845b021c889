/**
 * The worker threads of the management pool and of the compile lane: a
 * piscina pool made on the first task, not before, that then keeps
 * `warm` threads started for good and ends the others after
 * `idleTimeoutMs` idle.
 *
 * Why keep any: a thread's start runs partly on the event loop (the
 * Worker's creation, its first messages), about 10 ms of the main
 * thread's time on an idle machine and 10-25 ms of event-loop delay on a
 * busy one, and the first task waits 0.3-0.5 s for the thread to load the
 * worker. With every thread ending after an idle spell, each burst of
 * management work after a pause started one while other tenants'
 * validations were being answered. Why start none before the first task:
 * an instance (or a test's app) that is never managed holds no thread.
 * The cost of a warm thread: its heap and the loaded worker, 35-50 MB of
 * resident memory each (measured with the bundle's worker, idle after a
 * task).
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';

// Run from the sources (tsx, the tests), the worker is the .ts file beside
// this one and its thread loads tsx; from the bundle, this code is in
// dist/server.js and the worker is its sibling entry, dist/management-worker.js.
const FROM_SOURCES = import.meta.url.endsWith('.ts');
const WORKER_FILE = new URL(FROM_SOURCES ? './management-worker.ts' : './management-worker.js', import.meta.url);
const WORKER_EXEC_ARGV = FROM_SOURCES
  ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href]
  : ['--enable-source-maps'];

/** What a thread of the management worker is told at its start (its `workerData`). */
export interface ThreadStart {
  /** The nice value the thread lowers its scheduling priority to (thread-priority.ts); 0 leaves it. */
  nice: number;
}

export interface PoolThreadsOptions {
  /** Threads at most. */
  threads: number;
  /** Threads kept once started (at most `threads`). */
  warm: number;
  /** Heap each thread may grow to, in MiB. */
  workerMemoryMb: number;
  /** How long a thread past the warm ones lives idle. */
  idleTimeoutMs: number;
  start: ThreadStart;
}

/**
 * Threads running the management worker's tasks, one task at a time each,
 * heap bounded.
 *
 * @example
 * const threads = new PoolThreads({ threads: 1, warm: 1, workerMemoryMb: 256, idleTimeoutMs: 30_000, start: { nice: 0 } });
 * const answer = await threads.run(envelope);
 */
export class PoolThreads {
  readonly #options: PoolThreadsOptions;
  #piscina: Piscina | undefined;
  #closed = false;

  constructor(options: PoolThreadsOptions) {
    this.#options = options;
  }

  /** Threads started (busy or idle). */
  get started(): number {
    return this.#piscina?.threads.length ?? 0;
  }

  /** Runs a task on a thread, starting the pool on the first. */
  run(task: unknown, options?: Parameters<Piscina['run']>[1]): Promise<unknown> {
    if (this.#closed) return Promise.reject(new Error('the worker threads were closed'));
    this.#piscina ??= this.#startPool();
    return this.#piscina.run(task, options) as Promise<unknown>;
  }

  /** Ends every thread; tasks running are stopped. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#piscina?.destroy();
  }

  #startPool(): Piscina {
    const { threads, warm, workerMemoryMb, idleTimeoutMs, start } = this.#options;
    return new Piscina({
      workerData: start,
      filename: WORKER_FILE.href,
      minThreads: Math.min(warm, threads),
      maxThreads: threads,
      idleTimeout: idleTimeoutMs,
      concurrentTasksPerWorker: 1,
      resourceLimits: { maxOldGenerationSizeMb: workerMemoryMb },
      execArgv: WORKER_EXEC_ARGV,
    });
  }
}
