/**
 * The audit trail: one row per change made through the API or the CLI,
 * written in the transaction of the change. Rows are only ever inserted.
 * `id` is a sequence, so "newest first" is a plain index scan and cursors
 * are the last id seen.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('actor', 'json', (c) => c.notNull())
    .addColumn('context', 'text')
    .addColumn('target', 'text')
    .addColumn('before', 'json')
    .addColumn('after', 'json')
    .addColumn('note', 'text')
    .addColumn('request_id', 'text')
    .execute();
  await db.schema.createIndex('audit_log_tenant_idx').on('audit_log').columns(['tenant_id', 'id']).execute();
  await db.schema.createIndex('audit_log_context_idx').on('audit_log').columns(['tenant_id', 'context', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_log').ifExists().execute();
}
