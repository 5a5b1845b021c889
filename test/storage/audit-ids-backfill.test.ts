/**
 * The migration that numbers audit entries per tenant, on a database that
 * already has entries of two tenants, interleaved, from the shared
 * sequence: afterwards each tenant's entries are 1, 2, 3... in their old
 * order, with their content unchanged, and the next entry of each tenant
 * takes the next number. The entries are made by the storage itself, then
 * the migration is undone and redone, which is what an older database meets.
 */
import { describe, expect, it } from 'vitest';
import * as auditPerTenantIds from '../../migrations/2026-12-01-audit-per-tenant-ids.ts';
import { createStorage } from '../../src/storage/create-storage.ts';
import { openDatabase } from '../../src/storage/open-database.ts';
import type { AuditEntry, ChangeOrigin } from '../../src/storage/types.ts';
import { freshDatabase } from '../support/database.ts';

const origin: ChangeOrigin = { actor: { cli: true } };

describe('backfill of per-tenant audit ids', () => {
  it('numbers each tenant\'s existing entries from 1 in their order, and goes on from there', async () => {
    const database = await freshDatabase();
    const options = { databaseUrl: database.databaseUrl, dataDir: database.dataDir };
    try {
      const storage = await createStorage(options);
      let before: { acme: AuditEntry[]; globex: AuditEntry[] };
      try {
        await storage.tenants.ensureTenant('acme');
        await storage.tenants.ensureTenant('globex');
        for (const [tenant, note] of [['acme', 'a1'], ['globex', 'g1'], ['globex', 'g2'], ['acme', 'a2'], ['globex', 'g3'], ['acme', 'a3']]) {
          await storage.audit.record(tenant, origin, { action: 'context.recompile', context: 'loans', note });
        }
        before = {
          acme: (await storage.audit.list('acme', { limit: 50 })).items,
          globex: (await storage.audit.list('globex', { limit: 50 })).items,
        };
      } finally {
        await storage.close();
      }
      const migration = await openDatabase(options);
      try {
        await auditPerTenantIds.down(migration.db);
        await auditPerTenantIds.up(migration.db);
      } finally {
        await migration.close();
      }

      const after = await createStorage(options);
      try {
        const acme = (await after.audit.list('acme', { limit: 50 })).items;
        const globex = (await after.audit.list('globex', { limit: 50 })).items;
        expect(acme.map((entry) => [entry.id, entry.note])).toEqual([['3', 'a3'], ['2', 'a2'], ['1', 'a1']]);
        expect(globex.map((entry) => [entry.id, entry.note])).toEqual([['3', 'g3'], ['2', 'g2'], ['1', 'g1']]);
        expect(acme.map(({ id: _, ...rest }) => rest)).toEqual(before.acme.map(({ id: _, ...rest }) => rest));
        expect(globex.map(({ id: _, ...rest }) => rest)).toEqual(before.globex.map(({ id: _, ...rest }) => rest));
        await after.audit.record('globex', origin, { action: 'context.recompile', context: 'loans', note: 'g4' });
        await after.audit.record('acme', origin, { action: 'context.recompile', context: 'loans', note: 'a4' });
        expect((await after.audit.list('acme', { limit: 1 })).items[0]).toMatchObject({ id: '4', note: 'a4' });
        expect((await after.audit.list('globex', { limit: 1 })).items[0]).toMatchObject({ id: '4', note: 'g4' });
      } finally {
        await after.close();
      }
    } finally {
      await database.drop();
    }
  });
});
