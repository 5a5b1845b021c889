/**
 * The history of a context's ruleset versions (docs/api.md, "History and
 * diff"): the list of versions with what made each, and the rules of any
 * of them, of the live ruleset or of the draft (what a context publish
 * would make live). Versions are written by context-rulesets.ts; this
 * module only reads.
 *
 * A context is known when it has a ruleset version or any rule (even an
 * archived one), as GET /contexts lists it; others are ContextNotFoundError.
 */
import { sql, type Kysely } from 'kysely';
import { loadRuleset, membersAt, snapshotsOf } from './context-rulesets.ts';
import { guard } from './database-errors.ts';
import type { DatabaseSchema } from './schema.ts';
import {
  ContextNotFoundError,
  InvalidInputError,
  RulesetVersionNotFoundError,
  type ContextHistoryStore,
  type Page,
  type RulesetRef,
  type RulesetSnapshot,
  type RulesetVersionSummary,
} from './types.ts';

type Db = Kysely<DatabaseSchema>;

/** The largest ruleset version the database can hold (int4); larger ones are simply unknown. */
const MAX_VERSION = 2_147_483_647;

/** ContextHistoryStore over the contexts, ruleset_versions, rules and rule_versions tables. */
export class SqlContextHistoryStore implements ContextHistoryStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  versions(tenantId: string, context: string, page: { limit: number; cursor?: string }): Promise<Page<RulesetVersionSummary>> {
    return guard(async () => {
      const before = page.cursor === undefined ? undefined : decodeVersionCursor(page.cursor);
      await currentVersion(this.#db, tenantId, context);
      let query = this.#db
        .selectFrom('ruleset_versions')
        .select([
          'ruleset_version', 'action', 'note', 'created_at', 'actor_key_id', 'actor_key_name',
          sql<number>`jsonb_array_length(members)`.as('rules'),
        ])
        .where('tenant_id', '=', tenantId)
        .where('context', '=', context);
      if (before !== undefined) query = query.where('ruleset_version', '<', before);
      const limit = Math.max(1, Math.floor(page.limit));
      // One row more than the page tells whether another page follows.
      const rows = await query.orderBy('ruleset_version', 'desc').limit(limit + 1).execute();
      const items = rows.slice(0, limit).map((row) => ({
        rulesetVersion: row.ruleset_version,
        action: row.action,
        note: row.note,
        rules: row.rules,
        createdAt: row.created_at.toISOString(),
        actor: row.actor_key_id === null ? null : { keyId: row.actor_key_id, keyName: row.actor_key_name ?? '' },
      }));
      const last = items.at(-1);
      return { items, nextCursor: rows.length > limit && last !== undefined ? encodeVersionCursor(last.rulesetVersion) : null };
    });
  }

  rulesets(tenantId: string, context: string, refs: readonly RulesetRef[]): Promise<RulesetSnapshot[]> {
    // One snapshot for every side, so a publish committing in between
    // cannot make `live` of one side and `draft` of the other disagree.
    return guard(() =>
      this.#db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute(async (trx) => {
          const current = await currentVersion(trx, tenantId, context);
          const out: RulesetSnapshot[] = [];
          for (const ref of refs) {
            if (ref === 'draft') {
              out.push({ rulesetVersion: null, rules: (await loadRuleset(trx, tenantId, context, 'draft')).snapshots() });
            } else if (ref === 'live') {
              const rules = current === null ? [] : (await loadRuleset(trx, tenantId, context, 'live')).snapshots();
              out.push({ rulesetVersion: current, rules });
            } else {
              const members = Number.isSafeInteger(ref) && ref >= 1 && ref <= MAX_VERSION ? await membersAt(trx, tenantId, context, ref) : undefined;
              if (members === undefined) throw new RulesetVersionNotFoundError(context, ref);
              out.push({ rulesetVersion: ref, rules: await snapshotsOf(trx, tenantId, context, members) });
            }
          }
          return out;
        }),
    );
  }
}

/** The context's live ruleset version (null: never published); ContextNotFoundError when the context is unknown. */
async function currentVersion(db: Db, tenantId: string, context: string): Promise<number | null> {
  const row = await db
    .selectFrom('contexts as c')
    .select([
      'c.ruleset_version',
      sql<boolean>`exists (select 1 from rules r where r.tenant_id = c.tenant_id and r.context = c.context)`.as('has_rules'),
    ])
    .where('c.tenant_id', '=', tenantId)
    .where('c.context', '=', context)
    .executeTakeFirst();
  if (row === undefined || (row.ruleset_version === null && !row.has_rules)) throw new ContextNotFoundError(context);
  return row.ruleset_version;
}

/** Opaque cursors of the versions list: base64url of the last version listed; the next page holds older ones. */
function encodeVersionCursor(rulesetVersion: number): string {
  return Buffer.from(JSON.stringify({ before: rulesetVersion }), 'utf8').toString('base64url');
}

function decodeVersionCursor(cursor: string): number {
  const invalid = new InvalidInputError('cursor is not valid', 'cursor');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  const before = (parsed as { before?: unknown } | null)?.before;
  if (typeof before !== 'number' || !Number.isSafeInteger(before) || before < 1) throw invalid;
  return before;
}
