/**
 * The wire format of change notifications: what one process tells every
 * other process sharing the database when something cached went stale.
 *
 * Storage sends them with pg_notify inside the transaction that makes the
 * change, so PostgreSQL delivers them only on commit, in commit order, and
 * never for a change that rolled back. The same notices travel between the
 * worker processes of one instance over IPC (src/cluster).
 *
 * Payload (JSON, well under PostgreSQL's 8000-byte limit):
 * - `{"kind":"ruleset","tenant":"acme","context":"orders","rulesetVersion":7}`
 * - `{"kind":"key","tenant":"acme","keyId":"<uuid>"}` (revoked, or its role changed)
 * - `{"kind":"tenant","tenant":"acme"}` (its settings changed: the rate-limit budget)
 * - `{"kind":"context-settings","tenant":"acme","context":"orders"}` (the context's settings changed: local validation)
 * - `{"kind":"samples-purge","tenant":"acme","purgedAt":1795000000000}` (its samples were deleted: drop
 *   what is queued of them recorded at or before that time, in ms since the epoch)
 */
import { sql, type Kysely } from 'kysely';

/** The LISTEN/NOTIFY channel every instance listens on. */
export const CHANGES_CHANNEL = 'rules_changes';

/** A context's live ruleset moved to `rulesetVersion` (publish, archive of a live rule, rollback). */
export interface RulesetChange {
  readonly kind: 'ruleset';
  readonly tenantId: string;
  readonly context: string;
  readonly rulesetVersion: number;
}

/** A key must be looked up again: it was revoked, or bootstrap changed it. */
export interface KeyChange {
  readonly kind: 'key';
  readonly tenantId: string;
  readonly keyId: string;
}

/** A tenant's settings changed (its rate-limit budget): read them again. */
export interface TenantChange {
  readonly kind: 'tenant';
  readonly tenantId: string;
}

/** The tenant's samples were deleted (DELETE /tenant/samples): samples recorded at or before `purgedAt` (ms) go. */
export interface SamplesPurgeChange {
  readonly kind: 'samples-purge';
  readonly tenantId: string;
  readonly purgedAt: number;
}

/** A context's settings changed (local validation turned on or off): its change feeds check whether they may stay. */
export interface ContextSettingsChange {
  readonly kind: 'context-settings';
  readonly tenantId: string;
  readonly context: string;
}

export type ChangeNotice = RulesetChange | KeyChange | TenantChange | SamplesPurgeChange | ContextSettingsChange;

/**
 * The JSON text of a notice.
 *
 * @example
 * encodeChangeNotice({ kind: 'key', tenantId: 'acme', keyId }) // '{"kind":"key","tenant":"acme","keyId":"…"}'
 */
export function encodeChangeNotice(notice: ChangeNotice): string {
  switch (notice.kind) {
    case 'ruleset':
      return JSON.stringify({ kind: notice.kind, tenant: notice.tenantId, context: notice.context, rulesetVersion: notice.rulesetVersion });
    case 'key':
      return JSON.stringify({ kind: notice.kind, tenant: notice.tenantId, keyId: notice.keyId });
    case 'tenant':
      return JSON.stringify({ kind: notice.kind, tenant: notice.tenantId });
    case 'samples-purge':
      return JSON.stringify({ kind: notice.kind, tenant: notice.tenantId, purgedAt: notice.purgedAt });
    case 'context-settings':
      return JSON.stringify({ kind: notice.kind, tenant: notice.tenantId, context: notice.context });
  }
}

/**
 * The notice in a payload, or null for anything malformed. Notices come from
 * our own processes, but the channel is open to any database user, so a
 * stray NOTIFY must be ignored rather than crash a listener.
 */
export function parseChangeNotice(text: string): ChangeNotice | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { kind, tenant, context, rulesetVersion, keyId, purgedAt } = value as Record<string, unknown>;
  if (typeof tenant !== 'string' || tenant === '') return null;
  if (kind === 'ruleset' && typeof context === 'string' && context !== '' && Number.isSafeInteger(rulesetVersion)) {
    return { kind, tenantId: tenant, context, rulesetVersion: rulesetVersion as number };
  }
  if (kind === 'key' && typeof keyId === 'string' && keyId !== '') {
    return { kind, tenantId: tenant, keyId };
  }
  if (kind === 'tenant') return { kind, tenantId: tenant };
  if (kind === 'samples-purge' && Number.isSafeInteger(purgedAt)) return { kind, tenantId: tenant, purgedAt: purgedAt as number };
  if (kind === 'context-settings' && typeof context === 'string' && context !== '') return { kind, tenantId: tenant, context };
  return null;
}

/**
 * Queues the notice in the current transaction (or sends it at once outside
 * one). Works on PGlite too, where nobody listens and it costs nothing.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw SQL only: any schema will do
export async function notifyChange(db: Kysely<any>, notice: ChangeNotice): Promise<void> {
  await sql`select pg_notify(${CHANGES_CHANNEL}, ${encodeChangeNotice(notice)})`.execute(db);
}
