/**
 * Sampled traffic (docs/operations.md, "Sampling"): the rows the background
 * sample writer stores and the impact report reads. Nothing here runs on a
 * validation's path.
 */
import { sql, type Kysely, type Selectable, type SelectQueryBuilder } from 'kysely';
import { writeAudit } from './audit-log.ts';
import { guard } from './database-errors.ts';
import { notifyChange } from '../sync/change-notice.ts';
import type { DatabaseSchema, SamplesTable } from './schema.ts';
import type { ChangeOrigin, ContextRef, SampleCursor, SampleRecord, SampleStore, SamplesPurge, SampleText, StoredSample } from './types.ts';

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

/** A sample as inserted: its JSON texts and their size. */
function toRow(sample: SampleRecord) {
  const failures = JSON.stringify(sample.failures);
  const payload = sample.payloadText ?? JSON.stringify(sample.payload);
  return {
    tenant_id: sample.tenantId,
    context: sample.context,
    recorded_at: sample.recordedAt,
    ruleset_version: sample.rulesetVersion,
    is_valid: sample.isValid,
    failures,
    payload,
    stored_bytes: Buffer.byteLength(payload, 'utf8') + Buffer.byteLength(failures, 'utf8'),
  };
}

type Trx = Kysely<DatabaseSchema>;

/** Locks the tenant's row until the transaction ends; every change of its samples does this first. */
async function lockTenant(trx: Trx, tenantId: string): Promise<void> {
  await trx.selectFrom('tenants').select('id').where('id', '=', tenantId).forUpdate().execute();
}

/** Adds `bytes` (negative: takes them) to the tenant's sample byte total; the new total. */
async function addToTotal(trx: Trx, tenantId: string, bytes: number): Promise<number> {
  const row = await trx
    .updateTable('tenants')
    .set({ samples_bytes: sql<string>`greatest(samples_bytes + ${bytes}, 0)` })
    .where('id', '=', tenantId)
    .returning('samples_bytes')
    .executeTakeFirst();
  return Number(row?.samples_bytes ?? 0);
}

/** Rows of the oldest samples looked at per statement while freeing bytes. */
const OLDEST_PER_STATEMENT = 1000;

/**
 * Deletes the tenant's oldest samples (by recorded_at, then id) until at
 * least `excess` bytes went, and takes them off its total; how many went.
 * Each statement looks at the next OLDEST_PER_STATEMENT oldest rows only,
 * through the (tenant, recorded_at, id) index.
 */
async function deleteOldest(trx: Trx, tenantId: string, excess: number): Promise<number> {
  let freed = 0;
  let deleted = 0;
  while (freed < excess) {
    const { rows } = await sql<{ stored_bytes: number }>`
      delete from samples where id in (
        select id from (
          select id, stored_bytes, sum(stored_bytes) over (order by recorded_at, id) as running
          from (
            select id, stored_bytes, recorded_at from samples where tenant_id = ${tenantId}
            order by recorded_at, id limit ${OLDEST_PER_STATEMENT}
          ) as oldest
        ) as measured
        where running - stored_bytes < ${excess - freed}
      )
      returning stored_bytes
    `.execute(trx);
    if (rows.length === 0) break;
    deleted += rows.length;
    freed += rows.reduce((total, row) => total + Number(row.stored_bytes), 0);
  }
  await addToTotal(trx, tenantId, -freed);
  return deleted;
}

