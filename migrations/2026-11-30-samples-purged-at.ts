/**
 * When the tenant's samples were last purged (DELETE /tenant/samples): the
 * sample writer of every instance stores a sample only when it was
 * recorded after that time, so a sample still queued in another process at
 * the purge cannot appear after it (docs/operations.md, "Sampling").
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tenants').addColumn('samples_purged_at', 'timestamptz').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tenants').dropColumn('samples_purged_at').execute();
}
