/**
 * The stored test cases of each context (POST /contexts/{context}/tests):
 * one row per context, the list kept whole as JSON.
 */
import type { Kysely } from 'kysely';
import { guard } from './database-errors.ts';
import type { DatabaseSchema } from './schema.ts';
import type { ContextTestStore, StoredTest } from './types.ts';

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

  replace(tenantId: string, context: string, tests: StoredTest[]): Promise<void> {
    return guard(async () => {
      if (tests.length === 0) {
        await this.#db.deleteFrom('context_tests').where('tenant_id', '=', tenantId).where('context', '=', context).execute();
        return;
      }
      const now = new Date();
      await this.#db
        .insertInto('context_tests')
        .values({ tenant_id: tenantId, context, tests: JSON.stringify(tests), updated_at: now })
        .onConflict((oc) => oc.columns(['tenant_id', 'context']).doUpdateSet({ tests: JSON.stringify(tests), updated_at: now }))
        .execute();
    });
  }
}
