/**
 * The ruleset-history migration on a database that already has history:
 * versions recorded before it get the action their members tell (publish,
 * archive of a live rule, rollback), and neither note nor actor. The
 * history is made by the storage itself, then the migration is undone and
 * redone, which is what an older database meets.
 */
import { describe, expect, it } from 'vitest';
import * as rulesetHistory from '../../migrations/2026-11-28-ruleset-history.ts';
import { createStorage } from '../../src/storage/create-storage.ts';
import { openDatabase } from '../../src/storage/open-database.ts';
import type { RulesetVersionSummary } from '../../src/storage/types.ts';
import { freshDatabase } from '../support/database.ts';
import { accept, content, NO_LIMIT } from './storage-fixture.ts';

describe('backfill of ruleset history', () => {
  it('infers each older version\'s action and leaves note and actor empty', async () => {
    const database = await freshDatabase();
    const options = { databaseUrl: database.databaseUrl, dataDir: database.dataDir };
    try {
      const storage = await createStorage(options);
      let recorded: RulesetVersionSummary[];
      try {
        await storage.tenants.ensureTenant('acme');
        const key = await storage.apiKeys.create('acme', 'ops', 'admin', 'hash-backfill');
        const info = { actorKeyId: key.id, note: 'kept until the backfill' };
        const rules = storage.rules;
        const a = await rules.create('acme', 'loans', 'A', content({ expression: 'amount > 0' }), NO_LIMIT);
        const b = await rules.create('acme', 'loans', 'B', content({ expression: 'amount > 1' }), NO_LIMIT);
        await rules.publishContext('acme', 'loans', accept, info); // 1 publish
        await rules.update('acme', a.id, 1, content({ expression: 'amount > 5' }));
        await rules.publishRule('acme', a.id, accept, info); // 2 publish
        await rules.archive('acme', b.id, accept, info); // 3 archive
        await rules.rollback('acme', 'loans', 1, NO_LIMIT, accept, info); // 4 rollback: revives B, copies A's first content
        await rules.rollback('acme', 'loans', 3, NO_LIMIT, accept, info); // 5 rollback: archives B, copies A's second content
        await rules.create('acme', 'loans', 'C', content({ expression: 'amount > 2' }), NO_LIMIT);
        await rules.publishContext('acme', 'loans', accept); // 6 publish, no actor
        recorded = (await storage.history.versions('acme', 'loans', { limit: 50 })).items;
        expect(recorded.map((v) => [v.rulesetVersion, v.action, v.rules])).toEqual([
          [6, 'publish', 2], [5, 'rollback', 1], [4, 'rollback', 2], [3, 'archive', 1], [2, 'publish', 2], [1, 'publish', 2],
        ]);
        expect(recorded[0].actor).toBeNull();
        expect(recorded[1]).toMatchObject({ note: 'kept until the backfill', actor: { keyId: key.id, keyName: 'ops' } });
      } finally {
        await storage.close();
      }

      const opened = await openDatabase(options);
      try {
        await rulesetHistory.down(opened.db);
        await rulesetHistory.up(opened.db);
      } finally {
        await opened.close();
      }

      const after = await createStorage(options);
      try {
        const backfilled = (await after.history.versions('acme', 'loans', { limit: 50 })).items;
        expect(backfilled).toEqual(recorded.map((v) => ({ ...v, note: null, actor: null })));
        // The rules of every version still read back.
        const [first] = await after.history.rulesets('acme', 'loans', [1]);
        expect(first.rules.map((r) => [r.code, r.expression])).toEqual([['A', 'amount > 0'], ['B', 'amount > 1']]);
      } finally {
        await after.close();
      }
    } finally {
      await database.drop();
    }
  });
});