/** SampleStore over the samples table. */
export class SqlSampleStore implements SampleStore {
  readonly #db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.#db = db;
  }

  /**
   * One transaction per SAMPLES_PER_STATEMENT rows: it locks the tenants'
   * rows (FOR UPDATE, in id order) and inserts only the samples recorded
   * after their `samples_purged_at`. The lock orders the write with a purge
   * (deleteAll updates that row first): a write that locked first is
   * committed before the purge deletes, and the purge deletes its rows; one
   * that comes after reads the new purge time and leaves out what was
   * recorded before. So no sample recorded before a purge, by any process,
   * is stored after it. In the same transaction each tenant's byte total
   * grows by what was stored, and with `maxBytesPerTenant` its oldest
   * samples are deleted until the total is within it again.
   */
  insertMany(samples: readonly SampleRecord[], maxBytesPerTenant?: number): Promise<number> {
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
            .forUpdate()
            .execute();
          const purgedAt = new Map(purges.map((row) => [row.id, row.samples_purged_at?.getTime()]));
          // A tenant without a row keeps its samples here: the foreign key refuses them (the writer counts them rejected).
          const rows = chunk
            .filter((s) => {
              const purged = purgedAt.get(s.tenantId);
              return purged === undefined || s.recordedAt.getTime() > purged;
            })
            .map(toRow);
          if (rows.length === 0) return 0;
          await trx.insertInto('samples').values(rows).execute();
          const added = new Map<string, number>();
          for (const row of rows) added.set(row.tenant_id, (added.get(row.tenant_id) ?? 0) + row.stored_bytes);
          for (const [tenantId, bytes] of added) {
            const total = await addToTotal(trx, tenantId, bytes);
            if (maxBytesPerTenant !== undefined && total > maxBytesPerTenant) await deleteOldest(trx, tenantId, total - maxBytesPerTenant);
          }
          return rows.length;
        });
      }
      return stored;
    });
  }

  newest(tenantId: string, context: string, limit: number): Promise<StoredSample[]> {
    return this.newestBefore(tenantId, context, limit);
  }

  /**
   * With `maxBytes`, the ids and sizes are read first, then the samples
   * that fit in it (always at least one): a page of large payloads is cut
   * short rather than loaded whole.
   */
  newestBefore(tenantId: string, context: string, limit: number, before?: SampleCursor, maxBytes?: number): Promise<StoredSample[]> {
    return guard(async () => {
      const query = this.#newestQuery(tenantId, context, limit, before);
      if (maxBytes === undefined) return (await query.selectAll().execute()).map(toStoredSample);
      const ids = await this.#idsWithin(query, maxBytes);
      if (ids.length === 0) return [];
      return (await this.#byIdsNewestFirst(tenantId, ids).selectAll().execute()).map(toStoredSample);
    });
  }

  newestTextsBefore(tenantId: string, context: string, limit: number, before: SampleCursor | undefined, maxBytes: number): Promise<SampleText[]> {
    return guard(async () => {
      const ids = await this.#idsWithin(this.#newestQuery(tenantId, context, limit, before), maxBytes);
      if (ids.length === 0) return [];
      // The column is json, so its text is the payload as stored, key order and all; the driver parses nothing.
      const rows = await this.#byIdsNewestFirst(tenantId, ids)
        .select(['id', 'recorded_at', sql<string>`payload::text`.as('payload_text')])
        .execute();
      return rows.map((row) => ({ id: row.id, recordedAt: row.recorded_at, payloadText: row.payload_text }));
    });
  }

  /** The context's samples, newest first, resumed after the cursor: older time, or the same time and a smaller id. */
  #newestQuery(tenantId: string, context: string, limit: number, before: SampleCursor | undefined) {
    let query = this.#db
      .selectFrom('samples')
      .where('tenant_id', '=', tenantId)
      .where('context', '=', context);
    if (before !== undefined) query = query.where((eb) => eb(eb.refTuple('recorded_at', 'id'), '<', eb.tuple(before.recordedAt, before.id)));
    return query.orderBy('recorded_at', 'desc').orderBy('id', 'desc').limit(limit);
  }

  /** The ids of the query's samples whose stored bytes fit in `maxBytes`, in its order; always the first. */
  async #idsWithin(query: SelectQueryBuilder<DatabaseSchema, 'samples', object>, maxBytes: number): Promise<string[]> {
    const sizes = await query.select(['id', 'stored_bytes']).execute();
    const ids: string[] = [];
    let bytes = 0;
    for (const row of sizes) {
      bytes += row.stored_bytes;
      if (ids.length > 0 && bytes > maxBytes) break;
      ids.push(row.id);
    }
    return ids;
  }

  #byIdsNewestFirst(tenantId: string, ids: string[]) {
    return this.#db
      .selectFrom('samples')
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', ids)
      .orderBy('recorded_at', 'desc')
      .orderBy('id', 'desc');
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
    return guard(() =>
      this.#db.transaction().execute(async (trx) => {
        // The tenant's row first, as every change of its samples locks it: the byte total stays exact.
        await lockTenant(trx, tenantId);
        const beyondNewest = trx
          .selectFrom('samples')
          .select('id')
          .where('tenant_id', '=', tenantId)
          .where('context', '=', context)
          .orderBy('recorded_at', 'desc')
          .orderBy('id', 'desc')
          .offset(maxSamples);
        const gone = await trx
          .deleteFrom('samples')
          .where('tenant_id', '=', tenantId)
          .where('context', '=', context)
          .where((eb) => eb.or([eb('recorded_at', '<', olderThan), eb('id', 'in', beyondNewest)]))
          .returning('stored_bytes')
          .execute();
        await addToTotal(trx, tenantId, -gone.reduce((total, row) => total + row.stored_bytes, 0));
        return gone.length;
      }),
    );
  }

  trimToBytes(tenantId: string, maxBytes: number): Promise<number> {
    return guard(() =>
      this.#db.transaction().execute(async (trx) => {
        await lockTenant(trx, tenantId);
        const total = await addToTotal(trx, tenantId, 0);
        return total > maxBytes ? deleteOldest(trx, tenantId, total - maxBytes) : 0;
      }),
    );
  }

  storedBytes(tenantId: string): Promise<number> {
    return guard(async () => {
      const row = await this.#db.selectFrom('tenants').select('samples_bytes').where('id', '=', tenantId).executeTakeFirst();
      return Number(row?.samples_bytes ?? 0);
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
        await trx.updateTable('tenants').set({ samples_purged_at: purgedAt, samples_bytes: '0' }).where('id', '=', tenantId).execute();
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
