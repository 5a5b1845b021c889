/**
 * Tenants, API keys, rules with their immutable versions, and the ruleset
 * history of each context. Every tenant-owned table leads its keys and
 * indexes with tenant_id, so no query of one tenant walks another's rows.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('tenants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('rate_limit_max', 'integer')
    .addColumn('rate_limit_window_ms', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('id', 'uuid', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('admin', 'validator')`))
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('last_used_at', 'timestamptz')
    .addPrimaryKeyConstraint('api_keys_pkey', ['tenant_id', 'id'])
    .execute();
  // Authentication looks a key up by its hash before it knows the tenant,
  // so this is the one index that cannot lead with tenant_id.
  await db.schema.createIndex('api_keys_key_hash_key').unique().on('api_keys').column('key_hash').execute();

  await db.schema
    .createTable('rules')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('id', 'uuid', (c) => c.notNull())
    .addColumn('context', 'text', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('published_version', 'integer')
    .addColumn('archived_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('published_at', 'timestamptz')
    .addPrimaryKeyConstraint('rules_pkey', ['tenant_id', 'id'])
    .execute();
  await db.schema
    .createIndex('rules_live_code_key')
    .unique()
    .on('rules')
    .columns(['tenant_id', 'context', 'code'])
    .where(sql.ref('archived_at'), 'is', null)
    .execute();
  await db.schema.createIndex('rules_list_idx').on('rules').columns(['tenant_id', 'created_at', 'id']).execute();
  await db.schema
    .createIndex('rules_context_list_idx')
    .on('rules')
    .columns(['tenant_id', 'context', 'created_at', 'id'])
    .execute();

  // content is json, not jsonb: jsonb reorders object keys, and key order
  // is visible to users (expectedValue echoes, the order of schema
  // properties and so of schema failures). Queries cast to jsonb where
  // they need operators.
  await db.schema
    .createTable('rule_versions')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('rule_id', 'uuid', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('content', 'json', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('published_at', 'timestamptz')
    .addPrimaryKeyConstraint('rule_versions_pkey', ['tenant_id', 'rule_id', 'version'])
    .addForeignKeyConstraint('rule_versions_rule_fkey', ['tenant_id', 'rule_id'], 'rules', ['tenant_id', 'id'], (c) =>
      c.onDelete('cascade'),
    )
    .execute();

  await db.schema
    .createTable('contexts')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('context', 'text', (c) => c.notNull())
    .addColumn('ruleset_version', 'integer')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('published_at', 'timestamptz')
    .addPrimaryKeyConstraint('contexts_pkey', ['tenant_id', 'context'])
    .execute();

  // What was live in each ruleset version, so a rollback to N knows which
  // rule versions to restore.
  await db.schema
    .createTable('ruleset_versions')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('context', 'text', (c) => c.notNull())
    .addColumn('ruleset_version', 'integer', (c) => c.notNull())
    .addColumn('members', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('ruleset_versions_pkey', ['tenant_id', 'context', 'ruleset_version'])
    .addForeignKeyConstraint('ruleset_versions_context_fkey', ['tenant_id', 'context'], 'contexts', ['tenant_id', 'context'], (c) =>
      c.onDelete('cascade'),
    )
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['ruleset_versions', 'contexts', 'rule_versions', 'rules', 'api_keys', 'tenants']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
