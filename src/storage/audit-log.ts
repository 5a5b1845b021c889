/**
 * The audit trail. Stores that change something call `writeAudit` with
 * their transaction, so an entry exists exactly when its change does; the
 * AuditStore reads, records the one change that writes nothing else (a
 * recompile), and deletes entries past their retention. Nothing updates a
 * row.
 *
 * An entry's id is its number within its tenant (`seq`): the ids a tenant
 * sees count its own entries only. The next number is taken from the
 * tenant's row of `audit_sequences` in the change's transaction, so a
 * tenant's entries are numbered in the order their changes commit; the
 * price is that two audited changes of one tenant finish their
 * transactions one after the other (other tenants never wait).
 */
import { sql, type Kysely } from 'kysely';
import { auditValueText } from './audit-value.ts';
import { guard } from './database-errors.ts';
import type { DatabaseSchema } from './schema.ts';
import {
  InvalidInputError,
  type AuditAction,
  type AuditEntry,
  type AuditQuery,
  type AuditStore,
  type AuditedChange,
  type ChangeOrigin,
  type Page,
} from './types.ts';

type Db = Kysely<DatabaseSchema>;

/**
 * Writes the audit entry of a change, inside the change's transaction
 * (`trx`). Without an origin (a change made at startup, or by a test on
 * storage directly) nothing is written.
 */
export async function writeAudit(trx: Db, tenantId: string, origin: ChangeOrigin | undefined, change: AuditedChange): Promise<void> {
  if (origin === undefined) return;
  const { last_seq: seq } = await trx
    .insertInto('audit_sequences')
    .values({ tenant_id: tenantId, last_seq: '1' })
    .onConflict((conflict) => conflict.column('tenant_id').doUpdateSet({ last_seq: sql`audit_sequences.last_seq + 1` }))
    .returning('last_seq')
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('audit_log')
    .values({
      tenant_id: tenantId,
      seq: String(seq),
      action: change.action,
      actor: JSON.stringify(origin.actor),
      context: change.context ?? null,
      target: change.target ?? null,
      before: change.before === undefined ? null : auditValueText(change.before),
      after: change.after === undefined ? null : auditValueText(change.after),
      note: change.note ?? null,
      request_id: origin.requestId ?? null,
    })
    .execute();
}

/** AuditStore over the audit_log table. */
export class SqlAuditStore implements AuditStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  list(tenantId: string, query: AuditQuery): Promise<Page<AuditEntry>> {
    return guard(async () => {
      let select = this.#db.selectFrom('audit_log').selectAll().where('tenant_id', '=', tenantId);
      if (query.context !== undefined) select = select.where('context', '=', query.context);
      if (query.action !== undefined) select = select.where('action', '=', query.action);
      if (query.since !== undefined) select = select.where('at', '>=', query.since);
      if (query.cursor !== undefined) select = select.where('seq', '<', decodeAuditCursor(query.cursor));
      const rows = await select.orderBy('seq', 'desc').limit(query.limit + 1).execute();
      const page = rows.slice(0, query.limit);
      const items = page.map((row): AuditEntry => ({
        id: String(row.seq),
        at: row.at.toISOString(),
        action: row.action as AuditAction,
        actor: row.actor,
        ...(row.context === null ? {} : { context: row.context }),
        ...(row.target === null ? {} : { target: row.target }),
        ...(row.before === null ? {} : { before: row.before }),
        ...(row.after === null ? {} : { after: row.after }),
        ...(row.note === null ? {} : { note: row.note }),
        ...(row.request_id === null ? {} : { requestId: row.request_id }),
      }));
      const nextCursor = rows.length > query.limit ? encodeAuditCursor(String(page[page.length - 1].seq)) : null;
      return { items, nextCursor };
    });
  }

  record(tenantId: string, origin: ChangeOrigin, change: AuditedChange): Promise<void> {
    return guard(() => this.#db.transaction().execute((trx) => writeAudit(trx, tenantId, origin, change)));
  }

  /**
   * Deletes every tenant's entries committed before `olderThan`,
   * `batch` rows a statement so no one statement runs long; how many went.
   * The numbering goes on after them: a deleted entry's id is never reused.
   */
  deleteOlderThan(olderThan: Date, batch: number): Promise<number> {
    return guard(async () => {
      let deleted = 0;
      for (;;) {
        const oldest = this.#db.selectFrom('audit_log').select('id').where('at', '<', olderThan).limit(batch);
        const result = await this.#db.deleteFrom('audit_log').where('id', 'in', oldest).executeTakeFirst();
        const count = Number(result.numDeletedRows);
        deleted += count;
        if (count < batch) return deleted;
      }
    });
  }
}

/**
 * Cursors are the last id of a page, opaque to clients. The prefix `s:`
 * (not the `a:` of the ids shared by all tenants) refuses a cursor given
 * before ids were counted per tenant, rather than reading it as a number
 * of the new count.
 */
function encodeAuditCursor(id: string): string {
  return Buffer.from(`s:${id}`, 'utf8').toString('base64url');
}

function decodeAuditCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^s:([1-9][0-9]{0,18})$/.exec(text);
  if (match === null || BigInt(match[1]) > 9_223_372_036_854_775_807n) throw new InvalidInputError('cursor is not valid', 'cursor');
  return match[1];
}
