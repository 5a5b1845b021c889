/**
 * API keys, stored as SHA-256 hashes. Revocation of a tenant's admin keys
 * locks the tenant row, so two concurrent revocations cannot each believe
 * the other key keeps the tenant administrable. A revocation (or a role
 * change by bootstrap) is announced on the `rules_changes` channel so other
 * processes drop the key from their authentication caches.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import { notifyChange } from '../sync/change-notice.ts';
import { guard } from './database-errors.ts';
import { isUuid } from './identifiers.ts';
import type { ApiKeysTable, DatabaseSchema } from './schema.ts';
import {
  ApiKeyNotFoundError, ConflictError, type ApiKeyRecord, type ApiKeyStore, type ChangeOrigin, type EnsuredApiKey, type KeyRef, type Role,
} from './types.ts';
import { writeAudit } from './audit-log.ts';
import { TUNING } from '../tuning.ts';

const KEY_COLUMNS = ['id', 'tenant_id', 'name', 'role', 'created_at', 'revoked_at', 'last_used_at'] as const;
type KeyRow = Pick<Selectable<ApiKeysTable>, (typeof KEY_COLUMNS)[number]>;

function toRecord(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    role: row.role,
    createdAt: row.created_at.toISOString(),
    revokedAt: row.revoked_at?.toISOString() ?? null,
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
  };
}

/** What the audit trail keeps of a key: never its secret or hash. */
function auditedKey(record: ApiKeyRecord): object {
  return { id: record.id, name: record.name, role: record.role, createdAt: record.createdAt, revokedAt: record.revokedAt };
}

/** ApiKeyStore over the api_keys table. */
export class SqlApiKeyStore implements ApiKeyStore {
  readonly #db: Kysely<DatabaseSchema>;

  constructor(db: Kysely<DatabaseSchema>) {
    this.#db = db;
  }

