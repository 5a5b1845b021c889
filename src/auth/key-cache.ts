/**
 * The lookup behind authentication, keyed by key hash. Known keys stay
 * cached until revoked (or pushed out by the LRU bound); unknown hashes are
 * remembered briefly, so a client hammering one bad key costs one query per
 * TTL; concurrent misses for one hash share one query. In front of it, a
 * bounded memo from the presented key to its hash, so a key seen before is
 * not hashed again on every request.
 */
import { hashApiKey } from './api-key.ts';
import type { ApiKeyRecord, Role } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';

/** What authentication needs to know about a key. */
export interface CachedKey {
  readonly keyId: string;
  /** The key's name, for the audit trail's actor. */
  readonly keyName: string;
  readonly tenantId: string;
  readonly role: Role;
}

export interface KeyCacheOptions {
  /** Reads the active key with this hash from storage. */
  find: (keyHash: string) => Promise<ApiKeyRecord | null>;
  /** Known keys kept (LRU). */
  maxKeys?: number;
  /** Unknown hashes kept (oldest dropped first). */
  maxUnknown?: number;
  /** How long an unknown hash is answered from memory. */
  unknownTtlMs?: number;
  now?: () => number;
}

export class KeyCache {
  readonly #find: (keyHash: string) => Promise<ApiKeyRecord | null>;
  readonly #maxKeys: number;
  readonly #maxUnknown: number;
  readonly #unknownTtlMs: number;
  readonly #now: () => number;
  readonly #known = new Map<string, CachedKey>();
  readonly #hashById = new Map<string, string>();
  readonly #unknown = new Map<string, number>();
  readonly #mismatched = new Map<string, number>();
  readonly #inflight = new Map<string, Promise<CachedKey | null>>();
  // Presented key -> hash, and back (one to one), so revocation can drop the
  // presented form too. Holding presented keys in memory adds no exposure:
  // every request already carries its key in this process's memory, they are
  // never logged or serialized, and the memo is bounded like the maps above.
  readonly #hashByPresented = new Map<string, string>();
  readonly #presentedByHash = new Map<string, string>();
  readonly #maxPresented: number;
  // The hash last moved to the end of #known (its newest entry), or undefined.
  #newestKnown: string | undefined;
  // Bumped by every eviction: a lookup that started before a revocation must
  // not put the revoked key back into the cache when it completes.
  #epoch = 0;
  readonly #evictionListeners: Array<(keyId: string) => void> = [];

  constructor(options: KeyCacheOptions) {
    this.#find = options.find;
    this.#maxKeys = options.maxKeys ?? TUNING.keyCacheMaxKeys.value;
    this.#maxUnknown = options.maxUnknown ?? TUNING.keyCacheMaxUnknown.value;
    this.#unknownTtlMs = options.unknownTtlMs ?? TUNING.keyCacheUnknownTtlMs.value;
    this.#now = options.now ?? Date.now;
    this.#maxPresented = this.#maxKeys + this.#maxUnknown;
  }

  /**
   * The stored form (SHA-256) of a presented key, from memory when this key
   * was presented before. Known and unknown keys alike, so a hit says
   * nothing about the key's validity and costs the same either way.
   */
  keyHashOf(apiKey: string): string {
    const memo = this.#hashByPresented.get(apiKey);
    if (memo !== undefined) return memo;
    const keyHash = hashApiKey(apiKey);
    if (this.#hashByPresented.size >= this.#maxPresented) {
      const [oldestKey, oldestHash] = this.#hashByPresented.entries().next().value!;
      this.#hashByPresented.delete(oldestKey);
      this.#presentedByHash.delete(oldestHash);
    }
    this.#hashByPresented.set(apiKey, keyHash);
    this.#presentedByHash.set(keyHash, apiKey);
    return keyHash;
  }

  /**
   * The cached key a presented key stands for, when this exact key was
   * presented before and is known: the authentication fast path (no
   * hashing, no well-formedness check: the memo holds only keys that passed
   * it). Undefined in every other case, which then takes `lookup`.
   */
  recall(apiKey: string): CachedKey | undefined {
    const keyHash = this.#hashByPresented.get(apiKey);
    return keyHash === undefined ? undefined : this.#touchKnown(keyHash);
  }

