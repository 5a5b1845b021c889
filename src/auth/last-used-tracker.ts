/**
 * `lastUsedAt` of API keys, recorded in memory on each request and written
 * to storage in the background, so authentication never waits on a write.
 */
import type { ApiKeyStore } from '../storage/types.ts';

/** Default interval between background flushes. */
export const LAST_USED_FLUSH_MS = 30_000;

export interface LastUsedLogger {
  warn(o: object, msg?: string): void;
}

export class LastUsedTracker {
  readonly #store: Pick<ApiKeyStore, 'touch'>;
  readonly #logger: LastUsedLogger;
  #pending = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(store: Pick<ApiKeyStore, 'touch'>, logger: LastUsedLogger) {
    this.#store = store;
    this.#logger = logger;
  }

  /** Notes a use of the key now. Cheap: one Map write. */
  record(keyId: string, at: number = Date.now()): void {
    this.#pending.set(keyId, at);
  }

  /** Starts the periodic flush; the timer never keeps the process alive. */
  start(intervalMs: number = LAST_USED_FLUSH_MS): void {
    this.#timer ??= setInterval(() => void this.flush(), intervalMs).unref();
  }

  /** Stops the timer and writes what is pending (shutdown). */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  /** Writes pending uses. A failed write is logged and retried with the next flush. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write());
    return this.#flushing;
  }

  async #write(): Promise<void> {
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
