/**
 * The management pool: heavy management work (a ruleset compiled for one
 * request, stored-test runs, explain traces, impact replays, import checks,
 * diffs) runs on worker threads (piscina), so the event loop that answers
 * validations never runs it. Validation never waits for the pool.
 *
 * In front of the threads:
 * - Admission: a tenant may have `operationsPerTenant` heavy operations in
 *   flight in this process (waiting or running); one more is refused with
 *   429 and Retry-After, naming the operation, before it reads anything.
 * - Fair turns: tasks wait in one queue per tenant, served round-robin
 *   (tenant-fair-queue.ts), and go to piscina only when a thread is free,
 *   so one tenant's burst delays another tenant's task by at most one task
 *   per thread, never by its whole backlog.
 * - One time budget per operation, from its admission: a task still running
 *   at the deadline is stopped by terminating its thread (piscina's
 *   AbortSignal), so a quadratic rule cannot run past it; the refusal says
 *   how far the task got (task-progress.ts). A task still waiting for a
 *   thread at the deadline is answered 429 when the tenant's own other
 *   operations held it (the tenant sent more than the threads run within a
 *   budget), 503 only when other tenants' did. Operations of the pool change
 *   nothing, so a stopped one leaves nothing behind.
 * - Memory: each thread's heap is bounded (resourceLimits); a task that
 *   runs out of it is refused with 409 naming the bound.
 *
 * Threads are started when work first comes; TUNING.warmThreads of them are
 * then kept, the others end after TUNING.poolIdleTimeoutMs idle
 * (pool-threads.ts).
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { MessagePort } from 'node:worker_threads';
import { PROBLEMS, ProblemError } from '../errors.ts';
import { TUNING } from '../tuning.ts';
import type { AnswerForm, AnswerJson } from './answer-json.ts';
import { PoolThreads } from './pool-threads.ts';
import { describeProgress, newTaskProgress, type TaskProgress } from './task-progress.ts';
import { TenantFairQueue } from './tenant-fair-queue.ts';
import type { TaskAnswer, TaskEnvelope, TaskKind, TaskKinds } from './worker-tasks.ts';

/** A heavy operation as its refusals name it: "the stored-test run stopped ... at test 17 of 400". */
export interface PoolOperation {
  /** Lower case, as it reads in a sentence: `stored-test run`. */
  readonly name: string;
  /** What its tasks go through one by one: `test`, `sample`. */
  readonly unit: string;
  /** The request field to make smaller when it runs out of time, if any (`limit`). */
  readonly path?: string;
  /** Where it was when stopped before its first item; default `while compiling the ruleset`. */
  readonly before?: string;
}

/** Why an operation was refused before it ran, for the metrics. */
export type PoolRefusal = 'tenant_bound' | 'tenant_queue' | 'threads_busy';

/** How a task on a thread ended, for the metrics. */
export type TaskOutcome = 'done' | 'refused' | 'over_time' | 'over_memory' | 'failed';

/** Told about the pool's work (metrics); every method must be cheap. */
export interface ManagementPoolObserver {
  /** A task left its thread after `seconds` there. */
  taskEnded(kind: TaskKind, outcome: TaskOutcome, seconds: number): void;
  /**
   * An operation was refused: `tenant_bound` (429, at admission), `tenant_queue` (429, it waited its
   * budget behind the tenant's own operations) or `threads_busy` (503, behind other tenants' only).
   */
  operationRefused(reason: PoolRefusal): void;
}

export interface ManagementPoolOptions {
  /** Threads at most; 0: one less than the cores, at least 1 (POOL_THREADS). */
  threads: number;
  /** Heap each thread may grow to, in MiB (POOL_WORKER_MEMORY_MB). */
  workerMemoryMb: number;
  /** Heavy operations one tenant may have in flight (OPERATIONS_PER_TENANT). */
  operationsPerTenant: number;
  /** Wall time of one operation (OPERATION_TIME_BUDGET_MS). */
  timeBudgetMs: number;
  /** How long an idle thread past the warm ones lives (default TUNING.poolIdleTimeoutMs). */
  idleTimeoutMs?: number;
  observer?: ManagementPoolObserver;
}

