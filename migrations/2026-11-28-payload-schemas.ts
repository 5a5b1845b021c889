/**
 * The payload schema of each context (docs/api.md, "Payload schemas"): a
 * JSON Schema that says what the context's payloads look like, read only
 * by the save-time warnings. A table of its own, keyed by tenant and
 * context name: a schema may be declared before the context has rules, and
 * writing it never touches the rows a publish locks.
 *
 * `schema` is json, not jsonb, so that GET answers it with its keys in the
 * order they were sent. `revision` changes with every write, so that a
 * process holding a parsed copy can tell with one small read whether it is
 * still the current one.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('payload_schemas')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('context', 'text', (c) => c.notNull())
    .addColumn('schema', 'json', (c) => c.notNull())
    .addColumn('revision', 'uuid', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('payload_schemas_pkey', ['tenant_id', 'context'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('payload_schemas').ifExists().execute();
}
