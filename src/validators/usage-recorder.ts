/**
 * Which contexts this process validated with, noted in memory as requests
 * find their validator and written to storage in the background, for the
 * warm start of the next process (warm-start.ts). A request never waits on
 * the database for it: it adds a context name to a set, and a timer writes
 * the set's contents in one statement per thousand contexts, stamped with
 * the time of the write, so a use is recorded at most one flush interval
 * late. A write that fails (the database is away) is logged and its
 * contexts are written with the next flush.
 */
import { PeriodicFlush } from '../storage/periodic-flush.ts';
import type { ContextRef, ContextUsageStore } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';
import type { ValidatorCacheObserver } from './validator-cache.ts';

export interface UsageRecorderLogger {
  warn(o: object, msg?: string): void;
}

export interface ContextUsageRecorderOptions {
  store: Pick<ContextUsageStore, 'recordUse'>;
  log: UsageRecorderLogger;
  now?: () => number;
}

export class ContextUsageRecorder extends PeriodicFlush {
  readonly #store: Pick<ContextUsageStore, 'recordUse'>;
  readonly #log: UsageRecorderLogger;
  readonly #now: () => number;
  // Contexts used since the last flush, by tenant. Only contexts that have
  // a validator are noted, so the sets hold names that exist, never any
  // name a caller cares to send.
  #pending = new Map<string, Set<string>>();

  constructor(options: ContextUsageRecorderOptions) {
    super(TUNING.contextUsageFlushMs.value);
    this.#store = options.store;
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
  }

  /** Notes a use of the context. Cheap: a Map read and a Set add. */
  used(tenantId: string, context: string): void {
    const contexts = this.#pending.get(tenantId);
    if (contexts !== undefined) contexts.add(context);
    else this.#pending.set(tenantId, new Set([context]));
  }

  protected async write(): Promise<void> {
    if (this.#pending.size === 0) return;
    const batch = this.#pending;
    this.#pending = new Map();
    const contexts: ContextRef[] = [];
    for (const [tenantId, names] of batch) {
      for (const context of names) contexts.push({ tenantId, context });
    }
    const usedAt = new Date(this.#now());
    const chunkSize = TUNING.contextUsageWriteChunk.value;
    for (let start = 0; start < contexts.length; start += chunkSize) {
      const chunk = contexts.slice(start, start + chunkSize);
      try {
        await this.#store.recordUse(chunk, usedAt);
      } catch (err) {
        for (const { tenantId, context } of contexts.slice(start)) this.used(tenantId, context);
        this.#log.warn({ err, contexts: contexts.length - start }, 'could not record context use; will retry');
        return;
      }
    }
  }
}

/**
 * The cache observer that also notes uses: a hit, or a load that found the
 * context's validator (a miss that the request then validates with).
 *
 * @example
 * new ValidatorCache({ ...options, observer: notingUses(metrics.validatorCache, recorder) });
 */
export function notingUses(observer: ValidatorCacheObserver, recorder: ContextUsageRecorder): ValidatorCacheObserver {
  return {
    hit(tenantId, context) {
      observer.hit(tenantId, context);
      recorder.used(tenantId, context);
    },
    miss(tenantId, context) {
      observer.miss(tenantId, context);
      if (context !== undefined) recorder.used(tenantId, context);
    },
    compiled: observer.compiled.bind(observer),
  };
}
