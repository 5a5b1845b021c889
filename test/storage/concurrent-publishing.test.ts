/**
 * Lifecycle operations on one context serialize on the context row, from
 * one process (the pool's several connections) and, on PostgreSQL, from
 * two storages standing in for two instances.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStorage } from '../../src/storage/create-storage.ts';
import type { LiveRuleset, Storage } from '../../src/storage/types.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { content, NO_LIMIT } from './storage-fixture.ts';

let database: FreshDatabase;
let first: Storage;
/** A second instance on PostgreSQL; the same storage on PGlite, which belongs to one process. */
let second: Storage;

beforeAll(async () => {
  database = await freshDatabase();
  const options = { databaseUrl: database.databaseUrl, dataDir: database.dataDir };
  first = await createStorage(options);
  second = database.databaseUrl === undefined ? first : await createStorage(options);
  await first.tenants.ensureTenant('acme');
});
afterAll(async () => {
  if (second !== first) await second.close();
  await first.close();
  await database.drop();
});

/** A beforeCommit that yields to the event loop for a while, so the other publisher gets to run into the lock. */
function slowAccept(seen: LiveRuleset[]) {
  return async (next: LiveRuleset) => {
    seen.push(next);
    await new Promise((resolve) => setTimeout(resolve, 50));
    return next.rulesetVersion;
  };
}

describe('concurrent publishes of one context', () => {
  it('publishContext calls get consecutive versions, or the later one finds no drafts', async () => {
    const seen: LiveRuleset[] = [];
    const drafts: string[] = [];
    for (let round = 0; round < 4; round++) {
      drafts.push((await first.rules.create('acme', 'race-ctx', `A${round}`, content(), NO_LIMIT)).id);
      drafts.push((await second.rules.create('acme', 'race-ctx', `B${round}`, content(), NO_LIMIT)).id);
      const outcomes = await Promise.all([
        first.rules.publishContext('acme', 'race-ctx', slowAccept(seen)),
        second.rules.publishContext('acme', 'race-ctx', slowAccept(seen)),
      ]);
      const productive = outcomes.filter((o) => o.result.published.length > 0);
      const idle = outcomes.filter((o) => o.result.published.length === 0);
      expect(productive.length).toBeGreaterThanOrEqual(1);
      for (const o of idle) expect(o.live).toBeUndefined();
      // Every draft of the round went live exactly once.
      expect(productive.flatMap((o) => o.result.published).sort()).toEqual(drafts.slice(-2).sort());
    }
    const versions = seen.map((s) => s.rulesetVersion);
    expect(versions).toEqual(versions.map((_, i) => i + 1));
    const live = await first.rules.liveRuleset('acme', 'race-ctx');
    expect(live?.rulesetVersion).toBe(versions.length);
    expect(live?.rules).toHaveLength(8);
  });

  it('publishRule of two rules both succeed with consecutive versions and nothing lost', async () => {
    const a = await first.rules.create('acme', 'race-rule', 'A', content(), NO_LIMIT);
    const b = await first.rules.create('acme', 'race-rule', 'B', content(), NO_LIMIT);
    const seen: LiveRuleset[] = [];
    const [ra, rb] = await Promise.all([
      first.rules.publishRule('acme', a.id, slowAccept(seen)),
      second.rules.publishRule('acme', b.id, slowAccept(seen)),
    ]);
    expect([ra.result.rulesetVersion, rb.result.rulesetVersion].sort()).toEqual([1, 2]);
    // The later of the two saw the earlier one's rule already live.
    const last = seen.find((s) => s.rulesetVersion === 2);
    expect(last?.rules.map((r) => r.code)).toEqual(['A', 'B']);
    expect((await second.rules.liveRuleset('acme', 'race-rule'))?.rules.map((r) => r.code)).toEqual(['A', 'B']);
  });

  it('an edit racing a publish either goes live or stays a draft, never half', async () => {
    const rule = await first.rules.create('acme', 'race-edit', 'R', content(), NO_LIMIT);
    const [published, edited] = await Promise.all([
      first.rules.publishContext('acme', 'race-edit', slowAccept([])),
      second.rules.update('acme', rule.id, 1, content({ expression: 'amount > 5' })),
    ]);
    const now = await first.rules.get('acme', rule.id);
    expect(now?.version).toBe(2);
    expect(edited.version).toBe(2);
    const liveExpression = (await first.rules.liveRuleset('acme', 'race-edit'))?.rules[0]?.expression;
    if (now?.status === 'published') {
      expect(liveExpression).toBe('amount > 5');
    } else {
      expect(published.result.published).toEqual([rule.id]);
      expect(now).toMatchObject({ status: 'draft', publishedVersion: 1 });
      expect(liveExpression).toBe('amount > 0');
    }
  });

  it('creates never exceed maxRulesPerContext, whatever the interleaving', async () => {
    const attempts = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? first : second).rules.create('acme', 'race-limit', `R${i}`, content(), 3)),
    );
    expect(attempts.filter((a) => a.status === 'fulfilled')).toHaveLength(3);
    const page = await first.rules.list('acme', { context: 'race-limit', limit: 10 });
    expect(page.items).toHaveLength(3);
  });
});
