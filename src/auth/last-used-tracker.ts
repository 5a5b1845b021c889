/**
 * `lastUsedAt` of API keys, recorded in memory on each request and written
 * to storage in the background, so authentication never waits on a write.
 */
import { PeriodicFlush } from '../storage/periodic-flush.ts';
import type { ApiKeyStore } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';

export interface LastUsedLogger {
  warn(o: object, msg?: string): void;
}

/** Pending uses are written every TUNING.lastUsedFlushMs; a failed write is logged and retried with the next flush. */
export class LastUsedTracker extends PeriodicFlush {
  readonly #store: Pick<ApiKeyStore, 'touch'>;
  readonly #logger: LastUsedLogger;
  #pending = new Map<string, number>();

  constructor(store: Pick<ApiKeyStore, 'touch'>, logger: LastUsedLogger) {
    super(TUNING.lastUsedFlushMs.value);
    this.#store = store;
    this.#logger = logger;
  }

  /** Notes a use of the key now. Cheap: one Map write. */
  record(keyId: string, at: number = Date.now()): void {
    this.#pending.set(keyId, at);
  }

  protected async write(): Promise<void> {
    if (this.#pending.size === 0) return;
    const batch = this.#pending;
    this.#pending = new Map();
    const usedAt = new Map<string, Date>();
    for (const [keyId, at] of batch) usedAt.set(keyId, new Date(at));
    try {
      await this.#store.touch(usedAt);
    } catch (err) {
      for (const [keyId, at] of batch) {
        if (!this.#pending.has(keyId)) this.#pending.set(keyId, at);
      }
      this.#logger.warn({ err }, 'could not record API key use; will retry');
    }
  }
}