  /**
   * The key with this hash, or null. Synchronous when the answer is in
   * memory, so the hot path never waits on a promise.
   */
  lookup(keyHash: string): CachedKey | null | Promise<CachedKey | null> {
    const known = this.#touchKnown(keyHash);
    if (known !== undefined) return known;
    const unknownUntil = this.#unknown.get(keyHash);
    if (unknownUntil !== undefined) {
      if (unknownUntil > this.#now()) return null;
      this.#unknown.delete(keyHash);
    }
    let pending = this.#inflight.get(keyHash);
    if (pending === undefined) {
      pending = this.#load(keyHash);
      this.#inflight.set(keyHash, pending);
    }
    return pending;
  }

  /**
   * For a key that exists but came with another tenant's id: the same
   * storage lookup an unknown key costs, the first time this key and
   * tenant fail together within the TTL, and nothing on repeats, exactly
   * as for an unknown key. So a 401 takes as long whichever part was wrong,
   * and timing cannot tell a valid key from an invented one. Synchronous
   * (null) when nothing needs to be looked up; rejects like lookup does
   * when storage is unavailable.
   */
  mismatch(keyHash: string, tenantId: string): null | Promise<null> {
    const pair = `${keyHash}\u0000${tenantId}`;
    const until = this.#mismatched.get(pair);
    if (until !== undefined && until > this.#now()) return null;
    return this.#find(keyHash).then(() => {
      if (this.#mismatched.size >= this.#maxUnknown) {
        this.#mismatched.delete(this.#mismatched.keys().next().value!);
      }
      this.#mismatched.delete(pair);
      this.#mismatched.set(pair, this.#now() + this.#unknownTtlMs);
      return null;
    });
  }

  /** Drops a key (revocation), effective for the next request. */
  evictKeyId(keyId: string): void {
    this.#epoch++;
    for (const listener of this.#evictionListeners) listener(keyId);
    const keyHash = this.#hashById.get(keyId);
    if (keyHash === undefined) return;
    this.#hashById.delete(keyId);
    this.#known.delete(keyHash);
    if (this.#newestKnown === keyHash) this.#newestKnown = undefined;
    this.#forgetPresented(keyHash);
  }

  /**
   * Calls `listener` with the id of every key evicted (revoked, or changed,
   * here or on another instance), cached or not: what holds a key's
   * authorization beyond one request (a held change feed) must look again.
   */
  onEviction(listener: (keyId: string) => void): void {
    this.#evictionListeners.push(listener);
  }

  /** The keys held now, for the consistency safety net. */
  cachedKeys(): CachedKey[] {
    return [...this.#known.values()];
  }

  /** Forgets everything (tests, or after a missed revocation notice). */
  clear(): void {
    this.#epoch++;
    this.#known.clear();
    this.#newestKnown = undefined;
    this.#hashById.clear();
    this.#unknown.clear();
    this.#mismatched.clear();
    this.#hashByPresented.clear();
    this.#presentedByHash.clear();
  }

  /** A known key, moved to the most recently used end of the LRU order. */
  #touchKnown(keyHash: string): CachedKey | undefined {
    const known = this.#known.get(keyHash);
    // Re-inserting the newest entry changes nothing; skipping it keeps the
    // common case (one busy key) free of Map churn.
    if (known !== undefined && keyHash !== this.#newestKnown) {
      this.#known.delete(keyHash);
      this.#known.set(keyHash, known);
      this.#newestKnown = keyHash;
    }
    return known;
  }

  #forgetPresented(keyHash: string): void {
    const presented = this.#presentedByHash.get(keyHash);
    if (presented === undefined) return;
    this.#presentedByHash.delete(keyHash);
    this.#hashByPresented.delete(presented);
  }

  async #load(keyHash: string): Promise<CachedKey | null> {
    const epoch = this.#epoch;
    try {
      const record = await this.#find(keyHash);
      const key = record === null || record.revokedAt !== null
        ? null
        : { keyId: record.id, keyName: record.name, tenantId: record.tenantId, role: record.role };
      if (epoch === this.#epoch) this.#remember(keyHash, key);
      return key;
    } finally {
      this.#inflight.delete(keyHash);
    }
  }

  #remember(keyHash: string, key: CachedKey | null): void {
    if (key === null) {
      if (this.#unknown.size >= this.#maxUnknown) {
        this.#unknown.delete(this.#unknown.keys().next().value!);
      }
      this.#unknown.set(keyHash, this.#now() + this.#unknownTtlMs);
      return;
    }
    if (this.#known.size >= this.#maxKeys) {
      const [oldestHash, oldest] = this.#known.entries().next().value!;
      this.#known.delete(oldestHash);
      if (this.#newestKnown === oldestHash) this.#newestKnown = undefined;
      this.#hashById.delete(oldest.keyId);
      this.#forgetPresented(oldestHash);
    }
    // Delete first so that the key is the newest entry even if it was held already.
    this.#known.delete(keyHash);
    this.#known.set(keyHash, key);
    this.#newestKnown = keyHash;
    this.#hashById.set(key.keyId, keyHash);
  }
}
