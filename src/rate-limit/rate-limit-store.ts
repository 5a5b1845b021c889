/**
 * Where rate-limit counters live: in this process, or in Redis so that all
 * instances share them. Both count in fixed windows: the first hit on a key
 * opens a window of `windowMs`; every hit in it adds one; the window (and
 * the count) ends `windowMs` after it opened.
 */

/** A counter's state right after a hit. */
export interface WindowState {
  /** Hits in the current window, this one included. */
  readonly count: number;
  /** Epoch milliseconds at which the window ends and the count restarts. */
  readonly resetAt: number;
}

/**
 * Where counting happens right now: `shared` in Redis, for every instance;
 * `local` in this process alone (no REDIS_URL, or Redis slow or down).
 */
export type RateLimitStoreMode = 'shared' | 'local';

/**
 * A counter store. `hit` is synchronous when it can be (in memory), so the
 * hot path needs no promise. Every hit is counted somewhere: a store that
 * cannot reach its shared counters counts in this process instead, so a
 * request never passes uncounted, and the promise never rejects.
 */
export interface RateLimitStore {
  hit(key: string, windowMs: number): WindowState | Promise<WindowState>;
  /** Where hits are counted now (the metric rules_rate_limit_store_mode). */
  readonly mode: RateLimitStoreMode;
  /** Times counting fell back from shared to local since the start. */
  readonly fallbacks: number;
  /** Resolves once the store can count, or after `timeoutMs` (it then keeps trying on its own). */
  ready(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}
