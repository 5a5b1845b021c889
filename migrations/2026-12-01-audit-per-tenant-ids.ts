/**
 * Audit entry ids counted per tenant: `seq` numbers a tenant's entries 1,
 * 2, 3... in the order they were committed, so the ids a tenant sees say
 * nothing of other tenants' changes (the `id` sequence, shared by all
 * tenants, did: its gaps counted them). `id` stays as the row's internal
 * key and is never shown. `audit_sequences` holds each tenant's last
 * number; writeAudit (src/storage/audit-log.ts) takes the next one in the
 * change's transaction. Existing entries are numbered in their old order.
 * The `at` index serves the retention sweep.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('audit_log').addColumn('seq', 'bigint').execute();
  await sql`
    update audit_log set seq = numbered.seq
    from (select id, row_number() over (partition by tenant_id order by id) as seq from audit_log) as numbered
    where audit_log.id = numbered.id
  `.execute(db);
  await db.schema.alterTable('audit_log').alterColumn('seq', (c) => c.setNotNull()).execute();
  await db.schema.createIndex('audit_log_tenant_seq_idx').on('audit_log').columns(['tenant_id', 'seq']).unique().execute();
  await db.schema.createIndex('audit_log_context_seq_idx').on('audit_log').columns(['tenant_id', 'context', 'seq']).execute();
  await db.schema.createIndex('audit_log_at_idx').on('audit_log').column('at').execute();
  await db.schema.dropIndex('audit_log_tenant_idx').execute();
  await db.schema.dropIndex('audit_log_context_idx').execute();
  await db.schema
    .createTable('audit_sequences')
    .addColumn('tenant_id', 'text', (c) => c.primaryKey().references('tenants.id').onDelete('cascade'))
    .addColumn('last_seq', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into audit_sequences (tenant_id, last_seq) select tenant_id, max(seq) from audit_log group by tenant_id`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_sequences').ifExists().execute();
  await db.schema.createIndex('audit_log_tenant_idx').on('audit_log').columns(['tenant_id', 'id']).execute();
  await db.schema.createIndex('audit_log_context_idx').on('audit_log').columns(['tenant_id', 'context', 'id']).execute();
  await db.schema.dropIndex('audit_log_at_idx').execute();
  await db.schema.dropIndex('audit_log_context_seq_idx').execute();
  await db.schema.dropIndex('audit_log_tenant_seq_idx').execute();
  await db.schema.alterTable('audit_log').dropColumn('seq').execute();
}
