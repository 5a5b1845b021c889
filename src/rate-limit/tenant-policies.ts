/**
 * Each tenant's budget: the configured default, or the override stored for
 * the tenant (set with the CLI or the API). The same cached entry carries
 * the tenant's sampling rate, the other setting every validation needs
 * (docs/operations.md, "Sampling"): one read per TTL serves both, and a
 * request learns whether to sample from the policy it already holds.
 * Overrides are read from the database at
 * most once per TTL per tenant and never on the request path once known: a
 * stale entry is still used while one background read refreshes it, so an
 * override change reaches every instance within about one TTL.
 *
 * A refusal is the exception (`current`): it waits for a read when the
 * policy it would rest on is past its TTL. After an idle spell the cached
 * policy may be from before an override change, and a tenant whose budget
 * was raised got one more 429 (with the old window's Retry-After) however
 * long ago the change was made. Refusals are rare, so the read costs the
 * hot path nothing.
 */
import type { TenantPolicySettings, TenantStore } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';

/** A budget and the counter key it is spent from. */
export interface RateLimitPolicy {
  readonly max: number;
  readonly windowMs: number;
  /** Store key; carries the window, so a changed window starts a fresh count. */
  readonly key: string;
  /** Share of the tenant's validations recorded as samples; 0 is off. */
  readonly samplingRate: number;
  /** Browser origins allowed on the local-evaluation routes (CORS), read with the rest. */
  readonly corsOrigins: readonly string[];
}

/** The logger calls this cache makes (a pino logger fits). */
export interface PolicyLogger {
  warn(object: object, message: string): void;
}

export interface TenantPoliciesOptions {
  tenants: Pick<TenantStore, 'getPolicy'>;
  defaults: { max: number; windowMs: number };
  /** Prepended to every counter key (shared Redis, tests). */
  keyPrefix: string;
  log: PolicyLogger;
  /** How long a tenant's policy is used before it is read again. */
  ttlMs?: number;
  /** Tenants remembered; the oldest entry goes beyond it. */
  maxTenants?: number;
  now?: () => number;
}

interface Entry {
  policy: RateLimitPolicy;
  expiresAt: number;
  refreshing: boolean;
  /** The number of the read it came from. */
  read: number;
}

/**
 * Per-tenant rate-limit policies, cached.
 *
 * @example
 * const policies = new TenantPolicies({ tenants: storage.tenants, defaults: { max: 6000, windowMs: 60_000 }, keyPrefix: 'rules:', log });
 * const policy = policies.get('acme'); // a policy, or a promise of one on the tenant's first request
 */
export class TenantPolicies {
  readonly #tenants: Pick<TenantStore, 'getPolicy'>;
  readonly #defaults: { max: number; windowMs: number };
  readonly #keyPrefix: string;
  readonly #log: PolicyLogger;
  readonly #ttlMs: number;
  readonly #maxTenants: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, Entry>();
  readonly #inflight = new Map<string, Promise<RateLimitPolicy>>();
  // One warning per outage, not one per tenant per TTL.
  #failing = false;
  // Reads are numbered in the order they start; an entry keeps the number
  // of the read it came from, and a read that started earlier never
  // replaces it (it may have read the budget from before a change).
  #reads = 0;

  constructor(options: TenantPoliciesOptions) {
    this.#tenants = options.tenants;
    this.#defaults = options.defaults;
    this.#keyPrefix = options.keyPrefix;
    this.#log = options.log;
    this.#ttlMs = options.ttlMs ?? TUNING.policyTtlMs.value;
    this.#maxTenants = options.maxTenants ?? TUNING.maxPolicyTenants.value;
    this.#now = options.now ?? Date.now;
  }

  /** The tenant's policy: synchronous once known; a promise only on the tenant's first request. */
  get(tenantId: string): RateLimitPolicy | Promise<RateLimitPolicy> {
    const entry = this.#entries.get(tenantId);
    if (entry === undefined) return this.#load(tenantId);
    if (entry.expiresAt <= this.#now() && !entry.refreshing) {
      entry.refreshing = true;
      void this.#load(tenantId);
    }
    return entry.policy;
  }

  /**
   * The tenant's policy no older than its TTL: from memory while it is
   * fresh, else a promise of a read (shared with one under way). For
   * decisions that must not rest on a stale policy, such as a refusal.
   */
  current(tenantId: string): RateLimitPolicy | Promise<RateLimitPolicy> {
    const entry = this.#entries.get(tenantId);
    if (entry !== undefined && entry.expiresAt > this.#now()) return entry.policy;
    return this.#load(tenantId);
  }

  /**
   * Reads the tenant's policy again now: its settings were changed (here, or
   * by another instance, told by a change notice). Requests keep the known
   * policy until the read lands; a tenant not cached is left alone.
   */
  async refresh(tenantId: string): Promise<void> {
    if (!this.#entries.has(tenantId) && !this.#inflight.has(tenantId)) return;
    await this.#read(tenantId);
  }

  /** Forgets every cached policy (tests, or after an override was changed here). */
  clear(): void {
    this.#entries.clear();
  }

  #load(tenantId: string): Promise<RateLimitPolicy> {
    const shared = this.#inflight.get(tenantId);
    if (shared !== undefined) return shared;
    const pending = this.#read(tenantId).finally(() => this.#inflight.delete(tenantId));
    this.#inflight.set(tenantId, pending);
    return pending;
  }

  async #read(tenantId: string): Promise<RateLimitPolicy> {
    const read = ++this.#reads;
    const policy = await this.#readPolicy(tenantId);
    const known = this.#entries.get(tenantId);
    // A read that started later has landed first: what it found is newer.
    if (known !== undefined && known.read > read) return known.policy;
    this.#remember(tenantId, policy, read);
    return policy;
  }

  async #readPolicy(tenantId: string): Promise<RateLimitPolicy> {
    let policy: RateLimitPolicy;
    try {
      const settings = await this.#tenants.getPolicy(tenantId);
      policy = this.#policy(tenantId, settings);
      this.#failing = false;
    } catch (error) {
      // The database being down must not stop validation (cached contexts
      // keep serving): keep what was known, else the default, for one TTL.
      if (!this.#failing) {
        this.#failing = true;
        this.#log.warn({ err: error, tenantId }, 'rate-limit overrides unreadable; using the last known or default budgets');
      }
      policy = this.#entries.get(tenantId)?.policy ?? this.#policy(tenantId, { rateLimit: null, samplingRate: 0, corsOrigins: [] });
    }
    return policy;
  }

  #remember(tenantId: string, policy: RateLimitPolicy, read: number): void {
    if (!this.#entries.has(tenantId) && this.#entries.size >= this.#maxTenants) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
    this.#entries.set(tenantId, { policy, expiresAt: this.#now() + this.#ttlMs, refreshing: false, read });
  }

  #policy(tenantId: string, settings: TenantPolicySettings): RateLimitPolicy {
    const limit = settings.rateLimit ?? this.#defaults;
    return Object.freeze({
      max: limit.max,
      windowMs: limit.windowMs,
      key: `${this.#keyPrefix}rl:t:${tenantId}:${limit.windowMs}`,
      samplingRate: settings.samplingRate,
      corsOrigins: Object.freeze([...settings.corsOrigins]),
    });
  }
}
