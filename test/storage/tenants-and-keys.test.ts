import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError, type Storage } from '../../src/storage/types.ts';
import { createStorage } from '../../src/storage/create-storage.ts';
import { freshDatabase } from '../support/database.ts';
import { openTestStorage } from './storage-fixture.ts';

let storage: Storage;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ storage, close } = await openTestStorage());
});
afterAll(async () => {
  await close();
});

describe('tenants', () => {
  it('are created once and exist afterwards', async () => {
    expect(await storage.tenants.exists('initech')).toBe(false);
    expect(await storage.tenants.ensureTenant('initech')).toBe(true);
    expect(await storage.tenants.ensureTenant('initech')).toBe(false);
    expect(await storage.tenants.exists('initech')).toBe(true);
    expect(await storage.tenants.isEmpty()).toBe(false);
  });

  it('keep a rate-limit override until it is cleared', async () => {
    expect(await storage.tenants.getRateLimit('acme')).toBeNull();
    await storage.tenants.setRateLimit('acme', { max: 10, windowMs: 1000 });
    expect(await storage.tenants.getRateLimit('acme')).toEqual({ max: 10, windowMs: 1000 });
    expect(await storage.tenants.getRateLimit('globex')).toBeNull();
    await storage.tenants.setRateLimit('acme', null);
    expect(await storage.tenants.getRateLimit('acme')).toBeNull();
    expect(await storage.tenants.getRateLimit('unknown')).toBeNull();
  });

  it('report an empty database on first run', async () => {
    const empty = await freshDatabase();
    const fresh = await createStorage({ databaseUrl: empty.databaseUrl, dataDir: empty.dataDir });
    try {
      expect(await fresh.tenants.isEmpty()).toBe(true);
      await fresh.tenants.ensureTenant('first');
      expect(await fresh.tenants.isEmpty()).toBe(false);
    } finally {
      await fresh.close();
      await empty.drop();
    }
  });
});

describe('API keys', () => {
  it('are found by hash while active, never exposing the hash', async () => {
    const key = await storage.apiKeys.create('acme', 'ci', 'validator', 'hash-ci');
    expect(key).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      tenantId: 'acme',
      name: 'ci',
      role: 'validator',
      createdAt: expect.stringMatching(/Z$/),
      revokedAt: null,
      lastUsedAt: null,
    });
    expect(await storage.apiKeys.findActiveByHash('hash-ci')).toEqual(key);
    expect(await storage.apiKeys.findActiveByHash('hash-unknown')).toBeNull();
  });

  it('refuse a second key with the same hash', async () => {
    await storage.apiKeys.create('acme', 'one', 'validator', 'hash-same');
    await expect(storage.apiKeys.create('globex', 'two', 'validator', 'hash-same')).rejects.toBeInstanceOf(ConflictError);
  });

  it('are revoked idempotently, effective for lookups at once', async () => {
    await storage.apiKeys.create('globex', 'admin', 'admin', 'hash-g-admin');
    const key = await storage.apiKeys.create('globex', 'temp', 'validator', 'hash-g-temp');
    const revoked = await storage.apiKeys.revoke('globex', key.id);
    expect(revoked.revokedAt).not.toBeNull();
    expect(await storage.apiKeys.findActiveByHash('hash-g-temp')).toBeNull();
    expect(await storage.apiKeys.revoke('globex', key.id)).toEqual(revoked);
  });

  it('are unknown to other tenants', async () => {
    const key = await storage.apiKeys.create('globex', 'private', 'validator', 'hash-g-private');
    await expect(storage.apiKeys.revoke('acme', key.id)).rejects.toBeInstanceOf(NotFoundError);
    expect((await storage.apiKeys.list('acme')).map((k) => k.id)).not.toContain(key.id);
    expect(await storage.apiKeys.findActiveByHash('hash-g-private')).toMatchObject({ tenantId: 'globex' });
  });

  it("refuse to revoke the tenant's last active admin key, also under concurrency", async () => {
    await storage.tenants.ensureTenant('solo');
    const a = await storage.apiKeys.create('solo', 'a', 'admin', 'hash-solo-a');
    const b = await storage.apiKeys.create('solo', 'b', 'admin', 'hash-solo-b');
    const outcomes = await Promise.allSettled([storage.apiKeys.revoke('solo', a.id), storage.apiKeys.revoke('solo', b.id)]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(ConflictError);
    const active = (await storage.apiKeys.list('solo')).filter((k) => k.revokedAt === null);
    expect(active.map((k) => k.role)).toEqual(['admin']);
  });

  it('list by createdAt then id, with revoked ones and last use', async () => {
    await storage.tenants.ensureTenant('lister');
    const admin = await storage.apiKeys.create('lister', 'admin', 'admin', 'hash-l-admin');
    const used = await storage.apiKeys.create('lister', 'used', 'validator', 'hash-l-used');
    const older = new Date('2030-01-01T00:00:00.000Z');
    const newer = new Date('2030-01-02T00:00:00.000Z');
    await storage.apiKeys.touch(new Map([[used.id, newer], ['not-a-uuid', newer]]));
    // An older batch (another instance's, late) never moves lastUsedAt back.
    await storage.apiKeys.touch(new Map([[used.id, older]]));
    await storage.apiKeys.touch(new Map());
    await storage.apiKeys.revoke('lister', used.id);
    const keys = await storage.apiKeys.list('lister');
    // Keys made in the same millisecond are ordered by id, as rules are (createdAt, then id).
    const byCreation = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }): number =>
      a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1;
    expect(keys.map((k) => k.id)).toEqual([...keys].sort(byCreation).map((k) => k.id));
    expect(keys.map((k) => [k.id, k.lastUsedAt, k.revokedAt === null]).sort()).toEqual([
      [admin.id, null, true],
      [used.id, newer.toISOString(), false],
    ].sort());
  });

  it('ensure is idempotent and never re-enables a revoked bootstrap key', async () => {
    await storage.tenants.ensureTenant('boot');
    const first = await storage.apiKeys.ensure('boot', 'bootstrap', 'admin', 'hash-boot');
    expect(first).toMatchObject({ outcome: 'created', key: { revokedAt: null } });
    const again = await storage.apiKeys.ensure('boot', 'bootstrap', 'admin', 'hash-boot');
    expect(again).toEqual({ key: first.key, outcome: 'active' });
    await storage.apiKeys.create('boot', 'second', 'admin', 'hash-boot-2');
    const revoked = await storage.apiKeys.revoke('boot', first.key.id);
    const leftAlone = await storage.apiKeys.ensure('boot', 'bootstrap', 'admin', 'hash-boot');
    expect(leftAlone).toEqual({ key: revoked, outcome: 'revoked' });
    expect(leftAlone.key.revokedAt).not.toBeNull();
    expect(await storage.apiKeys.findActiveByHash('hash-boot')).toBeNull();
    await expect(storage.apiKeys.ensure('acme', 'bootstrap', 'admin', 'hash-boot')).rejects.toBeInstanceOf(ConflictError);
  });
});
