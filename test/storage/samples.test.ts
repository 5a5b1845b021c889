/**
 * The sample store (sampled traffic for impact reports): newest first per
 * tenant and context, one sample by id only within its tenant and context,
 * pruning by count and age, and dropping a tenant's samples, after which
 * no sample of the tenant recorded before the purge is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SampleRecord, Storage } from '../../src/storage/types.ts';
import { openTestStorage } from './storage-fixture.ts';

let storage: Storage;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ storage, close } = await openTestStorage());
});
afterAll(async () => {
  await close();
});

const minute = 60_000;
const base = Date.parse('2026-11-01T12:00:00Z');

function sample(tenantId: string, context: string, n: number, overrides: Partial<SampleRecord> = {}): SampleRecord {
  return {
    tenantId,
    context,
    recordedAt: new Date(base + n * minute),
    rulesetVersion: 1,
    isValid: n % 2 === 0,
    failures: n % 2 === 0 ? [] : ['AMOUNT_POSITIVE'],
    payload: { n, zeta: 'first key', alpha: 'second key' },
    ...overrides,
  };
}

describe('sample store', () => {
  it('answers a context\'s samples newest first, as stored, and no other tenant\'s or context\'s', async () => {
    await storage.samples.insertMany([0, 1, 2].map((n) => sample('acme', 'loans', n)));
    await storage.samples.insertMany([sample('acme', 'cards', 5), sample('globex', 'loans', 9)]);

    const loans = await storage.samples.newest('acme', 'loans', 10);
    expect(loans.map((s) => (s.payload as { n: number }).n)).toEqual([2, 1, 0]);
    expect(loans[1]).toMatchObject({ context: 'loans', rulesetVersion: 1, isValid: false, failures: ['AMOUNT_POSITIVE'] });
    expect(loans[1].recordedAt.toISOString()).toBe('2026-11-01T12:01:00.000Z');
    // The payload keeps the key order it came with.
    expect(Object.keys(loans[0].payload as object)).toEqual(['n', 'zeta', 'alpha']);
    expect(await storage.samples.newest('acme', 'loans', 2)).toHaveLength(2);
    expect(await storage.samples.contexts('acme')).toEqual(['cards', 'loans']);
  });

  it('finds one sample by id only within its own tenant and context', async () => {
    const [newest] = await storage.samples.newest('acme', 'loans', 1);
    expect(await storage.samples.get('acme', 'loans', newest.id)).toEqual(newest);
    expect(await storage.samples.get('globex', 'loans', newest.id)).toBeNull();
    expect(await storage.samples.get('acme', 'cards', newest.id)).toBeNull();
    expect(await storage.samples.get('acme', 'loans', 'not-a-uuid')).toBeNull();
  });

  it('prunes past the newest maxSamples and before the cut-off, in that context only', async () => {
    await storage.samples.insertMany([3, 4, 5, 6].map((n) => sample('acme', 'loans', n)));
    // Keep the newest 4 (6, 5, 4, 3), then drop what is older than minute 4: 3 goes too.
    const dropped = await storage.samples.prune('acme', 'loans', 4, new Date(base + 4 * minute));
    expect(dropped).toBe(4);
    const left = await storage.samples.newest('acme', 'loans', 10);
    expect(left.map((s) => (s.payload as { n: number }).n)).toEqual([6, 5, 4]);
    expect(await storage.samples.newest('acme', 'cards', 10)).toHaveLength(1);
  });

  it('lists every tenant and context that holds samples', async () => {
    expect(await storage.samples.sampled()).toEqual([
      { tenantId: 'acme', context: 'cards' }, { tenantId: 'acme', context: 'loans' }, { tenantId: 'globex', context: 'loans' },
    ]);
  });

  it('drops every sample of one tenant, with its audit entry when an origin is given', async () => {
    const origin = { actor: { cli: true as const } };
    const purge = await storage.samples.deleteAll('acme', origin);
    expect(purge.deleted).toBe(4);
    expect(Math.abs(purge.purgedAt.getTime() - Date.now())).toBeLessThan(60_000);
    const { items } = await storage.audit.list('acme', { action: 'tenant.samples-delete', limit: 5 });
    expect(items).toMatchObject([{ action: 'tenant.samples-delete', actor: { cli: true }, after: { deleted: 4 } }]);
    expect(await storage.samples.contexts('acme')).toEqual([]);
    expect(await storage.samples.newest('globex', 'loans', 10)).toHaveLength(1);
  });

  it('keeps a tenant\'s sampling settings, off with default bounds until set, and audits a change', async () => {
    expect(await storage.tenants.getSampling('acme')).toEqual({ rate: 0, maxSamples: 10_000, retentionHours: 168 });
    expect(await storage.tenants.getPolicy('acme')).toEqual({ rateLimit: null, samplingRate: 0, corsOrigins: [] });
    await storage.tenants.setSampling('acme', { rate: 0.1, maxSamples: 50, retentionHours: 2 }, { actor: { cli: true } });
    expect(await storage.tenants.getSampling('acme')).toEqual({ rate: 0.1, maxSamples: 50, retentionHours: 2 });
    expect(await storage.tenants.getPolicy('acme')).toEqual({ rateLimit: null, samplingRate: 0.1, corsOrigins: [] });
    expect(await storage.tenants.getSampling('globex')).toEqual({ rate: 0, maxSamples: 10_000, retentionHours: 168 });
    const { items } = await storage.audit.list('acme', { action: 'tenant.sampling', limit: 5 });
    expect(items).toMatchObject([{
      before: { sampling: { rate: 0, maxSamples: 10_000, retentionHours: 168 } },
      after: { sampling: { rate: 0.1, maxSamples: 50, retentionHours: 2 } },
    }]);
  });

  it('stores large batches in several statements', async () => {
    await storage.samples.insertMany(Array.from({ length: 1201 }, (_, n) => sample('globex', 'bulk', n)));
    expect(await storage.samples.newest('globex', 'bulk', 5000)).toHaveLength(1201);
  });

  it('never stores a sample recorded before its tenant\'s last purge, written however late; later ones and other tenants\' are stored', async () => {
    const { purgedAt } = await storage.samples.deleteAll('acme');
    const at = (ms: number, n: number, tenantId = 'acme') => sample(tenantId, 'late', n, { recordedAt: new Date(purgedAt.getTime() + ms) });
    // Recorded before (or at) the purge, written after it, as a slow instance's writer would.
    const stored = await storage.samples.insertMany([at(-1000, 1), at(0, 2), at(1, 3), at(-1000, 4, 'globex')]);
    expect(stored).toBe(2);
    expect((await storage.samples.newest('acme', 'late', 10)).map((s) => (s.payload as { n: number }).n)).toEqual([3]);
    expect(await storage.samples.newest('globex', 'late', 10)).toHaveLength(1);
  });

  it('reads the same page as payload texts, as stored (key order, spacing of the JSON text), for a replay to parse elsewhere', async () => {
    // After acme's purge above, so stored.
    const after = (n: number): Partial<SampleRecord> => ({ recordedAt: new Date(Date.now() + n * minute) });
    await storage.samples.insertMany([
      sample('acme', 'texts', 1, { ...after(1), payload: { b: 'é', a: [1, 2.5, null] } }), sample('acme', 'texts', 2, after(2)),
    ]);
    const parsed = await storage.samples.newestBefore('acme', 'texts', 10, undefined, 1_000_000);
    const texts = await storage.samples.newestTextsBefore('acme', 'texts', 10, undefined, 1_000_000);
    expect(texts.map((s) => s.id)).toEqual(parsed.map((s) => s.id));
    expect(texts.map((s) => s.recordedAt.toISOString())).toEqual(parsed.map((s) => s.recordedAt.toISOString()));
    expect(texts[1].payloadText).toBe('{"b":"é","a":[1,2.5,null]}');
    expect(texts.map((s) => JSON.parse(s.payloadText) as unknown)).toEqual(parsed.map((s) => s.payload));
    // Paged from a cursor and cut at a byte bound as newestBefore is: the first sample always, then what fits.
    expect(await storage.samples.newestTextsBefore('acme', 'texts', 10, texts[0], 1_000_000)).toEqual([texts[1]]);
    expect(await storage.samples.newestTextsBefore('acme', 'texts', 10, undefined, 1)).toEqual([texts[0]]);
  });
});
