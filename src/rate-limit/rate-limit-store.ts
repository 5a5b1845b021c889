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
 * A counter store. `hit` is synchronous when it can be (in memory), so the
 * hot path needs no promise; `undefined` means the store cannot count now
 * and the caller lets the request pass (fail open).
 */
export interface RateLimitStore {
  hit(key: string, windowMs: number): WindowState | undefined | Promise<WindowState | undefined>;
  /** Resolves once the store can count, or after `timeoutMs` (it then keeps trying on its own). */
  ready(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}
