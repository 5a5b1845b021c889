/**
 * Sampled traffic (docs/operations.md, "Sampling"): a tenant's sampling
 * settings on its row (off by default), and the samples themselves, one row
 * per recorded validation. `id` is a uuid so a sample's address tells
 * nothing about how many there are; "newest first" reads the
 * (tenant, context, recorded_at) index. `json`, not `jsonb`: a payload keeps
 * the key order it came with.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('tenants')
    .addColumn('sampling_rate', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('sampling_max_samples', 'integer')
    .addColumn('sampling_retention_hours', 'integer')
    .execute();
  await db.schema
    .createTable('samples')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('context', 'text', (c) => c.notNull())
    .addColumn('recorded_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ruleset_version', 'integer', (c) => c.notNull())
    .addColumn('is_valid', 'boolean', (c) => c.notNull())
    .addColumn('failures', 'json', (c) => c.notNull())
    .addColumn('payload', 'json', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('samples_newest_idx')
    .on('samples')
    .columns(['tenant_id', 'context', 'recorded_at desc'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('samples').ifExists().execute();
  await db.schema
    .alterTable('tenants')
    .dropColumn('sampling_rate')
    .dropColumn('sampling_max_samples')
    .dropColumn('sampling_retention_hours')
    .execute();
}
