/**
 * When each context was last used, across every instance: written in
 * batches by the usage recorder (src/validators/usage-recorder.ts), read
 * once at start by the warm start (src/validators/warm-start.ts).
 */
import { sql, type Kysely } from 'kysely';
import { guard } from './database-errors.ts';
import type { DatabaseSchema } from './schema.ts';
import type { ContextRef, ContextUsageStore } from './types.ts';

type Db = Kysely<DatabaseSchema>;

/** ContextUsageStore over the context_usage table. */
export class SqlContextUsageStore implements ContextUsageStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  recordUse(contexts: readonly ContextRef[], usedAt: Date): Promise<void> {
    if (contexts.length === 0) return Promise.resolve();
    return guard(async () => {
      // One statement for the batch. Rows are inserted (and so locked) in
      // key order, so two instances writing overlapping batches at once
      // wait for each other instead of deadlocking; greatest() keeps a
      // later time another instance wrote. A tenant removed meanwhile is
      // left out rather than failing the batch on its foreign key.
      await sql`
        insert into context_usage (tenant_id, context, last_used_at)
        select distinct u.tenant_id, u.context, ${usedAt.toISOString()}::timestamptz
        from unnest(${contexts.map((c) => c.tenantId)}::text[], ${contexts.map((c) => c.context)}::text[]) as u(tenant_id, context)
        where exists (select 1 from tenants t where t.id = u.tenant_id)
        order by u.tenant_id, u.context
        on conflict (tenant_id, context)
        do update set last_used_at = greatest(context_usage.last_used_at, excluded.last_used_at)`.execute(this.#db);
    });
  }

  likelyUsed(limit: number): Promise<ContextRef[]> {
    return guard(async () => {
      const rows = await this.#db
        .selectFrom('contexts as c')
        .leftJoin('context_usage as u', (join) => join.onRef('u.tenant_id', '=', 'c.tenant_id').onRef('u.context', '=', 'c.context'))
        .select(['c.tenant_id', 'c.context'])
        .where('c.ruleset_version', 'is not', null)
        .orderBy('u.last_used_at', (order) => order.desc().nullsLast())
        .orderBy('c.published_at', (order) => order.desc().nullsLast())
        .orderBy('c.tenant_id')
        .orderBy('c.context')
        .limit(limit)
        .execute();
      return rows.map((row) => ({ tenantId: row.tenant_id, context: row.context }));
    });
  }
}
