/**
 * Context use as the warm start reads it: which published contexts come
 * first (the most recently used, then the never used by newest publish),
 * across tenants, and how batches of uses from several instances merge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContextRef, Storage } from '../../src/storage/types.ts';
import { accept, content, NO_LIMIT, openTestStorage } from './storage-fixture.ts';

let storage: Storage;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ storage, close } = await openTestStorage());
  // Published in this order: old, mid, new (acme), then other (globex).
  for (const [tenantId, context] of [['acme', 'old'], ['acme', 'mid'], ['acme', 'new'], ['globex', 'other']]) {
    await storage.rules.create(tenantId, context, 'R', content(), NO_LIMIT);
    await storage.rules.publishContext(tenantId, context, accept);
  }
  // A context with a draft only has no ruleset version: nothing to compile.
  await storage.rules.create('acme', 'draft-only', 'R', content(), NO_LIMIT);
});
afterAll(async () => {
  await close();
});

const ref = (tenantId: string, context: string): ContextRef => ({ tenantId, context });
const names = (refs: ContextRef[]): string[] => refs.map((r) => `${r.tenantId}/${r.context}`);

describe('contexts likely to be used', () => {
  it('before any use: every published context, newest publish first', async () => {
    expect(names(await storage.usage.likelyUsed(100))).toEqual(['globex/other', 'acme/new', 'acme/mid', 'acme/old']);
  });

  it('used contexts first, most recent first, of every tenant; then the rest by newest publish', async () => {
    await storage.usage.recordUse([ref('acme', 'old')], new Date('2026-01-01T00:00:00Z'));
    await storage.usage.recordUse([ref('globex', 'other'), ref('acme', 'mid')], new Date('2026-01-02T00:00:00Z'));
    const likely = names(await storage.usage.likelyUsed(100));
    expect(likely.slice(0, 2).sort()).toEqual(['acme/mid', 'globex/other']);
    expect(likely.slice(2)).toEqual(['acme/old', 'acme/new']);
  });

  it('a batch that arrives late never moves a use back in time', async () => {
    await storage.usage.recordUse([ref('acme', 'old')], new Date('2026-01-03T00:00:00Z'));
    await storage.usage.recordUse([ref('acme', 'old')], new Date('2025-12-01T00:00:00Z'));
    expect(names(await storage.usage.likelyUsed(1))).toEqual(['acme/old']);
  });

  it('stops at the limit', async () => {
    expect(names(await storage.usage.likelyUsed(2))).toHaveLength(2);
  });

  it('a batch naming a tenant that does not exist records the rest', async () => {
    await storage.usage.recordUse([ref('nobody', 'old'), ref('acme', 'new')], new Date('2026-01-04T00:00:00Z'));
    expect(names(await storage.usage.likelyUsed(1))).toEqual(['acme/new']);
  });
});
