/**
 * The compile lane: the threads that compile live validators (cache
 * misses, the warm start, recompiles after a change notice, publishes,
 * rollbacks, archives, imports, POST /recompile), so that no compile runs on the
 * event loop that answers validations. The main thread only installs what
 * a thread sends back (validators/compile-validator.ts `installValidator`).
 *
 * A lane of its own, apart from the management pool (management-pool.ts):
 * a cold context's validations wait for its compile, and must not wait
 * behind another tenant's stored-test run or impact replay, which can hold
 * a management thread for the whole operation budget. Here a compile
 * waits at most for the compiles already running.
 *
 * Two priorities, each with threads of its own (COMPILE_THREADS each) and
 * a queue served fairly between tenants (tenant-fair-queue.ts):
 * - `validation`: compiles that requests wait for, or soon will (cache
 *   misses, the warm start, recompiles after a change notice), on threads
 *   at the default scheduling priority;
 * - `change`: compiles of a lifecycle operation (publish, rollback,
 *   archive, import, POST /recompile), whose caller is an admin waiting
 *   for a write, on threads niced as the management threads are
 *   (TUNING.workerThreadNice): no validation waits for them, and a
 *   5,000-rule compile at the default priority held a core for seconds
 *   that the event loop then shared with it (a publish put B's p99 at 3x
 *   its idle p99 in bench:isolation). Apart from the `validation` threads,
 *   so that a cold context never waits behind a publish.
 * A compile already running is never stopped: the ruleset limits bound
 * what one compile costs (a 5,000-rule context compiles in seconds).
 *
 * Threads run the same entry as the management pool
 * (management-worker.ts, task kind `compile`), start when work first
 * comes, and are kept as the pool's are (pool-threads.ts: TUNING.warmThreads
 * of each priority stay, the others end after TUNING.poolIdleTimeoutMs
 * idle); their heap is bounded like the management threads'.
 */
import { performance } from 'node:perf_hooks';
import type { CompilerLimits } from '../../compiler/types.ts';
import type { LiveRuleset } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';
import type { CompilePriority, ValidatorBuild } from '../validators/compile-validator.ts';
import type { ManagementPoolObserver, TaskOutcome } from './management-pool.ts';
import { PoolThreads } from './pool-threads.ts';
import { newTaskProgress } from './task-progress.ts';
import { runInSlices } from '../time-slices.ts';
import type { RuleDefinition } from '../../compiler/types.ts';
import { TenantFairQueue } from './tenant-fair-queue.ts';
import type { TaskAnswer, TaskEnvelope } from './worker-tasks.ts';

export interface CompileLaneOptions {
  /** Threads at most (COMPILE_THREADS). */
  threads: number;
  /** Heap each thread may grow to (POOL_WORKER_MEMORY_MB). */
  workerMemoryMb: number;
  /** How long an idle thread past the warm ones lives (default TUNING.poolIdleTimeoutMs). */
  idleTimeoutMs?: number;
  /** Told when a compile leaves its thread (rules_pool_tasks_total{kind="compile"}). */
  observer?: Pick<ManagementPoolObserver, 'taskEnded'>;
}

/** The threads of one priority and the compiles waiting for them. */
interface PriorityThreads {
  readonly pool: PoolThreads;
  readonly threads: number;
  readonly waiting: TenantFairQueue<() => void>;
  running: number;
}

export class CompileLane {
  readonly #lanes: Record<CompilePriority, PriorityThreads>;
  readonly #observer: CompileLaneOptions['observer'];

