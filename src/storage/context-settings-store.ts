/**
 * A context's settings (docs/api.md, "Local evaluation"): for now whether it
 * is served for local evaluation. They live on the context's row, which
 * exists from the context's first rule on; a context without one is unknown.
 */
import type { Kysely } from 'kysely';
import { notifyChange } from '../sync/change-notice.ts';
import { writeAudit } from './audit-log.ts';
import { guard } from './database-errors.ts';
import type { DatabaseSchema } from './schema.ts';
import type { ChangeOrigin, ContextSettings, ContextSettingsStore, ContextState } from './types.ts';

/** ContextSettingsStore over the contexts table. */
export class SqlContextSettingsStore implements ContextSettingsStore {
  readonly #db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.#db = db;
  }

  state(tenantId: string, context: string): Promise<ContextState | null> {
    return guard(async () => {
      const row = await this.#db
        .selectFrom('contexts')
        .select(['local_validation', 'ruleset_version'])
        .where('tenant_id', '=', tenantId)
        .where('context', '=', context)
        .executeTakeFirst();
      return row === undefined ? null : { localValidation: row.local_validation, rulesetVersion: row.ruleset_version };
    });
  }

  set(tenantId: string, context: string, settings: ContextSettings, origin?: ChangeOrigin): Promise<ContextSettings | null> {
    return guard(async () => {
      return this.#db.transaction().execute(async (trx) => {
        const before = await trx
          .selectFrom('contexts')
          .select('local_validation')
          .where('tenant_id', '=', tenantId)
          .where('context', '=', context)
          .forUpdate()
          .executeTakeFirst();
        if (before === undefined) return null;
        await trx
          .updateTable('contexts')
          .set({ local_validation: settings.localValidation })
          .where('tenant_id', '=', tenantId)
          .where('context', '=', context)
          .execute();
        // Other instances end the context's change feeds when it is no longer served.
        if (before.local_validation !== settings.localValidation) await notifyChange(trx, { kind: 'context-settings', tenantId, context });
        await writeAudit(trx, tenantId, origin, {
          action: 'context.settings', context, before: { localValidation: before.local_validation }, after: settings,
        });
        return settings;
      });
    });
  }
}
