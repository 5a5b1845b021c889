/**
 * Rate-limit counters in Redis, shared by every instance that uses the same
 * REDIS_URL and key prefix. One round trip per hit: a Lua script increments
 * the key and, on the window's first hit, sets its expiry, atomically (a
 * crash between INCR and PEXPIRE can never leave a counter without one).
 *
 * Never uncounted: when Redis cannot answer (down, not yet connected, no
 * answer within TUNING.redisCommandTimeoutMs of free event-loop time), the
 * hit is counted in this process instead, and so is every hit after it
 * until Redis answers in time again (mode `local`). Budgets then hold per
 * process: approximate across instances, as without REDIS_URL.
 *
 * - Falling back mid-window: every count Redis returns is mirrored into the
 *   local windows, so a tenant goes on from the last count this process
 *   saw (a tenant over its budget stays refused). Hits made meanwhile on
 *   other instances are not seen; a key this process has not counted in
 *   the window starts from zero.
 * - Recovering: while local, Redis is probed (PING) every
 *   TUNING.redisProbeIntervalMs when the connection is open (the client
 *   reconnects on its own when it is not). Counting is shared again only
 *   after TUNING.redisRecoveryProbes probes in a row were answered in time:
 *   a reconnect, or one quick answer, from a Redis that is flapping or
 *   still overloaded would otherwise switch back at once and fall back at
 *   the next slow count, each switch moving budgets between per-process
 *   and shared counts. A late or failed probe, an error or a closed
 *   connection starts the streak again. On recovery the hits counted only
 *   here are added to the shared counters (best effort), so the shared
 *   count goes on from what every instance counted, then counting is
 *   shared again.
 * - A hit whose command timed out is not added again: the command is still
 *   on its way and will most likely count in Redis too.
 *
 * One warning is logged when counting falls back (with the reason) and one
 * info line when it is shared again.
 */
import { Redis } from 'ioredis';
import { performance } from 'node:perf_hooks';
import { loopAwareTimeout } from './loop-aware-timeout.ts';
import { MemoryRateLimitStore } from './memory-store.ts';
import type { RateLimitStore, RateLimitStoreMode, WindowState } from './rate-limit-store.ts';
import { TUNING } from '../tuning.ts';

/** The logger calls this store makes (a pino logger fits). */
export interface RateLimitStoreLogger {
  warn(object: object, message: string): void;
  info(object: object, message: string): void;
}

export interface RedisRateLimitStoreOptions {
  url: string;
  log: RateLimitStoreLogger;
  now?: () => number;
}

