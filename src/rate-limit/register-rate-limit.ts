/**
 * Rate limiting of everything under /api/v1 (docs/api.md).
 *
 * Two budgets, and the hook order that keeps them apart:
 * - Authenticated requests spend their tenant's budget. That hook is an
 *   onRequest hook registered right after authentication, so it runs only
 *   once the tenant is known and before the body is read: a request over
 *   budget costs no parsing. A batch or a transaction is one request.
 * - Requests the auth hook refuses never reach that hook (the 401 ends the
 *   chain), so they can never spend a tenant's budget, whatever tenant they
 *   name. They are counted per client address in onSend, where the refusal
 *   is visible; past the address budget the refusal is answered with 429
 *   instead of 401. A valid key from the same address is unaffected.
 *
 * Both budgets are fixed windows (see rate-limit-store.ts), in memory or in
 * Redis when REDIS_URL is set; while Redis is slow or down they are counted
 * in this process (redis-store.ts), so every request is counted and every
 * counted answer carries the headers. Responses carry RateLimit-Limit,
 * RateLimit-Remaining and RateLimit-Reset (seconds); a 429 also carries
 * Retry-After (whole seconds, at least 1).
 *
 * Why not @fastify/rate-limit: its hooks are added per route, so requests
 * refused by the auth hook (and unknown /api/v1 paths) never reach it, and
 * the per-address budget for them would need a second mechanism anyway; its
 * hook awaits several promises per request even in memory, where this one
 * completes synchronously; and its skipOnError fails open silently, where
 * budgets must hold while Redis is away.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onSendHookHandler } from 'fastify';
import { isAuthenticatedPath } from '../auth/auth-hook.ts';
import type { Config } from '../config.ts';
import { ERRORS, PROBLEMS, problemBody } from '../errors.ts';
import { sendProblem } from '../http/error-handler.ts';
import { accountedForByFastLane } from '../http/route-hooks.ts';
import type { TenantStore } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';
import { addressBucket } from './client-address.ts';
import { MemoryRateLimitStore } from './memory-store.ts';
import type { RateLimitStore, RateLimitStoreMode, WindowState } from './rate-limit-store.ts';
import { RedisRateLimitStore } from './redis-store.ts';
import { TenantPolicies, type RateLimitPolicy } from './tenant-policies.ts';

/** Which budget refused a request. */
export type RateLimitScope = 'tenant' | 'address';

/** Where the counters are and how often they fell back, read when metrics are scraped. */
export interface RateLimitStoreStatus {
  readonly mode: RateLimitStoreMode;
  readonly fallbacks: number;
}

/** Told about every request refused with 429, and given the store to report on (metrics). */
export interface RateLimitObserver {
  rejected(scope: RateLimitScope, tenantId: string | undefined): void;
  watchStore(store: RateLimitStoreStatus): void;
}

export interface RateLimitOptions {
  config: Pick<Config, 'rateLimitMax' | 'rateLimitWindowMs' | 'redisUrl' | 'redisKeyPrefix'>;
  tenants: Pick<TenantStore, 'getPolicy'>;
  observer?: RateLimitObserver;
  /** Counter store; default Redis when config.redisUrl is set, else memory. */
  store?: RateLimitStore;
  /** How long buildApp waits for Redis before starting without it. */
  readyTimeoutMs?: number;
}

/** The parts tests, operators' tools and the validation fast lane reach into. */
export interface RateLimiter {
  readonly store: RateLimitStore;
  readonly policies: TenantPolicies;
  /**
   * For a request whose tenant budget was spent before Fastify saw it (the
   * validation fast lane spends it as this module's hook would, then hands
   * some requests to Fastify): the hook admits or refuses it on that count
   * instead of spending a second time.
   */
  handOverSpent(request: IncomingMessage, policy: RateLimitPolicy, state: WindowState): void;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** True once the request was counted against a budget. */
    rateLimitCounted: boolean;
    /** The tenant's sampling rate, from the policy the request was counted under (0 until then, and off). */
    samplingRate: number;
  }
}

