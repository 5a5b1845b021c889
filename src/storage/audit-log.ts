/**
 * The audit trail. Stores that change something call `writeAudit` with
 * their transaction, so an entry exists exactly when its change does; the
 * AuditStore only reads (and records the one change that writes nothing
 * else, a recompile). Nothing updates or deletes a row.
 */
import type { Kysely } from 'kysely';
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
  await trx
    .insertInto('audit_log')
    .values({
      tenant_id: tenantId,
      action: change.action,
      actor: JSON.stringify(origin.actor),
      context: change.context ?? null,
      target: change.target ?? null,
      before: change.before === undefined ? null : JSON.stringify(change.before),
      after: change.after === undefined ? null : JSON.stringify(change.after),
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
      if (query.cursor !== undefined) select = select.where('id', '<', decodeAuditCursor(query.cursor));
      const rows = await select.orderBy('id', 'desc').limit(query.limit + 1).execute();
      const page = rows.slice(0, query.limit);
      const items = page.map((row): AuditEntry => ({
        id: String(row.id),
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
      const nextCursor = rows.length > query.limit ? encodeAuditCursor(String(page[page.length - 1].id)) : null;
      return { items, nextCursor };
    });
  }

  record(tenantId: string, origin: ChangeOrigin, change: AuditedChange): Promise<void> {
    return guard(() => writeAudit(this.#db, tenantId, origin, change));
  }
}

/** Cursors are the last id of a page, opaque to clients. */
function encodeAuditCursor(id: string): string {
  return Buffer.from(`a:${id}`, 'utf8').toString('base64url');
}

function decodeAuditCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = /^a:([1-9][0-9]{0,18})$/.exec(text);
  if (match === null || BigInt(match[1]) > 9_223_372_036_854_775_807n) throw new InvalidInputError('cursor is not valid', 'cursor');
  return match[1];
}
