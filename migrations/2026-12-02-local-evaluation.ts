/**
 * Local evaluation (docs/api.md, "Local evaluation"):
 *
 * - `contexts.local_validation`: whether the context's compiled module may
 *   be served to `client` keys and its change feed followed; off by default.
 * - the `client` key role, which may fetch the modules and events of such
 *   contexts and send their samples, and nothing else.
 * - `tenants.cors_origins`: the browser origins allowed to call those routes
 *   across origins (a JSON array of strings; empty by default).
 * - `signing_keys`: the Ed25519 key pair that signs the served modules when
 *   operators configure none, made at the first start and shared by every
 *   instance on the database. One row at most (`slot` is always 1), so two
 *   instances starting together cannot make two keys.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // The initial schema's check on role has PostgreSQL's default name.
  await sql`alter table api_keys drop constraint if exists api_keys_role_check`.execute(db);
  await sql`alter table api_keys add constraint api_keys_role_check check (role in ('admin', 'validator', 'client'))`.execute(db);
  await db.schema.alterTable('contexts').addColumn('local_validation', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
  await db.schema.alterTable('tenants').addColumn('cors_origins', 'json', (c) => c.notNull().defaultTo(sql`'[]'::json`)).execute();
  await db.schema
    .createTable('signing_keys')
    .addColumn('slot', 'smallint', (c) => c.primaryKey().check(sql`slot = 1`))
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('private_key_pem', 'text', (c) => c.notNull())
    .addColumn('public_key_pem', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('signing_keys').execute();
  await db.schema.alterTable('tenants').dropColumn('cors_origins').execute();
  await db.schema.alterTable('contexts').dropColumn('local_validation').execute();
  await sql`delete from api_keys where role = 'client'`.execute(db);
  await sql`alter table api_keys drop constraint if exists api_keys_role_check`.execute(db);
  await sql`alter table api_keys add constraint api_keys_role_check check (role in ('admin', 'validator'))`.execute(db);
}