/** The budget headers every counted answer carries (the validation fast lane writes them too). */
export const HEADER_LIMIT = 'ratelimit-limit';
export const HEADER_REMAINING = 'ratelimit-remaining';
export const HEADER_RESET = 'ratelimit-reset';

/**
 * Installs both budgets. Call it right after `registerAuth`, before the
 * routes, on the root instance.
 *
 * @example
 * registerAuth(app, { cache, lastUsed });
 * registerRateLimit(app, { config, tenants: storage.tenants, observer: metrics.rateLimit });
 */
export function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): RateLimiter {
  const { config, observer } = options;
  const store: RateLimitStore =
    options.store ??
    (config.redisUrl !== undefined
      ? new RedisRateLimitStore({ url: config.redisUrl, log: app.log })
      : new MemoryRateLimitStore());
  const policies = new TenantPolicies({
    tenants: options.tenants,
    defaults: { max: config.rateLimitMax, windowMs: config.rateLimitWindowMs },
    keyPrefix: config.redisKeyPrefix,
    log: app.log,
  });
  const addressMax = config.rateLimitMax;
  const addressWindowMs = config.rateLimitWindowMs;
  const addressKeyPrefix = `${config.redisKeyPrefix}rl:a:`;

  app.decorateRequest('rateLimitCounted', false);
  app.decorateRequest('samplingRate', 0);
  // Keyed by Node's request, so nothing is added per request to the objects Node and Fastify make.
  const spentEarlier = new WeakMap<IncomingMessage, { policy: RateLimitPolicy; state: WindowState }>();
  observer?.watchStore(store);

  const admitTenant = (
    request: FastifyRequest,
    reply: FastifyReply,
    done: HookHandlerDoneFunction,
    tenantId: string,
    policy: RateLimitPolicy,
    state: WindowState,
    rechecked = false,
  ): void => {
    // The validation routes sample by the policy the request was counted under.
    request.samplingRate = policy.samplingRate;
    if (state.count > policy.max && !rechecked) {
      // Refused on a policy past its TTL (a tenant idle since an override change): read it first.
      const current = policies.current(tenantId);
      if (current !== policy) {
        const reconsider = (fresh: RateLimitPolicy): void => {
          // Same window: the hit already counted there; another window: count it there.
          if (fresh.key === policy.key) admitTenant(request, reply, done, tenantId, fresh, state, true);
          else spendTenant(request, reply, done, tenantId, fresh, true);
        };
        if (current instanceof Promise) current.then(reconsider, () => admitTenant(request, reply, done, tenantId, policy, state, true));
        else reconsider(current);
        return;
      }
    }
    const max = policy.max;
    const resetSeconds = secondsUntil(state.resetAt);
    setHeaders(reply, max, state.count, resetSeconds);
    if (state.count <= max) {
      done();
      return;
    }
    observer?.rejected('tenant', tenantId);
    sendProblem(request, reply, PROBLEMS.tenantBudgetSpent(max, resetSeconds));
  };

  const spendTenant = (
    request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction, tenantId: string, policy: RateLimitPolicy, rechecked = false,
  ): void => {
    const state = store.hit(policy.key, policy.windowMs);
    if (state instanceof Promise) {
      state.then((resolved) => admitTenant(request, reply, done, tenantId, policy, resolved, rechecked), done);
      return;
    }
    admitTenant(request, reply, done, tenantId, policy, state, rechecked);
  };

  // The fast lane spends the same store's count with the same policy, writes the same headers, and hands
  // over its count (handOverSpent) with a request it hands to Fastify.
  app.addHook('onRequest', accountedForByFastLane((request, reply, done) => {
    const auth = request.auth;
    // Routes outside /api/v1, and requests the auth hook let through
    // without a key (none today): nothing to spend.
    if (auth === null) {
      done();
      return;
    }
    request.rateLimitCounted = true;
    const earlier = spentEarlier.get(request.raw);
    if (earlier !== undefined) {
      admitTenant(request, reply, done, auth.tenantId, earlier.policy, earlier.state);
      return;
    }
    const policy = policies.get(auth.tenantId);
    if (policy instanceof Promise) {
      policy.then((resolved) => spendTenant(request, reply, done, auth.tenantId, resolved), done);
      return;
    }
    spendTenant(request, reply, done, auth.tenantId, policy);
  }));

  // Does nothing for a request counted in onRequest, as every request the fast lane answers is.
  app.addHook('onSend', accountedForByFastLane<onSendHookHandler>((request, reply, payload, done) => {
    if (request.rateLimitCounted) {
      done(null, payload);
      return;
    }
    const auth = request.auth;
    if (auth !== null) {
      // Authenticated, then refused before the budget hook ran (a validator
      // key on an admin route): it still spends the tenant's budget.
      request.rateLimitCounted = true;
      spendQuietly(policies, store, auth.tenantId);
      done(null, payload);
      return;
    }
    if (reply.statusCode !== 401 || !isAuthenticatedPath(request.url)) {
      done(null, payload);
      return;
    }
    request.rateLimitCounted = true;
    const state = store.hit(addressKeyPrefix + addressBucket(request.ip), addressWindowMs);
    const answer = (resolved: WindowState): void => {
      const resetSeconds = secondsUntil(resolved.resetAt);
      setHeaders(reply, addressMax, resolved.count, resetSeconds);
      if (resolved.count <= addressMax) {
        done(null, payload);
        return;
      }
      observer?.rejected('address', undefined);
      const problem = PROBLEMS.addressBudgetSpent(resetSeconds);
      reply.code(ERRORS[problem.code].status).headers(problem.headers);
      done(null, JSON.stringify(problemBody(problem.code, problem.detail, request.id)));
    };
    if (state instanceof Promise) {
      state.then(answer, () => done(null, payload));
      return;
    }
    answer(state);
  }));

  app.addHook('onReady', async () => {
    await store.ready(options.readyTimeoutMs ?? TUNING.rateLimitReadyTimeoutMs.value);
  });
  app.addHook('onClose', async () => {
    await store.close();
  });

  return {
    store,
    policies,
    handOverSpent: (request, policy, state) => {
      spentEarlier.set(request, { policy, state });
    },
  };
}

