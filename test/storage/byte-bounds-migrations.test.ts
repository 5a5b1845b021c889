/**
 * The migrations of 2026-12-01 on a database that already has rows, made
 * by the storage itself, then the migration undone and redone, which is
 * what an older database meets. Audit ids: entries of two tenants,
 * interleaved, from the shared sequence, are numbered 1, 2, 3... per
 * tenant in their old order, content unchanged, and the next entry of each
 * tenant takes the next number. Sample bytes: existing samples are
 * measured and each tenant's total is their sum, which later writes,
 * prunes and purges keep exact.
 */
import { describe, expect, it } from 'vitest';
import * as auditPerTenantIds from '../../migrations/2026-12-01-audit-per-tenant-ids.ts';
import * as sampleBytes from '../../migrations/2026-12-01-sample-bytes.ts';
import { createStorage } from '../../src/storage/create-storage.ts';
import { openDatabase } from '../../src/storage/open-database.ts';
import type { AuditEntry, ChangeOrigin, SampleRecord, Storage } from '../../src/storage/types.ts';
import { freshDatabase } from '../support/database.ts';

const origin: ChangeOrigin = { actor: { cli: true } };

/** Runs the migration's down and up on the database of `options`. */
async function redo(options: { databaseUrl?: string; dataDir: string }, migration: typeof sampleBytes): Promise<void> {
  const opened = await openDatabase(options);
  try {
    await migration.down(opened.db);
    await migration.up(opened.db);
  } finally {
    await opened.close();
  }
}

function sample(tenantId: string, context: string, minute: number, text: string): SampleRecord {
  return {
    tenantId, context, recordedAt: new Date(Date.UTC(2026, 10, 1, 12, minute)), rulesetVersion: 1, isValid: false, failures: ['LIMIT'], payload: { text },
  };
}

/** The bytes of the tenant's samples as read back: payload and failures as JSON text. */
async function measured(storage: Storage, tenantId: string): Promise<number> {
  let bytes = 0;
  for (const context of await storage.samples.contexts(tenantId)) {
    for (const s of await storage.samples.newest(tenantId, context, 1000)) {
      bytes += Buffer.byteLength(JSON.stringify(s.payload)) + Buffer.byteLength(JSON.stringify(s.failures));
    }
  }
  return bytes;
}

describe('migrations of 2026-12-01 on existing rows', () => {
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
      await redo(options, auditPerTenantIds);

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

  it('measures existing samples and keeps each tenant\'s byte total exact afterwards', async () => {
    const database = await freshDatabase();
    const options = { databaseUrl: database.databaseUrl, dataDir: database.dataDir };
    try {
      const storage = await createStorage(options);
      try {
        await storage.tenants.ensureTenant('acme');
        await storage.tenants.ensureTenant('globex');
        await storage.samples.insertMany([
          sample('acme', 'loans', 1, 'é'.repeat(100)), sample('acme', 'cards', 2, 'a'), sample('globex', 'loans', 3, 'g'.repeat(50)),
        ]);
      } finally {
        await storage.close();
      }
      await redo(options, sampleBytes);

      const after = await createStorage(options);
      try {
        expect(await after.samples.storedBytes('acme')).toBe(await measured(after, 'acme'));
        expect(await after.samples.storedBytes('globex')).toBe(await measured(after, 'globex'));
        expect(await after.samples.storedBytes('acme')).toBeGreaterThan(200);
        await after.samples.insertMany([sample('acme', 'loans', 4, 'new')]);
        await after.samples.prune('acme', 'loans', 1, new Date(0));
        expect(await after.samples.storedBytes('acme')).toBe(await measured(after, 'acme'));
        await after.samples.deleteAll('globex');
        expect(await after.samples.storedBytes('globex')).toBe(0);
      } finally {
        await after.close();
      }
    } finally {
      await database.drop();
    }
  });
});
