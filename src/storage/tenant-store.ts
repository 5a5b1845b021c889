/**
 * Tenants: existence, first-run detection, the per-tenant rate-limit
 * override and the sampling settings (docs/operations.md, "Sampling").
 */
import type { Kysely } from 'kysely';
import { notifyChange } from '../sync/change-notice.ts';
import { guard } from './database-errors.ts';
import type { DatabaseSchema } from './schema.ts';
import { writeAudit } from './audit-log.ts';
import { TUNING } from '../tuning.ts';
import type { ChangeOrigin, SamplingSettings, TenantPolicySettings, TenantStore } from './types.ts';

/** The settings of a tenant whose columns were never set (or of no tenant): off, with the default bounds. */
type SamplingColumns = { sampling_rate: number; sampling_max_samples: number | null; sampling_retention_hours: number | null };

function samplingOf(row: SamplingColumns | undefined): SamplingSettings {
  return {
    rate: row?.sampling_rate ?? 0,
    maxSamples: row?.sampling_max_samples ?? TUNING.samplingDefaultMaxSamples.value,
    retentionHours: row?.sampling_retention_hours ?? TUNING.samplingDefaultRetentionHours.value,
  };
}

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

  getSampling(tenantId: string): Promise<SamplingSettings> {
    return guard(async () => {
      const row = await this.#db
        .selectFrom('tenants')
        .select(['sampling_rate', 'sampling_max_samples', 'sampling_retention_hours'])
        .where('id', '=', tenantId)
        .executeTakeFirst();
      return samplingOf(row);
    });
  }

  setSampling(tenantId: string, settings: SamplingSettings, origin?: ChangeOrigin): Promise<void> {
    return guard(async () => {
      await this.#db.transaction().execute(async (trx) => {
        const before = await trx
          .selectFrom('tenants')
          .select(['sampling_rate', 'sampling_max_samples', 'sampling_retention_hours'])
          .where('id', '=', tenantId)
          .forUpdate()
          .executeTakeFirst();
        await trx
          .updateTable('tenants')
          .set({ sampling_rate: settings.rate, sampling_max_samples: settings.maxSamples, sampling_retention_hours: settings.retentionHours })
          .where('id', '=', tenantId)
          .execute();
        // Every instance reads the rate again on commit (cache sync), as for a budget.
        await notifyChange(trx, { kind: 'tenant', tenantId });
        const after = { rate: settings.rate, maxSamples: settings.maxSamples, retentionHours: settings.retentionHours };
        await writeAudit(trx, tenantId, origin, { action: 'tenant.sampling', before: { sampling: samplingOf(before) }, after: { sampling: after } });
      });
    });
  }

  getPolicy(tenantId: string): Promise<TenantPolicySettings> {
    return guard(async () => {
      const row = await this.#db
        .selectFrom('tenants')
        .select(['rate_limit_max', 'rate_limit_window_ms', 'sampling_rate', 'cors_origins'])
        .where('id', '=', tenantId)
        .executeTakeFirst();
      const own = row === undefined || row.rate_limit_max === null || row.rate_limit_window_ms === null
        ? null
        : { max: row.rate_limit_max, windowMs: row.rate_limit_window_ms };
      return { rateLimit: own, samplingRate: row?.sampling_rate ?? 0, corsOrigins: row?.cors_origins ?? [] };
    });
  }

  getCorsOrigins(tenantId: string): Promise<string[]> {
    return guard(async () => {
      const row = await this.#db.selectFrom('tenants').select('cors_origins').where('id', '=', tenantId).executeTakeFirst();
      return row?.cors_origins ?? [];
    });
  }

  setCorsOrigins(tenantId: string, origins: readonly string[], origin?: ChangeOrigin): Promise<void> {
    return guard(async () => {
      await this.#db.transaction().execute(async (trx) => {
        const before = await trx.selectFrom('tenants').select('cors_origins').where('id', '=', tenantId).forUpdate().executeTakeFirst();
        await trx.updateTable('tenants').set({ cors_origins: JSON.stringify(origins) }).where('id', '=', tenantId).execute();
        // Every instance reads the tenant's policy, which carries the origins, again on commit (cache sync).
        await notifyChange(trx, { kind: 'tenant', tenantId });
        await writeAudit(trx, tenantId, origin, { action: 'tenant.cors', before: { corsOrigins: before?.cors_origins ?? [] }, after: { corsOrigins: origins } });
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
