/**
 * The compiled-validator cache (ValidatorService). `get` is the hot path:
 * two Map reads and a counter write. Everything else happens on a miss or
 * on publish. Two ways to look: `get` is a use and a hit; `peek` is
 * neither, for views of the cache that must not change its order.
 *
 * - Single flight: concurrent misses for one context share one load.
 * - Versions only move forward: `install` ignores a validator older than
 *   the one cached, so a slow load cannot undo a publish. Nor older than
 *   one evicted while a load of its context was in flight: that load may
 *   have read the database before the publish whose validator it would
 *   otherwise replace (floors, below).
 * - Bounded: beyond `maxEntries` validators, or `maxBytes` of their
 *   estimated heap (compile-validator.ts `estimatedBytes`), the least
 *   recently used go, down to the one just installed (served even when it
 *   alone is larger); recency is a tick stamped by `get`, scanned only on
 *   eviction (rare), so hits never reorder a Map.
 * - Unknown contexts are remembered briefly, so a flood of requests for a
 *   context that does not exist costs one query per TTL.
 */
import type { CompilerLimits } from '../../compiler/types.ts';
import type { CompiledValidator, CompileOptions, ValidatorService } from './compiled-validator.ts';
import { RulesetInvalidError, RulesetOverLimitError } from '../domain-errors.ts';
import type { LiveRuleset, RuleStore } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';
import { compileValidator, keepBuild, type CompileOutcome, type CompilePriority } from './compile-validator.ts';
import { rulesetCompileErrors } from './compile-errors.ts';
import { TenantQueue } from './tenant-queue.ts';

export interface ValidatorCacheOptions {
  rules: Pick<RuleStore, 'liveRuleset'>;
  maxEntries: number;
  /** Estimated heap the cached validators may hold together; unbounded when absent. */
  maxBytes?: number;
  limits: Partial<CompilerLimits>;
  /** How long a context without a ruleset version is answered from memory (default TUNING.unknownContextTtlMs). */
  unknownTtlMs?: number;
  /**
   * Most such contexts remembered at once (default TUNING.maxUnknownContexts).
   * Their names are whatever callers send, so without a bound (and without
   * dropping expired ones) a caller asking for ever new names would grow
   * the cache for as long as the process runs.
   */
  maxUnknownContexts?: number;
  now?: () => number;
  /** Told about hits, loads and compiles (metrics). */
  observer?: ValidatorCacheObserver;
  /**
   * How a ruleset is compiled. The service compiles on the compile lane's
   * threads and installs the result (src/pool/compile-lane.ts); the default
   * compiles on this thread in slices of time (the cluster primary's
   * seeding, tools, tests of the cache itself).
   */
  compiler?: RulesetCompiler;
}

/** Compiles a ruleset for the cache; `priority` says whether validations wait for it (compile-lane.ts). */
export type RulesetCompiler = (ruleset: LiveRuleset, limits: Partial<CompilerLimits>, priority: CompilePriority) => Promise<CompileOutcome>;

/** What the cache reports as it works; every method must be cheap (`hit` runs per validation). */
export interface ValidatorCacheObserver {
  /** `get` found the validator in memory. */
  hit(tenantId: string, context: string): void;
  /**
   * A load from the database ended (concurrent misses share one). `context`
   * is undefined when it found no published ruleset: the name is then only
   * what a caller sent, and labelling metrics with it would let any caller
   * grow them without bound.
   */
  miss(tenantId: string, context: string | undefined): void;
  /** A ruleset was compiled, successfully or not. */
  compiled(tenantId: string, context: string, durationMs: number, succeeded: boolean): void;
}

interface Entry {
  validator: CompiledValidator;
  tick: number;
}

export class ValidatorCache implements ValidatorService {
  readonly #rules: Pick<RuleStore, 'liveRuleset'>;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #limits: Partial<CompilerLimits>;
  readonly #unknownTtlMs: number;
  readonly #maxUnknown: number;
  readonly #now: () => number;
  readonly #observer: ValidatorCacheObserver | undefined;
  readonly #compiler: RulesetCompiler;
  readonly #byTenant = new Map<string, Map<string, Entry>>();
  readonly #unknown = new Map<string, number>();
  readonly #inflight = new Map<string, Promise<CompiledValidator | null>>();
  // Compiles take turns per tenant (tenant-queue.ts).
  readonly #queue = new TenantQueue();
  #size = 0;
  #bytes = 0;
  #tick = 0;
  // Ticks of preloaded validators count down from here, below any use.
  #preloadTick = 0;
  // Bumped by invalidate: a load that started before it may have read what
  // the invalidation said is stale, so its result is returned but not cached.
  #invalidations = 0;
  #compiles = 0;
  // Loads from the database in flight, by cache key (`load` shares one,
  // `recompile` runs its own).
  readonly #loading = new Map<string, number>();
  // The version of an entry removed while a load of its context was in
  // flight: `install` refuses anything older until those loads end.
  // Eviction is not an invalidation (counting it as one would stop every
  // concurrent load from caching while the cache churns at its bound), so
  // without this a load that read version N before a publish could cache N
  // after the publish's N+1 was installed and then evicted.
  readonly #floors = new Map<string, number>();
  // Changes this process is making to a context's live validator (a
  // publish, archive or rollback, up to its install), by cache key.
  readonly #changes = new Map<string, Set<Promise<unknown>>>();

