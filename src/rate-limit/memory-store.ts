/**
 * Rate-limit counters in this process. A hit is two Map operations and no
 * allocation once a key's window exists; expired windows are swept on a
 * timer so keys that stop arriving (client addresses) do not pile up.
 *
 * Also the Redis store's fallback: it mirrors each count Redis returns
 * here (`mirror`), so that when Redis becomes slow or unreachable counting
 * goes on from the last count this process saw, not from zero.
 */
import type { RateLimitStore, RateLimitStoreMode, WindowState } from './rate-limit-store.ts';
import { TUNING } from '../tuning.ts';

interface MutableWindow {
  count: number;
  resetAt: number;
}

export interface MemoryRateLimitStoreOptions {
  /** How often expired windows are dropped. */
  sweepIntervalMs?: number;
  now?: () => number;
}

/**
 * Fixed-window counters in a Map.
 *
 * @example
 * const store = new MemoryRateLimitStore();
 * const state = store.hit('tenant:acme', 60_000); // { count: 1, resetAt: now + 60 s }
 */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly #windows = new Map<string, MutableWindow>();
  readonly #now: () => number;
  readonly #sweeper: NodeJS.Timeout;
  /** Always in this process. */
  readonly mode: RateLimitStoreMode = 'local';
  /** Nothing to fall back from. */
  readonly fallbacks = 0;

  constructor(options: MemoryRateLimitStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#sweeper = setInterval(() => this.#sweep(), options.sweepIntervalMs ?? TUNING.memoryStoreSweepMs.value);
    this.#sweeper.unref();
  }

  /** Windows held now (tests check the sweep with it). */
  get size(): number {
    return this.#windows.size;
  }

  hit(key: string, windowMs: number): WindowState {
    const now = this.#now();
    let window = this.#windows.get(key);
    if (window === undefined) {
      window = { count: 0, resetAt: now + windowMs };
      this.#windows.set(key, window);
    } else if (window.resetAt <= now) {
      window.count = 0;
      window.resetAt = now + windowMs;
    }
    window.count++;
    // The live object is handed out read-only: no allocation per hit.
    return window;
  }

  /**
   * Sets a key's window to a state counted elsewhere (a count Redis
   * returned), so that local counting would go on from it.
   */
  mirror(key: string, count: number, resetAt: number): void {
    const window = this.#windows.get(key);
    if (window === undefined) {
      this.#windows.set(key, { count, resetAt });
    } else {
      window.count = count;
      window.resetAt = resetAt;
    }
  }

  ready(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#windows.clear();
    return Promise.resolve();
  }

  #sweep(): void {
    const now = this.#now();
    for (const [key, window] of this.#windows) {
      if (window.resetAt <= now) this.#windows.delete(key);
    }
  }
}