// Adds ARGV[2] to the key; returns { count, milliseconds left in the
// window }. PTTL < 0 means the key has no expiry yet (its first hit): the
// window opens now and lasts ARGV[1].
const ADD_SCRIPT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { count, ttl }
`;

type ScriptedRedis = Redis & {
  rulesRateLimitAdd(key: string, windowMs: number, hits: number): Promise<[number, number]>;
};

/** Hits of one window counted only in this process, to be added to Redis once it is back. */
interface UnsharedHits {
  hits: number;
  resetAt: number;
}

/**
 * Fixed-window counters in Redis, counted in this process while Redis is
 * slow or unreachable.
 *
 * @example
 * const store = new RedisRateLimitStore({ url: 'redis://127.0.0.1:6379', log: app.log });
 * await store.ready(1000);
 * const state = await store.hit('rules:rl:t:acme:60000', 60_000);
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly #client: ScriptedRedis;
  readonly #log: RateLimitStoreLogger;
  readonly #now: () => number;
  readonly #local: MemoryRateLimitStore;
  readonly #unshared = new Map<string, UnsharedHits>();
  #mode: RateLimitStoreMode = 'shared';
  #fallbacks = 0;
  #closed = false;
  #probeTimer: NodeJS.Timeout | undefined;
  /** When the probe waiting for its answer was sent (performance.now()). */
  #probeSentAt: number | undefined;
  /** While local: probes answered in time in a row; TUNING.redisRecoveryProbes of them share counting again. */
  #probesInTime = 0;

  constructor(options: RedisRateLimitStoreOptions) {
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
    this.#local = new MemoryRateLimitStore({ now: this.#now });
    this.#client = new Redis(options.url, {
      // Fail fast instead of queueing: a request must never wait for a
      // reconnect. No commandTimeout: ioredis's would fire after an event-
      // loop stall before the answer is read; hits time out on their own.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: TUNING.redisConnectTimeoutMs.value,
      retryStrategy: (attempt) => Math.min(attempt * TUNING.redisReconnectStepMs.value, TUNING.redisMaxReconnectDelayMs.value),
    }) as ScriptedRedis;
    this.#client.defineCommand('rulesRateLimitAdd', { numberOfKeys: 1, lua: ADD_SCRIPT });
    // Without a listener, ioredis would raise connection errors as
    // unhandled 'error' events.
    this.#client.on('error', (error: Error) => this.#fallBack(error));
    this.#client.on('close', () => this.#fallBack(new Error('the connection to Redis closed')));
    // No recovery on 'ready': a reconnect is not yet a Redis that answers in time (the probes decide).
  }

  get mode(): RateLimitStoreMode {
    return this.#mode;
  }

  get fallbacks(): number {
    return this.#fallbacks;
  }

  hit(key: string, windowMs: number): WindowState | Promise<WindowState> {
    if (this.#mode === 'shared') {
      if (this.#client.status === 'ready') return this.#hitShared(key, windowMs);
      this.#fallBack(new Error(`the connection to Redis is ${this.#client.status}`));
    }
    return this.#hitLocally(key, windowMs, true);
  }

  ready(timeoutMs: number): Promise<void> {
    if (this.#client.status === 'ready') return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#client.off('ready', done);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#fallBack(new Error(`Redis was not ready within ${timeoutMs} ms`));
        done();
      }, timeoutMs);
      this.#client.once('ready', done);
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#stopProbing();
    await this.#local.close();
    if (this.#client.status === 'ready') {
      await this.#client.quit().catch(() => this.#client.disconnect());
    } else {
      this.#client.disconnect();
    }
  }

  #hitShared(key: string, windowMs: number): Promise<WindowState> {
    const sentAt = this.#now();
    return new Promise((resolve) => {
      let settled = false;
      const cancel = loopAwareTimeout(TUNING.redisCommandTimeoutMs.value, () => {
        settled = true;
        this.#fallBack(new Error(`Redis did not answer a count within ${TUNING.redisCommandTimeoutMs.value} ms`));
        // The command is still on its way and most likely counts there too: not added again on recovery.
        resolve(this.#hitLocally(key, windowMs, false));
      });
      this.#client.rulesRateLimitAdd(key, windowMs, 1).then(
        ([count, ttl]) => {
          if (settled) return;
          settled = true;
          cancel();
          const resetAt = sentAt + ttl;
          this.#local.mirror(key, count, resetAt);
          resolve({ count, resetAt });
        },
        (error: unknown) => {
          if (settled) return;
          settled = true;
          cancel();
          this.#fallBack(error instanceof Error ? error : new Error(String(error)));
          resolve(this.#hitLocally(key, windowMs, true));
        },
      );
    });
  }

  /** Counts in this process; `unshared`: Redis has not counted it, so it is added there on recovery. */
  #hitLocally(key: string, windowMs: number, unshared: boolean): WindowState {
    const state = this.#local.hit(key, windowMs);
    if (unshared) {
      const entry = this.#unshared.get(key);
      if (entry === undefined) this.#unshared.set(key, { hits: 1, resetAt: state.resetAt });
      else if (entry.resetAt !== state.resetAt) {
        // The window restarted: the hits of the ended one no longer matter.
        entry.hits = 1;
        entry.resetAt = state.resetAt;
      } else entry.hits++;
    }
    return state;
  }

  #fallBack(reason: Error): void {
    if (this.#closed) return;
    // Also while local: an error or a closed connection starts the streak of probes again.
    this.#probesInTime = 0;
    if (this.#mode === 'local') return;
    this.#mode = 'local';
    this.#fallbacks++;
    this.#log.warn(
      { err: reason },
      'rate-limit counting falls back to this process: Redis is slow or unreachable; budgets are counted per process (approximate across instances) until it answers again',
    );
    this.#probeTimer = setInterval(() => this.#probe(), TUNING.redisProbeIntervalMs.value);
    this.#probeTimer.unref();
  }

  #recover(): void {
    if (this.#mode === 'shared' || this.#closed) return;
    this.#mode = 'shared';
    this.#probesInTime = 0;
    this.#stopProbing();
    const added = this.#shareLocalHits();
    this.#log.info({ hitsAdded: added.hits, keys: added.keys }, 'rate-limit counting is shared in Redis again');
  }

  /** Adds the hits counted only here, in windows still open, to the shared counters. */
  #shareLocalHits(): { hits: number; keys: number } {
    const now = this.#now();
    let hits = 0;
    let keys = 0;
    for (const [key, entry] of this.#unshared) {
      const leftMs = Math.ceil(entry.resetAt - now);
      if (leftMs <= 0) continue;
      hits += entry.hits;
      keys++;
      // Best effort: should Redis fail again at once, these hits stay counted only here.
      this.#client.rulesRateLimitAdd(key, leftMs, entry.hits).catch(() => {});
    }
    this.#unshared.clear();
    return { hits, keys };
  }

  /**
   * While local: asks Redis whether it answers in time again, and shares
   * counting again after TUNING.redisRecoveryProbes answers in time in a
   * row; drops a connection that never answers.
   */
  #probe(): void {
    this.#dropEndedWindows();
    if (this.#client.status !== 'ready') {
      // Reconnecting: the probes start counting once it is open again.
      this.#probesInTime = 0;
      return;
    }
    if (this.#probeSentAt !== undefined) {
      if (performance.now() - this.#probeSentAt < TUNING.redisStalledReconnectMs.value) return;
      this.#probeSentAt = undefined;
      this.#probesInTime = 0;
      this.#client.disconnect(true);
      return;
    }
    const sentAt = performance.now();
    this.#probeSentAt = sentAt;
    let late = false;
    const cancel = loopAwareTimeout(TUNING.redisCommandTimeoutMs.value, () => {
      late = true;
    });
    const settle = (answered: boolean): void => {
      cancel();
      if (this.#probeSentAt === sentAt) this.#probeSentAt = undefined;
      if (this.#mode === 'shared' || this.#closed) return;
      this.#probesInTime = answered && !late ? this.#probesInTime + 1 : 0;
      if (this.#probesInTime >= TUNING.redisRecoveryProbes.value) this.#recover();
    };
    this.#client.ping().then(() => settle(true), () => settle(false));
  }

  #dropEndedWindows(): void {
    const now = this.#now();
    for (const [key, entry] of this.#unshared) {
      if (entry.resetAt <= now) this.#unshared.delete(key);
    }
  }

  #stopProbing(): void {
    clearInterval(this.#probeTimer);
    this.#probeTimer = undefined;
    this.#probeSentAt = undefined;
  }
}