/** Spends one unit of a tenant's budget without holding up the response. */
function spendQuietly(policies: TenantPolicies, store: RateLimitStore, tenantId: string): void {
  const spend = (policy: RateLimitPolicy): void => {
    const state = store.hit(policy.key, policy.windowMs);
    if (state instanceof Promise) state.catch(() => {});
  };
  const policy = policies.get(tenantId);
  if (policy instanceof Promise) policy.then(spend, () => {});
  else spend(policy);
}

function setHeaders(reply: FastifyReply, max: number, count: number, resetSeconds: number): void {
  reply.header(HEADER_LIMIT, max);
  reply.header(HEADER_REMAINING, remainingOf(max, count));
  reply.header(HEADER_RESET, resetSeconds);
}

/**
 * The RateLimit-Remaining header value of a window that has counted `count`
 * hits of `max`. Written with `toFixed(0)`, not `String()`: V8 keeps the
 * string of every number it converts in its number-to-string cache (old
 * generation) until another number takes the slot, so a count that is new
 * on every request kept thousands of strings alive for seconds. They
 * outlived scavenges and were promoted, filling the old generation for
 * mark-compacts: at a steady 7,000 req/s, 40 KB survived each scavenge and
 * 38 KB were promoted; with `toFixed(0)`, 4 KB and 1.6 KB.
 */
export function remainingOf(max: number, count: number): string {
  return (count >= max ? 0 : max - count).toFixed(0);
}

/** Whole seconds until a window ends, at least 1 (a Retry-After of 0 invites a tight retry loop). */
export function secondsUntil(resetAt: number): number {
  const seconds = Math.ceil((resetAt - Date.now()) / 1000);
  return seconds < 1 ? 1 : seconds;
}
