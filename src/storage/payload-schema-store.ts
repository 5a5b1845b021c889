/**
 * Payload schemas of contexts (docs/api.md, "Payload schemas"), one per
 * tenant and context. The store keeps what it is given; checking a schema
 * against the schema policy is the caller's job (src/rules/payload-schemas.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { writeAudit } from './audit-log.ts';
import { guard } from './database-errors.ts';
import type { DatabaseSchema } from './schema.ts';
import type { ChangeOrigin, PayloadSchemaStore, StoredPayloadSchema } from './types.ts';

/** PayloadSchemaStore over the payload_schemas table. */
export class SqlPayloadSchemaStore implements PayloadSchemaStore {
  readonly #db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.#db = db;
  }

  get(tenantId: string, context: string): Promise<StoredPayloadSchema | null> {
    return guard(async () => {
      const row = await this.#db
        .selectFrom('payload_schemas')
        .select(['schema', 'revision'])
        .where('tenant_id', '=', tenantId)
        .where('context', '=', context)
        .executeTakeFirst();
      return row === undefined ? null : { schema: row.schema, revision: row.revision };
    });
  }

  revision(tenantId: string, context: string): Promise<string | null> {
    return guard(async () => {
      const row = await this.#db
        .selectFrom('payload_schemas')
        .select('revision')
        .where('tenant_id', '=', tenantId)
        .where('context', '=', context)
        .executeTakeFirst();
      return row?.revision ?? null;
    });
  }

  put(tenantId: string, context: string, schema: unknown, origin?: ChangeOrigin): Promise<StoredPayloadSchema> {
    return guard(() => this.#db.transaction().execute(async (trx) => {
      const before = await schemaOf(trx, tenantId, context);
      const revision = randomUUID();
      const json = JSON.stringify(schema);
      const now = new Date();
      // An upsert: two first writes of a context at once both find no row to lock.
      await trx
        .insertInto('payload_schemas')
        .values({ tenant_id: tenantId, context, schema: json, revision, updated_at: now })
        .onConflict((oc) => oc.columns(['tenant_id', 'context']).doUpdateSet({ schema: json, revision, updated_at: now }))
        .execute();
      await writeAudit(trx, tenantId, origin, { action: 'context.payload-schema', context, before, after: schema });
      return { schema, revision };
    }));
  }

  delete(tenantId: string, context: string, origin?: ChangeOrigin): Promise<boolean> {
    return guard(() => this.#db.transaction().execute(async (trx) => {
      const before = await schemaOf(trx, tenantId, context);
      if (before === undefined) return false;
      await trx.deleteFrom('payload_schemas').where('tenant_id', '=', tenantId).where('context', '=', context).execute();
      await writeAudit(trx, tenantId, origin, { action: 'context.payload-schema', context, before });
      return true;
    }));
  }
}

/** The stored schema, its row locked for the rest of the transaction; undefined when there is none. */
async function schemaOf(trx: Kysely<DatabaseSchema>, tenantId: string, context: string): Promise<unknown> {
  const row = await trx
    .selectFrom('payload_schemas')
    .select('schema')
    .where('tenant_id', '=', tenantId)
    .where('context', '=', context)
    .forUpdate()
    .executeTakeFirst();
  return row?.schema;
}
