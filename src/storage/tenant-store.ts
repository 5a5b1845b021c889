/**
 * Tenants: existence, first-run detection and the per-tenant rate-limit
 * override.
 */
import type { Kysely } from 'kysely';
import { notifyChange } from '../sync/change-notice.ts';
import { guard } from './database-errors.ts';
import type { DatabaseSchema } from './schema.ts';
import { writeAudit } from './audit-log.ts';
import type { ChangeOrigin, TenantStore } from './types.ts';

/** TenantStore over the tenants table. */
export class SqlTenantStore implements TenantStore {
  readonly #db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.#db = db;
  }

  ensureTenant(tenantId: string): Promise<boolean> {
    return guard(async () => {
      const inserted = await this.#db
        .insertInto('tenants')
        .values({ id: tenantId })
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id')
        .executeTakeFirst();
      return inserted !== undefined;
    });
  }

  exists(tenantId: string): Promise<boolean> {
    return guard(async () => {
      const row = await this.#db.selectFrom('tenants').select('id').where('id', '=', tenantId).executeTakeFirst();
      return row !== undefined;
    });
  }

  getRateLimit(tenantId: string): Promise<{ max: number; windowMs: number } | null> {
    return guard(async () => {
      const row = await this.#db
        .selectFrom('tenants')
        .select(['rate_limit_max', 'rate_limit_window_ms'])
        .where('id', '=', tenantId)
        .executeTakeFirst();
      if (row === undefined || row.rate_limit_max === null || row.rate_limit_window_ms === null) return null;
      return { max: row.rate_limit_max, windowMs: row.rate_limit_window_ms };
    });
  }

  setRateLimit(tenantId: string, limit: { max: number; windowMs: number } | null, origin?: ChangeOrigin): Promise<void> {
    return guard(async () => {
      await this.#db.transaction().execute(async (trx) => {
        const before = await trx
          .selectFrom('tenants')
          .select(['rate_limit_max', 'rate_limit_window_ms'])
          .where('id', '=', tenantId)
          .forUpdate()
          .executeTakeFirst();
        await trx
          .updateTable('tenants')
          .set({ rate_limit_max: limit?.max ?? null, rate_limit_window_ms: limit?.windowMs ?? null })
          .where('id', '=', tenantId)
          .execute();
        // Every instance reads the budget again on commit (cache sync).
        await notifyChange(trx, { kind: 'tenant', tenantId });
        const own = before?.rate_limit_max == null || before.rate_limit_window_ms == null
          ? null
          : { max: before.rate_limit_max, windowMs: before.rate_limit_window_ms };
        // null: the tenant had (or now has) no budget of its own.
        await writeAudit(trx, tenantId, origin, { action: 'tenant.rate-limit', before: { rateLimit: own }, after: { rateLimit: limit } });
      });
    });
  }

  isEmpty(): Promise<boolean> {
    return guard(async () => {
      const row = await this.#db.selectFrom('tenants').select('id').limit(1).executeTakeFirst();
      return row === undefined;
    });
  }
}
