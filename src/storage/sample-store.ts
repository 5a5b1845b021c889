/**
 * Sampled traffic (docs/operations.md, "Sampling"): the rows the background
 * sample writer stores and the impact report reads. Nothing here runs on a
 * validation's path.
 */
import type { Kysely, Selectable } from 'kysely';
import { writeAudit } from './audit-log.ts';
import { guard } from './database-errors.ts';
import { notifyChange } from '../sync/change-notice.ts';
import type { DatabaseSchema, SamplesTable } from './schema.ts';
import type { ChangeOrigin, ContextRef, SampleCursor, SampleRecord, SampleStore, SamplesPurge, StoredSample } from './types.ts';

/**
 * Rows per insert statement: well under PostgreSQL's 65,535 bind parameters
 * (7 a row). insertMany of at most this many rows is one statement, stored
 * all or nothing; the sample writer relies on it to isolate a refused row.
 */
export const SAMPLES_PER_STATEMENT = 500;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function toStoredSample(row: Selectable<SamplesTable>): StoredSample {
  return {
    id: row.id,
    context: row.context,
    recordedAt: row.recorded_at,
    rulesetVersion: row.ruleset_version,
    isValid: row.is_valid,
    failures: row.failures,
    payload: row.payload,
  };
}

/** SampleStore over the samples table. */
export class SqlSampleStore implements SampleStore {
  readonly #db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.#db = db;
  }

  /**
   * One transaction per SAMPLES_PER_STATEMENT rows: it reads the tenants'
   * `samples_purged_at` FOR SHARE and inserts only the samples recorded
   * after it. The lock orders the write with a purge (deleteAll updates
   * that row first): a write that locked first is committed before the
   * purge deletes, and the purge deletes its rows; one that comes after
   * reads the new purge time and leaves out what was recorded before. So no
   * sample recorded before a purge, by any process, is stored after it.
   */
  insertMany(samples: readonly SampleRecord[]): Promise<number> {
    if (samples.length === 0) return Promise.resolve(0);
    return guard(async () => {
      let stored = 0;
      for (let start = 0; start < samples.length; start += SAMPLES_PER_STATEMENT) {
        const chunk = samples.slice(start, start + SAMPLES_PER_STATEMENT);
        stored += await this.#db.transaction().execute(async (trx) => {
          const tenantIds = [...new Set(chunk.map((s) => s.tenantId))].sort();
          const purges = await trx
            .selectFrom('tenants')
            .select(['id', 'samples_purged_at'])
            .where('id', 'in', tenantIds)
            .orderBy('id')
            .forShare()
            .execute();
          const purgedAt = new Map(purges.map((row) => [row.id, row.samples_purged_at?.getTime()]));
          // A tenant without a row keeps its samples here: the foreign key refuses them (the writer counts them rejected).
          const rows = chunk
            .filter((s) => {
              const purged = purgedAt.get(s.tenantId);
              return purged === undefined || s.recordedAt.getTime() > purged;
            })
            .map((s) => ({
              tenant_id: s.tenantId,
              context: s.context,
              recorded_at: s.recordedAt,
              ruleset_version: s.rulesetVersion,
              is_valid: s.isValid,
              failures: JSON.stringify(s.failures),
              payload: JSON.stringify(s.payload),
            }));
          if (rows.length > 0) await trx.insertInto('samples').values(rows).execute();
          return rows.length;
        });
      }
      return stored;
    });
  }

  newest(tenantId: string, context: string, limit: number): Promise<StoredSample[]> {
    return guard(async () => {
      const rows = await this.#db
        .selectFrom('samples')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('context', '=', context)
        .orderBy('recorded_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map(toStoredSample);
    });
  }

  newestBefore(tenantId: string, context: string, limit: number, before?: SampleCursor): Promise<StoredSample[]> {
    return guard(async () => {
      let query = this.#db
        .selectFrom('samples')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('context', '=', context);
      // The order of `newest`, resumed after the cursor: older time, or the same time and a smaller id.
      if (before !== undefined) query = query.where((eb) => eb(eb.refTuple('recorded_at', 'id'), '<', eb.tuple(before.recordedAt, before.id)));
      const rows = await query.orderBy('recorded_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toStoredSample);
    });
  }

  get(tenantId: string, context: string, id: string): Promise<StoredSample | null> {
    if (!UUID.test(id)) return Promise.resolve(null);
    return guard(async () => {
      const row = await this.#db
        .selectFrom('samples')
        .selectAll()
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .where('context', '=', context)
        .executeTakeFirst();
      return row ? toStoredSample(row) : null;
    });
  }

  prune(tenantId: string, context: string, maxSamples: number, olderThan: Date): Promise<number> {
    return guard(async () => {
      const beyondNewest = this.#db
        .selectFrom('samples')
        .select('id')
        .where('tenant_id', '=', tenantId)
        .where('context', '=', context)
        .orderBy('recorded_at', 'desc')
        .orderBy('id', 'desc')
        .offset(maxSamples);
      const result = await this.#db
        .deleteFrom('samples')
        .where('tenant_id', '=', tenantId)
        .where('context', '=', context)
        .where((eb) => eb.or([eb('recorded_at', '<', olderThan), eb('id', 'in', beyondNewest)]))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    });
  }

  contexts(tenantId: string): Promise<string[]> {
    return guard(async () => {
      const rows = await this.#db
        .selectFrom('samples')
        .select('context')
        .distinct()
        .where('tenant_id', '=', tenantId)
        .orderBy('context')
        .execute();
      return rows.map((r) => r.context);
    });
  }

  sampled(): Promise<ContextRef[]> {
    return guard(async () => {
      const rows = await this.#db
        .selectFrom('samples')
        .select(['tenant_id', 'context'])
        .distinct()
        .orderBy('tenant_id')
        .orderBy('context')
        .execute();
      return rows.map((r) => ({ tenantId: r.tenant_id, context: r.context }));
    });
  }

  deleteAll(tenantId: string, origin?: ChangeOrigin): Promise<SamplesPurge> {
    return guard(async () => {
      return this.#db.transaction().execute(async (trx) => {
        // First the purge time, on the tenant's row: this waits for a sample write under way (insertMany reads the
        // row FOR SHARE), and any write after it leaves out what was recorded before.
        const purgedAt = new Date();
        await trx.updateTable('tenants').set({ samples_purged_at: purgedAt }).where('id', '=', tenantId).execute();
        const result = await trx.deleteFrom('samples').where('tenant_id', '=', tenantId).executeTakeFirst();
        const deleted = Number(result.numDeletedRows);
        // Every instance drops what it still queues of the tenant on commit (cache sync).
        await notifyChange(trx, { kind: 'samples-purge', tenantId, purgedAt: purgedAt.getTime() });
        await writeAudit(trx, tenantId, origin, { action: 'tenant.samples-delete', after: { deleted } });
        return { deleted, purgedAt };
      });
    });
  }
}
