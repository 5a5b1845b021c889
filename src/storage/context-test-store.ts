/**
 * The stored test cases of each context (POST /contexts/{context}/tests):
 * one row per context, the list kept whole as JSON.
 */
import { sql, type Kysely } from 'kysely';
import { guard } from './database-errors.ts';
import type { DatabaseSchema } from './schema.ts';
import { writeAudit } from './audit-log.ts';
import type { ChangeOrigin, ContextTestStore, StoredTest } from './types.ts';

/** ContextTestStore over the context_tests table. */
export class SqlContextTestStore implements ContextTestStore {
  readonly #db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.#db = db;
  }

  list(tenantId: string, context: string): Promise<StoredTest[]> {
    return guard(async () => {
      const row = await this.#db
        .selectFrom('context_tests')
        .select('tests')
        .where('tenant_id', '=', tenantId)
        .where('context', '=', context)
        .executeTakeFirst();
      return row?.tests ?? [];
    });
  }

  listText(tenantId: string, context: string): Promise<string> {
    return guard(async () => {
      const row = await this.#db
        .selectFrom('context_tests')
        .select(sql<string>`tests::text`.as('tests'))
        .where('tenant_id', '=', tenantId)
        .where('context', '=', context)
        .executeTakeFirst();
      return row?.tests ?? '[]';
    });
  }

  replace(tenantId: string, context: string, tests: StoredTest[], origin?: ChangeOrigin): Promise<void> {
    return guard(() => this.#db.transaction().execute(async (trx) => {
      const before = await trx
        .selectFrom('context_tests')
        .select('tests')
        .where('tenant_id', '=', tenantId)
        .where('context', '=', context)
        .forUpdate()
        .executeTakeFirst();
      if (tests.length === 0) {
        await trx.deleteFrom('context_tests').where('tenant_id', '=', tenantId).where('context', '=', context).execute();
      } else {
        const now = new Date();
        // An upsert: two first stores of a context at once both find no row to lock.
        await trx
          .insertInto('context_tests')
          .values({ tenant_id: tenantId, context, tests: JSON.stringify(tests), updated_at: now })
          .onConflict((oc) => oc.columns(['tenant_id', 'context']).doUpdateSet({ tests: JSON.stringify(tests), updated_at: now }))
          .execute();
      }
      await writeAudit(trx, tenantId, origin, { action: 'context.tests', context, before: { tests: before?.tests ?? [] }, after: { tests } });
    }));
  }
}
