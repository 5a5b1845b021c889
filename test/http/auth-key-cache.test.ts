/**
 * The key cache behind authentication, against the real key store: known
 * keys are answered from memory, a repeated unknown key costs one query per
 * TTL, concurrent misses share one query, and revocation wins a race with a
 * lookup in flight.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/auth/api-key.ts';
import { KeyCache } from '../../src/auth/key-cache.ts';
import type { ApiKeyRecord } from '../../src/storage/types.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** A cache over the real store that counts the queries it makes. */
function countingCache(options: { unknownTtlMs?: number; now?: () => number; maxKeys?: number } = {}) {
  const counter = { queries: 0 };
  const cache = new KeyCache({
    ...options,
    find: (hash) => {
      counter.queries++;
      return t.storage.apiKeys.findActiveByHash(hash);
    },
  });
  return { cache, counter };
}

describe('KeyCache', () => {
  it('answers a known key from memory after the first lookup', async () => {
    const { cache, counter } = countingCache();
    const hash = hashApiKey(t.adminKey);
    const first = await cache.lookup(hash);
    expect(first).toMatchObject({ tenantId: t.tenantId, role: 'admin' });
    for (let i = 0; i < 100; i++) expect(cache.lookup(hash)).toEqual(first);
    expect(counter.queries).toBe(1);
  });

  it('remembers an unknown key for its TTL only', async () => {
    let now = 1_000;
    const { cache, counter } = countingCache({ unknownTtlMs: 5_000, now: () => now });
    const hash = hashApiKey('rk_this-key-was-never-issued-anywhere');
    expect(await cache.lookup(hash)).toBeNull();
    for (let i = 0; i < 100; i++) expect(await cache.lookup(hash)).toBeNull();
    expect(counter.queries).toBe(1);
    now += 5_001;
    expect(await cache.lookup(hash)).toBeNull();
    expect(counter.queries).toBe(2);
  });

  it('shares one query between concurrent misses', async () => {
    const { cache, counter } = countingCache();
    const hash = hashApiKey(t.otherAdminKey);
    const answers = await Promise.all(Array.from({ length: 20 }, () => Promise.resolve(cache.lookup(hash))));
    expect(new Set(answers.map((a) => a?.keyId)).size).toBe(1);
    expect(counter.queries).toBe(1);
  });

  it('does not cache a key revoked while its lookup was in flight', async () => {
    const { record, key } = await t.app.deps.keys.create(t.tenantId, 'racing', 'validator');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const cache = new KeyCache({
      find: async (hash): Promise<ApiKeyRecord | null> => {
        const found = await t.storage.apiKeys.findActiveByHash(hash);
        await gate;
        return found;
      },
    });
    const pending = cache.lookup(hashApiKey(key));
    cache.evictKeyId(record.id);
    release();
    expect(await pending).not.toBeNull();
    // The answer in flight was already read; the next lookup goes back to storage.
    await t.storage.apiKeys.revoke(t.tenantId, record.id);
    expect(await cache.lookup(hashApiKey(key))).toBeNull();
  });

  it('stays within its bound', async () => {
    const { cache, counter } = countingCache({ maxKeys: 1 });
    await cache.lookup(hashApiKey(t.adminKey));
    await cache.lookup(hashApiKey(t.otherAdminKey));
    await cache.lookup(hashApiKey(t.adminKey));
    expect(counter.queries).toBe(3);
  });

  it('hashes a presented key like the key store, whether remembered, evicted or pushed out', async () => {
    const { cache } = countingCache({ maxKeys: 1 });
    const unknown = 'rk_this-key-was-never-issued-anywhere';
    const presented = [t.adminKey, t.otherAdminKey, unknown, t.adminKey, unknown, t.otherAdminKey];
    for (const key of presented) {
      expect(cache.keyHashOf(key)).toBe(hashApiKey(key));
      await cache.lookup(cache.keyHashOf(key));
    }
    const known = await cache.lookup(cache.keyHashOf(t.otherAdminKey));
    cache.evictKeyId(known!.keyId);
    expect(cache.keyHashOf(t.otherAdminKey)).toBe(hashApiKey(t.otherAdminKey));
    cache.clear();
    expect(cache.keyHashOf(t.adminKey)).toBe(hashApiKey(t.adminKey));
  });

  it('recalls a presented key only once it is known, and no longer after revocation', async () => {
    const { cache, counter } = countingCache();
    expect(cache.recall(t.adminKey)).toBeUndefined();
    const unknown = 'rk_this-key-was-never-issued-anywhere';
    expect(await cache.lookup(cache.keyHashOf(unknown))).toBeNull();
    expect(cache.recall(unknown)).toBeUndefined();
    const known = await cache.lookup(cache.keyHashOf(t.adminKey));
    expect(cache.recall(t.adminKey)).toBe(known);
    cache.evictKeyId(known!.keyId);
    expect(cache.recall(t.adminKey)).toBeUndefined();
    expect(counter.queries).toBe(2);
  });

  it('keeps least-recently-used order when one key is used again and again', async () => {
    const { cache, counter } = countingCache({ maxKeys: 2 });
    const third = await t.app.deps.keys.create(t.tenantId, 'third', 'validator');
    await cache.lookup(hashApiKey(t.adminKey));
    await cache.lookup(hashApiKey(t.otherAdminKey));
    // The admin key becomes the most recent, then is used again while already the most recent.
    for (let i = 0; i < 3; i++) expect(cache.lookup(hashApiKey(t.adminKey))).not.toBeInstanceOf(Promise);
    await cache.lookup(hashApiKey(third.key));
    expect(counter.queries).toBe(3);
    // The other tenant's key was the least recently used: pushed out; the admin key stayed.
    expect(cache.lookup(hashApiKey(t.adminKey))).not.toBeInstanceOf(Promise);
    expect(cache.lookup(hashApiKey(t.otherAdminKey))).toBeInstanceOf(Promise);
  });

  it('refuses a key revoked after it was remembered, over HTTP', async () => {
    const { record, key } = await t.app.deps.keys.create(t.tenantId, 'remembered', 'admin');
    expect((await t.request('GET', '/api/v1/rules', { key })).status).toBe(200);
    expect((await t.request('GET', '/api/v1/rules', { key })).status).toBe(200);
    expect((await t.request('DELETE', `/api/v1/api-keys/${record.id}`)).status).toBe(204);
    expect((await t.request('GET', '/api/v1/rules', { key })).status).toBe(401);
  });
});