  constructor(options: ValidatorCacheOptions) {
    this.#rules = options.rules;
    this.#maxEntries = options.maxEntries;
    this.#maxBytes = options.maxBytes ?? Infinity;
    this.#limits = options.limits;
    this.#unknownTtlMs = options.unknownTtlMs ?? TUNING.unknownContextTtlMs.value;
    this.#maxUnknown = options.maxUnknownContexts ?? TUNING.maxUnknownContexts.value;
    this.#now = options.now ?? Date.now;
    this.#observer = options.observer;
    this.#compiler = options.compiler ?? ((ruleset, limits) => compileValidator(ruleset, limits));
  }

  /** Compiles performed so far (tests check single flight with it). */
  get compileCount(): number {
    return this.#compiles;
  }

  /** Validators cached now. */
  get size(): number {
    return this.#size;
  }

  /** Their estimated heap, in bytes. */
  get bytes(): number {
    return this.#bytes;
  }

  get(tenantId: string, context: string): CompiledValidator | undefined {
    const validator = this.#use(tenantId, context);
    if (validator !== undefined) this.#observer?.hit(tenantId, context);
    return validator;
  }

  peek(tenantId: string, context: string): CompiledValidator | undefined {
    return this.#byTenant.get(tenantId)?.get(context)?.validator;
  }

  /** The cached ruleset version of a context, without counting as a use (cache sync). */
  cachedVersion(tenantId: string, context: string): number | undefined {
    return this.#byTenant.get(tenantId)?.get(context)?.validator.rulesetVersion;
  }

  /** Every cached context with its ruleset version, for the consistency safety net. */
  cachedVersions(): Array<{ tenantId: string; context: string; rulesetVersion: number }> {
    const versions: Array<{ tenantId: string; context: string; rulesetVersion: number }> = [];
    for (const [tenantId, contexts] of this.#byTenant) {
      for (const [context, entry] of contexts) versions.push({ tenantId, context, rulesetVersion: entry.validator.rulesetVersion });
    }
    return versions;
  }