  constructor(options: CompileLaneOptions) {
    const threads = Math.max(1, options.threads);
    this.#observer = options.observer;
    const lane = (nice: number): PriorityThreads => ({
      pool: new PoolThreads({
        threads, warm: TUNING.warmThreads.value, workerMemoryMb: options.workerMemoryMb,
        idleTimeoutMs: options.idleTimeoutMs ?? TUNING.poolIdleTimeoutMs.value, start: { nice },
      }),
      threads,
      waiting: new TenantFairQueue(),
      running: 0,
    });
    this.#lanes = {
      // At the default priority: validations of a cold context wait for its compile, which must not
      // starve behind the very load it would answer (a niced compile of 5,000 rules took 20 s, not 5,
      // while one tenant's validations kept both cores busy).
      validation: lane(0),
      // Niced as the management threads are: an admin's publish waits for its compile, no validation
      // does (the version cached answers until the install), so it runs in what the event loop leaves.
      change: lane(TUNING.workerThreadNice.value),
    };
  }

  /** Compiles waiting for a thread. */
  get queued(): number {
    return this.#lanes.validation.waiting.size + this.#lanes.change.waiting.size;
  }

  /** Compiles on a thread now. */
  get running(): number {
    return this.#lanes.validation.running + this.#lanes.change.running;
  }

  /** Threads started (busy or idle). */
  get startedThreads(): number {
    return this.#lanes.validation.pool.started + this.#lanes.change.pool.started;
  }

  /**
   * Compiles `ruleset` on a thread of its priority, in its turn; resolves
   * with what `installValidator` installs (compile errors included),
   * rejects only when the thread fails (out of memory, the lane closing).
   *
   * @example
   * const outcome = await installValidator(ruleset, await lane.compile(ruleset, limits, 'validation'));
   */
  compile(ruleset: LiveRuleset, limits: Partial<CompilerLimits>, priority: CompilePriority): Promise<ValidatorBuild> {
    const lane = this.#lanes[priority];
    return new Promise((resolve, reject) => {
      lane.waiting.push(ruleset.tenantId, () => {
        this.#runOnThread(lane.pool, ruleset, limits).then(resolve, reject).finally(() => {
          lane.running--;
          this.#dispatch(lane);
        });
      });
      this.#dispatch(lane);
    });
  }

  /** Ends every thread; compiles running are stopped (their callers get an error). */
  async close(): Promise<void> {
    await Promise.all([this.#lanes.validation.pool.close(), this.#lanes.change.pool.close()]);
  }

  /** Starts a priority's waiting compiles while its threads are free. */
  #dispatch(lane: PriorityThreads): void {
    while (lane.running < lane.threads) {
      const next = lane.waiting.shift();
      if (next === undefined) return;
      lane.running++;
      next();
    }
  }

  async #runOnThread(pool: PoolThreads, ruleset: LiveRuleset, limits: Partial<CompilerLimits>): Promise<ValidatorBuild> {
    const started = performance.now();
    let outcome: TaskOutcome = 'failed';
    try {
      const rulesJson = await runInSlices(rulesAsJson(ruleset.rules), TUNING.installSliceMs.value);
      const envelope: TaskEnvelope<'compile'> = { kind: 'compile', input: { rulesJson, limits }, progress: newTaskProgress() };
      const answer = await (pool.run(envelope) as Promise<TaskAnswer<'compile'>>);
      // The task returns compile errors as output; a refusal would be a bug in it.
      if (!answer.ok) throw new Error(`compile task refused: ${answer.problem.detail}`);
      // No answer form was asked for, so the output comes back as the task gave it.
      const build = answer.output as ValidatorBuild;
      outcome = build.generated === undefined ? 'refused' : 'done';
      return build;
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY') outcome = 'over_memory';
      throw error;
    } finally {
      this.#observer?.taskEnded('compile', outcome, (performance.now() - started) / 1000);
    }
  }
}

/** Rules a message carries as JSON text, this many to a string. */
const RULES_PER_CHUNK = 50;

/**
 * The rules as JSON text, a chunk of them a step. Posting the rules
 * themselves to the thread would serialize all of them in one run of the
 * event loop (postMessage's structured clone is synchronous: 30 to 60 ms
 * for 5,000 rules); a message of strings costs a copy of their bytes.
 */
function* rulesAsJson(rules: readonly RuleDefinition[]): Generator<void, string[], void> {
  const chunks: string[] = [];
  for (let i = 0; i < rules.length; i += RULES_PER_CHUNK) {
    chunks.push(JSON.stringify(rules.slice(i, i + RULES_PER_CHUNK)));
    yield;
  }
  return chunks;
}