/**
 * Runs one task of the operation on a thread, within what is left of its budget; `transfer` moves
 * ports (or buffers) into it. Given an `answer` form, the thread writes the route's answer from the
 * output as JSON and sends those bytes instead (answer-json.ts).
 */
export interface TaskRunner {
  <K extends TaskKind>(kind: K, input: TaskKinds[K]['input'], transfer?: MessagePort[]): Promise<TaskKinds[K]['output']>;
  <K extends TaskKind>(kind: K, input: TaskKinds[K]['input'], transfer: MessagePort[] | undefined, answer: AnswerForm): Promise<AnswerJson>;
}

/** A task as the operation hands it over: what to run, and whether to answer it as JSON. */
type PoolTask = Omit<TaskEnvelope, 'progress'>;
type TaskOutput = TaskKinds[TaskKind]['output'] | AnswerJson;

interface Waiting {
  start(): void;
}

export class ManagementPool {
  readonly #pool: PoolThreads;
  readonly #threads: number;
  readonly #perTenant: number;
  readonly #budgetMs: number;
  readonly #memoryMb: number;
  readonly #observer: ManagementPoolObserver | undefined;
  readonly #waiting = new TenantFairQueue<Waiting>();
  readonly #inFlight = new Map<string, number>();
  #running = 0;

