/**
 * The stored test cases of each context: one row per context holding the
 * whole list, since the list is always replaced and read whole, and its
 * size is bounded by the request body limit of the call that stored it.
 * `json`, not `jsonb`: payloads keep the key order their author wrote.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('context_tests')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('context', 'text', (c) => c.notNull())
    .addColumn('tests', 'json', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('context_tests_pkey', ['tenant_id', 'context'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('context_tests').ifExists().execute();
}