  load(tenantId: string, context: string): Promise<CompiledValidator | null> {
    const cached = this.get(tenantId, context);
    if (cached !== undefined) return Promise.resolve(cached);
    const key = cacheKey(tenantId, context);
    const unknownUntil = this.#unknown.get(key);
    if (unknownUntil !== undefined) {
      if (unknownUntil > this.#now()) return Promise.resolve(null);
      this.#unknown.delete(key);
    }
    const shared = this.#inflight.get(key);
    if (shared !== undefined) return shared;
    const pending: Promise<CompiledValidator | null> = this.#loadFromStorage(tenantId, context, key, 'validation').then(
      (validator) => {
        this.#observer?.miss(tenantId, validator === null ? undefined : context);
        return validator;
      },
      (error: unknown) => {
        this.#observer?.miss(tenantId, undefined);
        throw error;
      },
    ).finally(() => {
      // invalidate() may have replaced this load with a newer one meanwhile.
      if (this.#inflight.get(key) === pending) this.#inflight.delete(key);
    });
    this.#inflight.set(key, pending);
    return pending;
  }

  async compile(ruleset: LiveRuleset, priority: CompilePriority = 'change', options: CompileOptions = {}): Promise<CompiledValidator> {
    const { validator, errors, build } = await this.#compileOnce(ruleset, priority);
    if (validator !== undefined && options.keepBuild === true) keepBuild(validator, { ruleset, build });
    if (validator === undefined) {
      const fieldErrors = rulesetCompileErrors(errors);
      // A limit of the ruleset as a whole (its text, its regex patterns) is a
      // limit like rules per context, not a fault of one rule's text.
      if (errors.some((error) => error.code === 'LIMIT_EXCEEDED')) {
        throw new RulesetOverLimitError(ruleset.context, fieldErrors);
      }
      throw new RulesetInvalidError(ruleset.context, fieldErrors);
    }
    return validator;
  }

  /** One compile, in turn with the tenant's others; compile errors are returned, not thrown. */
  #compileOnce(ruleset: LiveRuleset, priority: CompilePriority): Promise<CompileOutcome> {
    this.#compiles++;
    return this.#queue.run(ruleset.tenantId, async () => {
      const outcome = await this.#compiler(ruleset, this.#limits, priority);
      // The compile's own time, not its wait for a thread or between its slices.
      this.#observer?.compiled(ruleset.tenantId, ruleset.context, outcome.compileMs, outcome.validator !== undefined);
      return outcome;
    });
  }

  install(validator: CompiledValidator): void {
    const { tenantId, context } = validator;
    this.#unknown.delete(cacheKey(tenantId, context));
    let contexts = this.#byTenant.get(tenantId);
    if (contexts === undefined) {
      contexts = new Map();
      this.#byTenant.set(tenantId, contexts);
    }
    const existing = contexts.get(context);
    if (existing !== undefined && existing.validator.rulesetVersion > validator.rulesetVersion) return;
    if (this.#floors.size > 0 && (this.#floors.get(cacheKey(tenantId, context)) ?? 0) > validator.rulesetVersion) return;
    warmUp(validator);
    if (existing !== undefined) {
      this.#bytes += validator.estimatedBytes - existing.validator.estimatedBytes;
      existing.validator = validator;
      existing.tick = ++this.#tick;
    } else {
      contexts.set(context, { validator, tick: ++this.#tick });
      this.#size++;
      this.#bytes += validator.estimatedBytes;
    }
    // The validator just installed has the newest tick, so it goes last.
    while (this.#size > 1 && (this.#size > this.#maxEntries || this.#bytes > this.#maxBytes)) this.#evictLeastRecentlyUsed();
  }

  /**
   * Runs a change this process makes to a context's live validator, from
   * its transaction to its install. Its change notice can arrive before
   * the install; cache sync waits for `changesSettled` so that it does not
   * compile again what this process is about to install.
   */
  whileChanging<T>(tenantId: string, context: string, change: () => Promise<T>): Promise<T> {
    const key = cacheKey(tenantId, context);
    let changes = this.#changes.get(key);
    if (changes === undefined) {
      changes = new Set();
      this.#changes.set(key, changes);
    }
    const running = change();
    const entry = running.finally(() => {
      changes.delete(entry);
      if (changes.size === 0 && this.#changes.get(key) === changes) this.#changes.delete(key);
    });
    changes.add(entry);
    // The caller gets `running` and its rejection; `entry` only tracks it.
    entry.catch(() => undefined);
    return running;
  }

  /** Resolves once no change of the context by this process is under way (never rejects). */
  async changesSettled(tenantId: string, context: string): Promise<void> {
    const key = cacheKey(tenantId, context);
    for (let changes = this.#changes.get(key); changes !== undefined; changes = this.#changes.get(key)) {
      await Promise.allSettled([...changes]);
    }
  }

  invalidate(tenantId: string, context: string): void {
    this.#invalidations++;
    const key = cacheKey(tenantId, context);
    this.#inflight.delete(key);
    this.#unknown.delete(key);
    this.#remove(tenantId, context);
  }

  async recompile(tenantId: string, context: string): Promise<CompiledValidator | null> {
    const validator = await this.#loadFromStorage(tenantId, context, cacheKey(tenantId, context), 'change');
    if (validator === null) this.#remove(tenantId, context);
    return validator;
  }

  /**
   * Loads a context's validator before any request asks for it (warm
   * start), unless it is cached. Counts no use, hit or miss, and evicts
   * nothing: a validator that does not fit beside those cached is not kept
   * ('full'). 'none': no ruleset version, or one that changed while it was
   * read. Preloaded validators rank below every used one for eviction, the
   * first preloaded the last of them to go.
   */
  async preload(tenantId: string, context: string): Promise<'loaded' | 'cached' | 'full' | 'none'> {
    if (this.peek(tenantId, context) !== undefined) return 'cached';
    let refused = false;
    const admit = (validator: CompiledValidator): boolean => {
      refused = !this.#fits(validator);
      return !refused;
    };
    const validator = await this.#loadFromStorage(tenantId, context, cacheKey(tenantId, context), 'validation', admit);
    const entry = this.#byTenant.get(tenantId)?.get(context);
    if (validator === null || entry === undefined) return refused ? 'full' : 'none';
    entry.tick = this.#preloadTick--;
    return 'loaded';
  }

  /** Whether a validator can join the cache without evicting another. */
  #fits(validator: CompiledValidator): boolean {
    return this.#size === 0 || (this.#size < this.#maxEntries && this.#bytes + validator.estimatedBytes <= this.#maxBytes);
  }

  async #loadFromStorage(
    tenantId: string, context: string, key: string, priority: CompilePriority, admit?: (validator: CompiledValidator) => boolean,
  ): Promise<CompiledValidator | null> {
    this.#loading.set(key, (this.#loading.get(key) ?? 0) + 1);
    try {
      return await this.#readAndCompile(tenantId, context, key, priority, admit);
    } finally {
      const loads = this.#loading.get(key)! - 1;
      if (loads > 0) {
        this.#loading.set(key, loads);
      } else {
        this.#loading.delete(key);
        this.#floors.delete(key);
      }
    }
  }

  async #readAndCompile(
    tenantId: string, context: string, key: string, priority: CompilePriority, admit?: (validator: CompiledValidator) => boolean,
  ): Promise<CompiledValidator | null> {
    const invalidations = this.#invalidations;
    const ruleset = await this.#rules.liveRuleset(tenantId, context);
    const current = invalidations === this.#invalidations;
    if (ruleset === null) {
      if (current) this.#rememberUnknown(key);
      return null;
    }
    const validator = await this.compile(ruleset, priority);
    if (current && invalidations === this.#invalidations && (admit?.(validator) ?? true)) this.install(validator);
    // A newer version may have been installed meanwhile; hand out the one
    // the cache holds so callers never see a version going backwards.
    return this.#use(tenantId, context) ?? validator;
  }

  /**
   * Remembers that `key` has no ruleset, for unknownTtlMs. Every entry gets
   * the same time to live and is (re)inserted at the end, so the map is in
   * expiry order: the expired ones are at its front, and so are the oldest
   * when it is over its bound.
   */
  #rememberUnknown(key: string): void {
    const now = this.#now();
    this.#unknown.delete(key);
    this.#unknown.set(key, now + this.#unknownTtlMs);
    for (const [oldest, until] of this.#unknown) {
      if (until > now && this.#unknown.size <= this.#maxUnknown) break;
      this.#unknown.delete(oldest);
    }
  }

  /** Contexts remembered as having no ruleset (tests, metrics). */
  get unknownContexts(): number {
    return this.#unknown.size;
  }

  /** The cached validator, stamped as recently used; not reported as a hit. */
  #use(tenantId: string, context: string): CompiledValidator | undefined {
    const entry = this.#byTenant.get(tenantId)?.get(context);
    if (entry === undefined) return undefined;
    entry.tick = ++this.#tick;
    return entry.validator;
  }

  #remove(tenantId: string, context: string): void {
    const contexts = this.#byTenant.get(tenantId);
    const entry = contexts?.get(context);
    if (contexts === undefined || entry === undefined) return;
    contexts.delete(context);
    this.#size--;
    this.#bytes -= entry.validator.estimatedBytes;
    if (contexts.size === 0) this.#byTenant.delete(tenantId);
    if (this.#loading.size > 0) {
      const key = cacheKey(tenantId, context);
      if (this.#loading.has(key)) this.#floors.set(key, Math.max(this.#floors.get(key) ?? 0, entry.validator.rulesetVersion));
    }
  }

  #evictLeastRecentlyUsed(): void {
    let oldestTenant: string | undefined;
    let oldestContext: string | undefined;
    let oldestTick = Infinity;
    for (const [tenantId, contexts] of this.#byTenant) {
      for (const [context, entry] of contexts) {
        if (entry.tick < oldestTick) {
          oldestTick = entry.tick;
          oldestTenant = tenantId;
          oldestContext = context;
        }
      }
    }
    if (oldestTenant !== undefined && oldestContext !== undefined) this.#remove(oldestTenant, oldestContext);
  }
}

/**
 * One call on an empty object before the validator serves requests: V8
 * compiles the generated functions lazily, on first use, and for a large
 * context that first use costs many times a validation (tens of
 * milliseconds at 1000 rules), which the first request after a publish or
 * a load would otherwise pay. Validators never throw, and the result is
 * discarded.
 */
function warmUp(validator: CompiledValidator): void {
  validator.validate({}, Date.now());
}

function cacheKey(tenantId: string, context: string): string {
  // Tenant ids cannot contain NUL, so the pair is unambiguous.
  return `${tenantId}\u0000${context}`;
}