  constructor(options: ManagementPoolOptions) {
    this.#threads = options.threads > 0 ? options.threads : Math.max(1, availableParallelism() - 1);
    this.#perTenant = options.operationsPerTenant;
    this.#budgetMs = options.timeBudgetMs;
    this.#memoryMb = options.workerMemoryMb;
    this.#observer = options.observer;
    // Stored-test runs, impact replays, checks and diffs give way to the event loop on busy cores.
    this.#pool = new PoolThreads({
      threads: this.#threads, warm: TUNING.warmThreads.value, workerMemoryMb: options.workerMemoryMb,
      idleTimeoutMs: options.idleTimeoutMs ?? TUNING.poolIdleTimeoutMs.value, start: { nice: TUNING.workerThreadNice.value },
    });
  }

  /** Threads the pool may run at once. */
  get threads(): number {
    return this.#threads;
  }

  /** Tasks waiting for a thread, all tenants together (overload shedding reads it). */
  get queued(): number {
    return this.#waiting.size;
  }

  /** Tasks on a thread now. */
  get running(): number {
    return this.#running;
  }

  /** Threads started (busy or idle). */
  get startedThreads(): number {
    return this.#pool.started;
  }

  /**
   * Runs a heavy operation of a tenant: refused at once (ProblemError 429)
   * when the tenant has its most in flight; otherwise `body` runs, reading
   * what it needs and handing tasks to `run`, all within one time budget.
   *
   * @example
   * const output = await pool.operation('acme', STORED_TEST_RUN, async (run) => run('storedTests', await inputOf(request)));
   */
  async operation<T>(tenantId: string, operation: PoolOperation, body: (run: TaskRunner) => Promise<T>): Promise<T> {
    const inFlight = this.#inFlight.get(tenantId) ?? 0;
    if (inFlight >= this.#perTenant) {
      this.#observer?.operationRefused('tenant_bound');
      throw new ProblemError(PROBLEMS.operationsBusy(operation.name, this.#perTenant));
    }
    this.#inFlight.set(tenantId, inFlight + 1);
    const deadline = performance.now() + this.#budgetMs;
    try {
      const run = (kind: TaskKind, input: TaskKinds[TaskKind]['input'], transfer?: MessagePort[], answer?: AnswerForm) =>
        this.#queue(tenantId, operation, deadline, { kind, input, answer }, transfer);
      return await body(run as TaskRunner);
    } finally {
      const left = this.#inFlight.get(tenantId)! - 1;
      if (left > 0) this.#inFlight.set(tenantId, left);
      else this.#inFlight.delete(tenantId);
    }
  }

  /** Ends every thread; tasks running are stopped. */
  async close(): Promise<void> {
    await this.#pool.close();
  }

  #queue(
    tenantId: string, operation: PoolOperation, deadline: number, task: PoolTask, transfer: MessagePort[] | undefined,
  ): Promise<TaskOutput> {
    return new Promise((resolve, reject) => {
      const waiting: Waiting = {
        start: () => {
          clearTimeout(gaveUp);
          this.#runOnThread(operation, deadline, task, transfer).then(resolve, reject).finally(() => {
            this.#running--;
            this.#dispatch();
          });
        },
      };
      const gaveUp = setTimeout(() => {
        if (!this.#waiting.remove(tenantId, waiting)) return;
        reject(this.#waitedTooLong(tenantId, operation));
      }, Math.max(0, deadline - performance.now()));
      this.#waiting.push(tenantId, waiting);
      this.#dispatch();
    });
  }

  /**
   * The refusal of a task that waited its whole budget for a thread. When the tenant has other
   * operations in flight, they are what it waited behind (tenants are served in turn, so another
   * tenant's backlog holds it for at most one task per thread): the tenant sent more than the
   * threads could run within a budget, a 429 telling it to send fewer at once. Only a task that
   * waited behind other tenants' work alone is the service's 503.
   */
  #waitedTooLong(tenantId: string, operation: PoolOperation): ProblemError {
    const others = (this.#inFlight.get(tenantId) ?? 1) - 1;
    if (others > 0) {
      this.#observer?.operationRefused('tenant_queue');
      return new ProblemError(PROBLEMS.operationQueuedTooLong(operation.name, this.#budgetMs, others));
    }
    this.#observer?.operationRefused('threads_busy');
    return new ProblemError(PROBLEMS.managementThreadsBusy(operation.name));
  }

  /** Starts waiting tasks, in turn, while threads are free. */
  #dispatch(): void {
    while (this.#running < this.#threads) {
      const next = this.#waiting.shift();
      if (next === undefined) return;
      this.#running++;
      next.start();
    }
  }

  async #runOnThread(operation: PoolOperation, deadline: number, task: PoolTask, transfer: MessagePort[] | undefined): Promise<TaskOutput> {
    const { kind } = task;
    const progress = newTaskProgress();
    const budget = new AbortController();
    const timer = setTimeout(() => budget.abort(), Math.max(0, deadline - performance.now()));
    const started = performance.now();
    let outcome: TaskOutcome = 'failed';
    try {
      const envelope: TaskEnvelope = { ...task, progress };
      const answer = await (this.#pool.run(envelope, { signal: budget.signal, transferList: transfer }) as Promise<TaskAnswer>);
      outcome = answer.ok ? 'done' : 'refused';
      if (!answer.ok) throw new ProblemError(answer.problem);
      return answer.output;
    } catch (error) {
      if (outcome === 'refused') throw error;
      throw this.#budgetRefusal(error, budget.signal.aborted, operation, progress, (result) => {
        outcome = result;
      });
    } finally {
      clearTimeout(timer);
      this.#observer?.taskEnded(kind, outcome, (performance.now() - started) / 1000);
    }
  }

  /** The refusal of a task its thread stopped: past its time or its memory; anything else as it was. */
  #budgetRefusal(error: unknown, pastDeadline: boolean, operation: PoolOperation, progress: TaskProgress, outcome: (result: TaskOutcome) => void): unknown {
    // Aborted by its deadline; an abort of the pool closing with the app is an error like any other.
    if (pastDeadline && error instanceof Error && error.name === 'AbortError') {
      outcome('over_time');
      return new ProblemError(PROBLEMS.operationOverTimeBudget(operation.name, this.#budgetMs, reached(operation, progress), operation.path));
    }
    if ((error as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      outcome('over_memory');
      return new ProblemError(PROBLEMS.operationOverMemoryBudget(operation.name, this.#memoryMb, reached(operation, progress)));
    }
    return error;
  }
}

function reached(operation: PoolOperation, progress: TaskProgress): string {
  return describeProgress(progress, operation.unit, operation.before ?? 'while compiling the ruleset');
}
