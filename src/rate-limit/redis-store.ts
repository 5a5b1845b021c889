/**
 * Rate-limit counters in Redis, shared by every instance that uses the same
 * REDIS_URL and key prefix. One round trip per hit: a Lua script increments
 * the key and, on the window's first hit, sets its expiry, atomically (a
 * crash between INCR and PEXPIRE can never leave a counter without one).
 *
 * Availability over exactness: when Redis cannot answer (down, not yet
 * connected, slower than TUNING.redisCommandTimeoutMs), `hit` says so with
 * `undefined` and the request passes. The client reconnects on its own;
 * one warning is logged when counting stops and one line when it resumes.
 */
import { Redis } from 'ioredis';
import type { RateLimitStore, WindowState } from './rate-limit-store.ts';
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

// Returns { count, milliseconds left in the window }. PTTL < 0 means the key
// has no expiry yet (its first hit): the window opens now.
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { count, ttl }
`;

type ScriptedRedis = Redis & {
  rulesRateLimitHit(key: string, windowMs: number): Promise<[number, number]>;
};

/**
 * Fixed-window counters in Redis.
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
  #counting = true;
  #closed = false;

  constructor(options: RedisRateLimitStoreOptions) {
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
    this.#client = new Redis(options.url, {
      // Fail fast instead of queueing: a request must never wait for a
      // reconnect.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: TUNING.redisCommandTimeoutMs.value,
      connectTimeout: TUNING.redisConnectTimeoutMs.value,
      retryStrategy: (attempt) => Math.min(attempt * TUNING.redisReconnectStepMs.value, TUNING.redisMaxReconnectDelayMs.value),
    }) as ScriptedRedis;
    this.#client.defineCommand('rulesRateLimitHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    // Without a listener, ioredis would raise connection errors as
    // unhandled 'error' events.
    this.#client.on('error', (error: Error) => this.#stopCounting(error));
    this.#client.on('ready', () => this.#resumeCounting());
  }

  hit(key: string, windowMs: number): WindowState | undefined | Promise<WindowState | undefined> {
    if (this.#client.status !== 'ready') {
      this.#stopCounting(new Error(`Redis connection is ${this.#client.status}`));
      return undefined;
    }
    const sentAt = this.#now();
    return this.#client.rulesRateLimitHit(key, windowMs).then(
      ([count, ttl]) => ({ count, resetAt: sentAt + ttl }),
      (error: unknown) => {
        this.#stopCounting(error instanceof Error ? error : new Error(String(error)));
        return undefined;
      },
    );
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
        this.#stopCounting(new Error(`Redis was not ready within ${timeoutMs} ms`));
        done();
      }, timeoutMs);
      this.#client.once('ready', done);
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#client.status === 'ready') {
      await this.#client.quit().catch(() => this.#client.disconnect());
    } else {
      this.#client.disconnect();
    }
  }

  #stopCounting(error: Error): void {
    if (!this.#counting || this.#closed) return;
    this.#counting = false;
    this.#log.warn({ err: error }, 'rate-limit counters unavailable (Redis); requests pass unlimited until it returns');
  }

  #resumeCounting(): void {
    if (this.#counting) return;
    this.#counting = true;
    this.#log.info({}, 'rate-limit counters available again (Redis)');
  }
}
