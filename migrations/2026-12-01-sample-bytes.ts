/**
 * Samples counted in bytes (docs/operations.md, "Sampling"): each sample's
 * `stored_bytes` (the UTF-8 length of its payload's and failing rule codes'
 * JSON text, as stored), and each tenant's total on its row
 * (`samples_bytes`), which the sample writer keeps under
 * SAMPLES_MAX_BYTES_PER_TENANT by deleting the tenant's oldest samples,
 * read by the (tenant, recorded_at, id) index. Every change of a tenant's
 * samples updates the total in the same transaction, with the tenant's row
 * locked first. Existing samples are measured here.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('samples').addColumn('stored_bytes', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await sql`update samples set stored_bytes = octet_length(payload::text) + octet_length(failures::text)`.execute(db);
  await db.schema.alterTable('tenants').addColumn('samples_bytes', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await sql`
    update tenants set samples_bytes = totals.bytes
    from (select tenant_id, sum(stored_bytes) as bytes from samples group by tenant_id) as totals
    where tenants.id = totals.tenant_id
  `.execute(db);
  await db.schema.createIndex('samples_tenant_oldest_idx').on('samples').columns(['tenant_id', 'recorded_at', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('samples_tenant_oldest_idx').execute();
  await db.schema.alterTable('tenants').dropColumn('samples_bytes').execute();
  await db.schema.alterTable('samples').dropColumn('stored_bytes').execute();
}
