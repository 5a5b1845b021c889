/**
 * CacheSync: brings this process's caches in line with changes other
 * processes made. Two ways in:
 *
 * - `apply(notice)`: a change notice (LISTEN/NOTIFY, or a sibling worker
 *   over IPC). A context cached at an older ruleset version is reloaded and
 *   compiled in the background, and the new validator replaces the old one
 *   only once it is ready: requests keep the old version until then (a few
 *   milliseconds) and never pay for the compile. A revoked key is dropped.
 *   A tenant whose settings changed has its rate-limit budget read again.
 *   A tenant whose samples were purged has its queued samples of before
 *   the purge dropped.
 * - `reconcile()`: the safety net for notices that never arrived (listener
 *   connection down). Compares every cached context's version with the
 *   database in one query, and every cached key with its stored status in
 *   one query per thousand keys.
 *
 * Own-process notices are harmless: a notice can arrive before the
 * publishing process installed its version, so cache sync first waits for
 * that process's change of the context to end (`changesSettled`), and then
 * the cached version is no longer older.
 *
 * When the database cannot be read, the cached validator stays (docs/operations.md
 * 9: availability over freshness) and the next reconcile retries.
 */
import type { ApiKeyStore, RuleStore } from '../storage/types.ts';
import type { KeyCache } from '../auth/key-cache.ts';
import type { ValidatorCache } from '../validators/validator-cache.ts';
import { TUNING } from '../tuning.ts';
import type { ChangeNotice } from './change-notice.ts';

/** The slice of a pino logger cache sync uses. */
export interface CacheSyncLogger {
  info(o: object, msg?: string): void;
  warn(o: object, msg?: string): void;
}

export interface CacheSyncOptions {
  rules: Pick<RuleStore, 'liveRuleset' | 'rulesetVersionsOf'>;
  apiKeys: Pick<ApiKeyStore, 'activeAmong'>;
  validators: Pick<ValidatorCache, 'cachedVersion' | 'cachedVersions' | 'changesSettled' | 'compile' | 'install' | 'invalidate'>;
  keyCache: Pick<KeyCache, 'cachedKeys' | 'evictKeyId'>;
  log: CacheSyncLogger;
}

/** Reads a tenant's settings again (TenantPolicies). Never rejects. */
export interface TenantSettingsFollower {
  refresh(tenantId: string): Promise<void>;
}

/** Drops the queued samples of a tenant recorded at or before a purge (SampleRecorder). Never rejects. */
export interface SamplesPurgeFollower {
  purged(tenantId: string, purgedAt: number): Promise<void>;
}

/** Told of every ruleset notice (the change feed of local evaluation). Never throws. */
export interface RulesetFollower {
  changed(tenantId: string, context: string, rulesetVersion: number): void;
}

/** Told of every context-settings notice (the change feed, which ends feeds of a context no longer served). Never throws. */
export interface ContextSettingsFollower {
  settingsChanged(tenantId: string, context: string): void;
}

/** What one reconcile pass changed. */
export interface ReconcileReport {
  /** Contexts reloaded (or dropped) because the database had a newer version. */
  contexts: number;
  /** Keys dropped because they were revoked or changed role. */
  keys: number;
}

export class CacheSync {
  readonly #rules: CacheSyncOptions['rules'];
  readonly #apiKeys: CacheSyncOptions['apiKeys'];
  readonly #validators: CacheSyncOptions['validators'];
  readonly #keyCache: CacheSyncOptions['keyCache'];
  readonly #log: CacheSyncLogger;
  readonly #reloads = new Map<string, Promise<void>>();
  #tenantSettings: TenantSettingsFollower | undefined;
  #samplesPurges: SamplesPurgeFollower | undefined;
  #rulesets: RulesetFollower | undefined;
  #contextSettings: ContextSettingsFollower | undefined;

  constructor(options: CacheSyncOptions) {
    this.#rules = options.rules;
    this.#apiKeys = options.apiKeys;
    this.#validators = options.validators;
    this.#keyCache = options.keyCache;
    this.#log = options.log;
  }

  /** Who reads a tenant's settings again on a tenant notice (the rate limiter, registered after cache sync). */
  followTenantSettings(follower: TenantSettingsFollower): void {
    this.#tenantSettings = follower;
  }

  /** Who drops queued samples on a samples-purge notice (the sample recorder). */
  followSamplesPurges(follower: SamplesPurgeFollower): void {
    this.#samplesPurges = follower;
  }

  /** Who hears of every change of a live ruleset, whether this process caches the context or not (the change feed). */
  followRulesets(follower: RulesetFollower): void {
    this.#rulesets = follower;
  }

  /** Who hears of every change of a context's settings (the change feed). */
  followContextSettings(follower: ContextSettingsFollower): void {
    this.#contextSettings = follower;
  }

