/**
 * When each context was last used for validation, so that a starting
 * process compiles first the validators most likely to be asked for. A
 * table of its own rather than a column of contexts: instances write it
 * in the background, and those writes must never wait on (or hold) the
 * row lock a publish takes on its context.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('context_usage')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('context', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('context_usage_pkey', ['tenant_id', 'context'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('context_usage').ifExists().execute();
}
