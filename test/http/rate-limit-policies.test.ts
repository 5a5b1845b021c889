/**
 * The pieces behind the rate limit, on a real database: tenant policies
 * are read once per TTL and never on the request path once known (a stale
 * one is served while one background read refreshes it), survive a
 * database outage on the last known value with one warning, and carry the
 * window in their counter key; the in-memory store counts fixed windows
 * and sweeps the ones that ended.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRateLimitStore } from '../../src/rate-limit/memory-store.ts';
import { TenantPolicies, type RateLimitPolicy } from '../../src/rate-limit/tenant-policies.ts';
import { createStorage } from '../../src/storage/create-storage.ts';
import type { Storage } from '../../src/storage/types.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

async function settle(read: () => RateLimitPolicy | Promise<RateLimitPolicy>, done: (policy: RateLimitPolicy) => boolean): Promise<RateLimitPolicy> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const policy = await read();
    if (done(policy)) return policy;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the policy never changed');
}

describe('TenantPolicies', () => {
  let database: FreshDatabase;
  let storage: Storage;
  let clock = 1_000_000;
  const warnings: string[] = [];
  let policies: TenantPolicies;

  beforeAll(async () => {
    database = await freshDatabase();
    storage = await createStorage({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
    await storage.tenants.ensureTenant('acme');
    await storage.tenants.ensureTenant('globex');
    policies = new TenantPolicies({
      tenants: storage.tenants,
      defaults: { max: 10, windowMs: 1_000 },
      keyPrefix: 'p:',
      log: { warn: (_object, message) => warnings.push(message) },
      ttlMs: 5_000,
      now: () => clock,
    });
  });
  afterAll(async () => {
    await storage?.close().catch(() => {});
    await database?.drop();
  });

  it('reads a tenant once, then answers from memory', async () => {
    const first = policies.get('acme');
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toEqual({ max: 10, windowMs: 1_000, key: 'p:rl:t:acme:1000', samplingRate: 0, corsOrigins: [] });
    await storage.tenants.setRateLimit('acme', { max: 3, windowMs: 2_000 });
    // Within the TTL the stored change is not seen, and no promise is made.
    expect(policies.get('acme')).toEqual({ max: 10, windowMs: 1_000, key: 'p:rl:t:acme:1000', samplingRate: 0, corsOrigins: [] });
  });

  it('serves the stale policy past the TTL while one background read refreshes it', async () => {
    clock += 5_001;
    expect(policies.get('acme')).toEqual({ max: 10, windowMs: 1_000, key: 'p:rl:t:acme:1000', samplingRate: 0, corsOrigins: [] });
    const refreshed = await settle(() => policies.get('acme'), (policy) => policy.max === 3);
    // A new window gives a new key, so the count starts afresh.
    expect(refreshed).toEqual({ max: 3, windowMs: 2_000, key: 'p:rl:t:acme:2000', samplingRate: 0, corsOrigins: [] });
  });

  it('gives a refusal the current policy: from memory while fresh, read again past the TTL', async () => {
    const known = policies.get('acme');
    expect(policies.current('acme')).toBe(known);
    await storage.tenants.setRateLimit('acme', { max: 4, windowMs: 2_000 });
    clock += 5_001;
    const current = policies.current('acme');
    expect(current).toBeInstanceOf(Promise);
    expect(await current).toEqual({ max: 4, windowMs: 2_000, key: 'p:rl:t:acme:2000', samplingRate: 0, corsOrigins: [] });
    // The read refreshed the cache for everyone.
    expect(policies.get('acme')).toEqual({ max: 4, windowMs: 2_000, key: 'p:rl:t:acme:2000', samplingRate: 0, corsOrigins: [] });
  });

  it('reads a changed budget at once on refresh, and an older read landing later does not undo it', async () => {
    // A store whose first read is held after it has read: a background read started before the change.
    let release: (() => void) | undefined;
    let held = false;
    const slow = new TenantPolicies({
      tenants: {
        getPolicy: async (tenantId) => {
          const value = await storage.tenants.getPolicy(tenantId);
          if (!held) {
            held = true;
            await new Promise<void>((resolve) => { release = resolve; });
          }
          return value;
        },
      },
      defaults: { max: 10, windowMs: 1_000 }, keyPrefix: 'p:', log: { warn: () => {} }, ttlMs: 5_000, now: () => clock,
    });
    await storage.tenants.setRateLimit('globex', { max: 5, windowMs: 1_000 });
    const first = slow.get('globex');
    while (release === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
    await storage.tenants.setRateLimit('globex', { max: 6, windowMs: 1_000 });
    await slow.refresh('globex');
    expect(slow.get('globex')).toMatchObject({ max: 6 });
    release();
    await first;
    expect(slow.get('globex')).toMatchObject({ max: 6 });
    // A tenant it never read is left alone: nothing to refresh.
    await slow.refresh('initech');
    expect(slow.get('initech')).toBeInstanceOf(Promise);
    await storage.tenants.setRateLimit('globex', null);
  });

  it('keeps the last known policy through a database outage, with one warning', async () => {
    expect(await policies.get('globex')).toMatchObject({ max: 10 });
    await storage.close();
    clock += 5_001;
    // Only the refreshes these start matter here (they fail); their answers are read below.
    void policies.get('acme');
    void policies.get('globex');
    await new Promise((resolve) => setTimeout(resolve, 50));
    clock += 5_001;
    expect(policies.get('acme')).toMatchObject({ max: 4 });
    expect(policies.get('globex')).toMatchObject({ max: 10 });
    // A tenant never seen before gets the default.
    expect(await policies.get('initech')).toMatchObject({ max: 10, key: 'p:rl:t:initech:1000' });
    expect(warnings).toEqual(['rate-limit overrides unreadable; using the last known or default budgets']);
  });
});

describe('MemoryRateLimitStore', () => {
  it('counts in fixed windows and sweeps the ended ones', async () => {
    let clock = 0;
    const store = new MemoryRateLimitStore({ now: () => clock, sweepIntervalMs: 5 });
    try {
      expect(store.hit('a', 1_000)).toEqual({ count: 1, resetAt: 1_000 });
      clock = 999;
      expect(store.hit('a', 1_000)).toEqual({ count: 2, resetAt: 1_000 });
      clock = 1_000;
      expect(store.hit('a', 1_000)).toEqual({ count: 1, resetAt: 2_000 });
      expect(store.hit('b', 500)).toEqual({ count: 1, resetAt: 1_500 });
      expect(store.size).toBe(2);
      clock = 1_600;
      for (let attempt = 0; attempt < 100 && store.size > 1; attempt++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(store.size).toBe(1);
    } finally {
      await store.close();
    }
  });
});