  /**
   * Applies one notice. Resolves once this process serves the new state (or
   * gave up on reading it); never rejects.
   *
   * @example
   * await sync.apply({ kind: 'ruleset', tenantId: 'acme', context: 'orders', rulesetVersion: 7 });
   */
  async apply(notice: ChangeNotice): Promise<void> {
    if (notice.kind === 'key') {
      this.#keyCache.evictKeyId(notice.keyId);
      return;
    }
    if (notice.kind === 'tenant') {
      await this.#tenantSettings?.refresh(notice.tenantId);
      return;
    }
    if (notice.kind === 'samples-purge') {
      await this.#samplesPurges?.purged(notice.tenantId, notice.purgedAt);
      return;
    }
    if (notice.kind === 'context-settings') {
      this.#contextSettings?.settingsChanged(notice.tenantId, notice.context);
      return;
    }
    this.#rulesets?.changed(notice.tenantId, notice.context, notice.rulesetVersion);
    try {
      await this.#follow(notice.tenantId, notice.context, notice.rulesetVersion);
    } catch (err) {
      this.#log.warn(
        { err, tenant: notice.tenantId, context: notice.context, rulesetVersion: notice.rulesetVersion },
        'could not reload a context published elsewhere; serving the cached version until the next check',
      );
    }
  }

  /**
   * Compares the caches with the database and fixes what is stale. Rejects
   * when the database cannot be read (the caller retries later).
   */
  async reconcile(): Promise<ReconcileReport> {
    const report: ReconcileReport = { contexts: 0, keys: 0 };

    const cached = this.#validators.cachedVersions();
    const chunkSize = TUNING.versionCheckChunk.value;
    for (let start = 0; start < cached.length; start += chunkSize) {
      const chunk = cached.slice(start, start + chunkSize);
      const current = new Map<string, number>();
      for (const row of await this.#rules.rulesetVersionsOf(chunk)) {
        current.set(contextKey(row.tenantId, row.context), row.rulesetVersion);
      }
      for (const entry of chunk) {
        const version = current.get(contextKey(entry.tenantId, entry.context));
        if (version === undefined) {
          // The context is gone from the database (tenant removed).
          this.#validators.invalidate(entry.tenantId, entry.context);
          report.contexts++;
        } else if (version > entry.rulesetVersion) {
          await this.apply({ kind: 'ruleset', tenantId: entry.tenantId, context: entry.context, rulesetVersion: version });
          report.contexts++;
        }
      }
    }

    const keys = this.#keyCache.cachedKeys();
    if (keys.length > 0) {
      const active = new Map<string, string>();
      for (const key of await this.#apiKeys.activeAmong(keys)) active.set(key.keyId, key.role);
      for (const key of keys) {
        if (active.get(key.keyId) !== key.role) {
          this.#keyCache.evictKeyId(key.keyId);
          report.keys++;
        }
      }
    }

    if (report.contexts > 0 || report.keys > 0) {
      // A notice went missing (or is still on its way): worth knowing.
      this.#log.info({ contexts: report.contexts, keys: report.keys }, 'consistency check refreshed stale cache entries');
    }
    return report;
  }

  /**
   * Reloads that can be overtaken: a reload whose read raced a newer commit
   * brings an older version, and the next notice or pass catches up. After
   * TUNING.maxFollowRounds the context is dropped so the next request loads it.
   */
  async #follow(tenantId: string, context: string, target: number): Promise<void> {
    for (let round = 0; round < TUNING.maxFollowRounds.value; round++) {
      // This process's own publish may not have installed its version yet:
      // its notice can overtake the publish's answer.
      await this.#validators.changesSettled(tenantId, context);
      const cached = this.#validators.cachedVersion(tenantId, context);
      if (cached === undefined) {
        // Nothing cached to refresh. Still invalidate: a load in flight may
        // have read the old version, and the cache may remember the context
        // as unknown from before its first publish.
        this.#validators.invalidate(tenantId, context);
        return;
      }
      if (cached >= target) return;
      await this.#reload(tenantId, context);
    }
    this.#validators.invalidate(tenantId, context);
  }

  /** One reload per context at a time; later notices wait for it and check again. */
  #reload(tenantId: string, context: string): Promise<void> {
    const key = contextKey(tenantId, context);
    const running = this.#reloads.get(key);
    if (running !== undefined) return running;
    const reload = (async () => {
      const ruleset = await this.#rules.liveRuleset(tenantId, context);
      if (ruleset === null) {
        this.#validators.invalidate(tenantId, context);
        return;
      }
      // This process's own publish may have installed that version while the
      // read was on its way (its notice can overtake the publish's answer):
      // then there is nothing to compile.
      const cached = this.#validators.cachedVersion(tenantId, context);
      if (cached !== undefined && cached >= ruleset.rulesetVersion) return;
      // install keeps whichever version is newer, so a publish of this
      // process that lands meanwhile is never undone.
      this.#validators.install(await this.#validators.compile(ruleset, 'validation'));
    })().finally(() => this.#reloads.delete(key));
    this.#reloads.set(key, reload);
    return reload;
  }
}

function contextKey(tenantId: string, context: string): string {
  // Tenant ids cannot contain NUL, so the pair is unambiguous.
  return `${tenantId}\u0000${context}`;
}