  create(tenantId: string, name: string, role: Role, keyHash: string, origin?: ChangeOrigin): Promise<ApiKeyRecord> {
    return guard(() => this.#db.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('api_keys')
        .values({ tenant_id: tenantId, id: randomUUID(), name, role, key_hash: keyHash, created_at: new Date() })
        .returning(KEY_COLUMNS)
        .executeTakeFirstOrThrow();
      const record = toRecord(row);
      await writeAudit(trx, tenantId, origin, { action: 'key.create', target: record.id, after: auditedKey(record) });
      return record;
    }), 'an API key with this hash already exists');
  }

  ensure(tenantId: string, name: string, role: Role, keyHash: string): Promise<EnsuredApiKey> {
    return guard(async () => {
      const existing = await this.#db
        .selectFrom('api_keys')
        .select(KEY_COLUMNS)
        .where('key_hash', '=', keyHash)
        .executeTakeFirst();
      if (existing === undefined) {
        const row = await this.#db
          .insertInto('api_keys')
          .values({ tenant_id: tenantId, id: randomUUID(), name, role, key_hash: keyHash, created_at: new Date() })
          .onConflict((oc) => oc.column('key_hash').doNothing())
          .returning(KEY_COLUMNS)
          .executeTakeFirst();
        // Lost a race with another instance bootstrapping the same key.
        if (row === undefined) return this.ensure(tenantId, name, role, keyHash);
        return { key: toRecord(row), outcome: 'created' };
      }
      if (existing.tenant_id !== tenantId) {
        throw new ConflictError('this key is already registered for another tenant');
      }
      // A revocation is a decision someone made, audited, for a reason
      // (a leaked key, a person gone): configuration left unchanged since
      // does not undo it. The update below only touches an active key, so a
      // revocation committing meanwhile is not undone either.
      if (existing.revoked_at !== null) return { key: toRecord(existing), outcome: 'revoked' };
      if (existing.role === role) return { key: toRecord(existing), outcome: 'active' };
      const row = await this.#db
        .updateTable('api_keys')
        .set({ role })
        .where('tenant_id', '=', tenantId)
        .where('id', '=', existing.id)
        .where('revoked_at', 'is', null)
        .returning(KEY_COLUMNS)
        .executeTakeFirst();
      if (row === undefined) return this.ensure(tenantId, name, role, keyHash);
      // Another process may hold the key with its old role.
      await notifyChange(this.#db, { kind: 'key', tenantId, keyId: existing.id });
      return { key: toRecord(row), outcome: 'active' };
    });
  }

  findActiveByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    return guard(async () => {
      const row = await this.#db
        .selectFrom('api_keys')
        .select(KEY_COLUMNS)
        .where('key_hash', '=', keyHash)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return row === undefined ? null : toRecord(row);
    });
  }

  list(tenantId: string): Promise<ApiKeyRecord[]> {
    return guard(async () => {
      const rows = await this.#db
        .selectFrom('api_keys')
        .select(KEY_COLUMNS)
        .where('tenant_id', '=', tenantId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toRecord);
    });
  }

  revoke(tenantId: string, keyId: string, origin?: ChangeOrigin): Promise<ApiKeyRecord> {
    return guard(() =>
      this.#db.transaction().execute(async (trx) => {
        if (!isUuid(keyId)) throw new ApiKeyNotFoundError();
        await trx.selectFrom('tenants').select('id').where('id', '=', tenantId).forUpdate().execute();
        const key = await trx
          .selectFrom('api_keys')
          .select(KEY_COLUMNS)
          .where('tenant_id', '=', tenantId)
          .where('id', '=', keyId)
          .executeTakeFirst();
        if (key === undefined) throw new ApiKeyNotFoundError();
        if (key.revoked_at !== null) return toRecord(key);
        if (key.role === 'admin') {
          const { count } = await trx
            .selectFrom('api_keys')
            .select(sql<number>`count(*)::int`.as('count'))
            .where('tenant_id', '=', tenantId)
            .where('role', '=', 'admin')
            .where('revoked_at', 'is', null)
            .executeTakeFirstOrThrow();
          if (count <= 1) throw new ConflictError("cannot revoke the tenant's last active admin key");
        }
        const row = await trx
          .updateTable('api_keys')
          .set({ revoked_at: new Date() })
          .where('tenant_id', '=', tenantId)
          .where('id', '=', keyId)
          .returning(KEY_COLUMNS)
          .executeTakeFirstOrThrow();
        await notifyChange(trx, { kind: 'key', tenantId, keyId });
        const revoked = toRecord(row);
        await writeAudit(trx, tenantId, origin, { action: 'key.revoke', target: keyId, before: auditedKey(toRecord(key)), after: auditedKey(revoked) });
        return revoked;
      }),
    );
  }

  activeAmong(keys: readonly KeyRef[]): Promise<Array<KeyRef & { role: Role }>> {
    return guard(async () => {
      const wellFormed = keys.filter((k) => isUuid(k.keyId));
      const active: Array<KeyRef & { role: Role }> = [];
      const chunkSize = TUNING.activeKeyCheckChunk.value;
      for (let start = 0; start < wellFormed.length; start += chunkSize) {
        const chunk = wellFormed.slice(start, start + chunkSize);
        const rows = await this.#db
          .selectFrom('api_keys')
          .select(['tenant_id', 'id', 'role'])
          .where(
            sql<boolean>`(tenant_id, id) in (select * from unnest(${chunk.map((k) => k.tenantId)}::text[], ${chunk.map((k) => k.keyId)}::uuid[]))`,
          )
          .where('revoked_at', 'is', null)
          .execute();
        for (const row of rows) active.push({ tenantId: row.tenant_id, keyId: row.id, role: row.role });
      }
      return active;
    });
  }

  touch(usedAt: Map<string, Date>): Promise<void> {
    return guard(async () => {
      const ids: string[] = [];
      const times: string[] = [];
      for (const [id, at] of usedAt) {
        if (!isUuid(id)) continue;
        ids.push(id);
        times.push(at.toISOString());
      }
      if (ids.length === 0) return;
      // One statement for the whole batch; greatest() keeps a newer value
      // another instance may have written.
      await sql`
        update api_keys as k
        set last_used_at = greatest(k.last_used_at, u.used_at)
        from unnest(${ids}::uuid[], ${times}::timestamptz[]) as u(id, used_at)
        where k.id = u.id`.execute(this.#db);
    });
  }
}
