/**
 * The ruleset of a context: locking it, reading it (live or as a publish
 * would make it), and recording a new ruleset version. Every change of
 * what is live goes through advanceRuleset inside the transaction that
 * holds the context lock, so ruleset versions of a context are consecutive
 * and each one's members say exactly what was live; the same transaction
 * announces the new version on the `rules_changes` channel.
 */
import { sql, type Kysely } from 'kysely';
import { notifyChange } from '../sync/change-notice.ts';
import { toRuleDefinition } from '../../compiler/rule-schema.ts';
import type { DatabaseSchema, RulesetMember } from './schema.ts';
import type { ContextRef, ContextVersion, LiveRuleset, RuleContent } from './types.ts';

type Db = Kysely<DatabaseSchema>;

/**
 * Locks the context row for the rest of the transaction (creating it if
 * missing) and returns its current ruleset version. Concurrent lifecycle
 * operations on one context, from any process, queue here.
 */
export async function lockContext(trx: Db, tenantId: string, context: string): Promise<number | null> {
  await trx
    .insertInto('contexts')
    .values({ tenant_id: tenantId, context })
    .onConflict((oc) => oc.columns(['tenant_id', 'context']).doNothing())
    .execute();
  const row = await trx
    .selectFrom('contexts')
    .select('ruleset_version')
    .where('tenant_id', '=', tenantId)
    .where('context', '=', context)
    .forUpdate()
    .executeTakeFirstOrThrow();
  return row.ruleset_version;
}

/** A ruleset plus the rule versions it is made of. */
export interface LoadedRuleset {
  rules: LiveRuleset['rules'];
  members: RulesetMember[];
}

/**
 * The non-archived rules of a context with, per rule, the content of its
 * live version (`live`) or of its latest version (`draft`: what a context
 * publish would make live). Rules never published are absent from `live`.
 */
export async function loadRuleset(
  db: Db,
  tenantId: string,
  context: string,
  mode: 'live' | 'draft',
): Promise<LoadedRuleset> {
  const versionColumn = mode === 'live' ? 'r.published_version' : 'r.version';
  const rows = await db
    .selectFrom('rules as r')
    .innerJoin('rule_versions as v', (join) =>
      join.onRef('v.tenant_id', '=', 'r.tenant_id').onRef('v.rule_id', '=', 'r.id').onRef('v.version', '=', versionColumn),
    )
    .select(['r.id', 'r.code', 'v.version', 'v.content'])
    .where('r.tenant_id', '=', tenantId)
    .where('r.context', '=', context)
    .where('r.archived_at', 'is', null)
    .orderBy('r.code')
    .execute();
  return {
    rules: rows.map((row) => toRuleDefinition(row.code, row.content as unknown as RuleContent)),
    members: rows.map((row) => ({ ruleId: row.id, version: row.version })),
  };
}

/**
 * Records the next ruleset version of a locked context from the live
 * rules as the transaction now sees them, and returns that ruleset for
 * beforeCommit.
 */
export async function advanceRuleset(
  trx: Db,
  tenantId: string,
  context: string,
  current: number | null,
  now: Date,
): Promise<LiveRuleset> {
  const rulesetVersion = (current ?? 0) + 1;
  const { rules, members } = await loadRuleset(trx, tenantId, context, 'live');
  await trx
    .insertInto('ruleset_versions')
    .values({
      tenant_id: tenantId,
      context,
      ruleset_version: rulesetVersion,
      members: JSON.stringify(members),
      created_at: now,
    })
    .execute();
  await trx
    .updateTable('contexts')
    .set({ ruleset_version: rulesetVersion, published_at: now })
    .where('tenant_id', '=', tenantId)
    .where('context', '=', context)
    .execute();
  // Delivered on commit only, so other processes never reload a version
  // that did not go live.
  await notifyChange(trx, { kind: 'ruleset', tenantId, context, rulesetVersion });
  return { tenantId, context, rulesetVersion, rules };
}

/** Marks the given versions as made live at `now`. */
export async function markVersionsPublished(trx: Db, tenantId: string, members: RulesetMember[], now: Date): Promise<void> {
  if (members.length === 0) return;
  await trx
    .updateTable('rule_versions')
    .set({ published_at: now })
    .where('tenant_id', '=', tenantId)
    .where(
      sql<boolean>`(rule_id, version) in (select * from unnest(${members.map((m) => m.ruleId)}::uuid[], ${members.map((m) => m.version)}::int[]))`,
    )
    .execute();
}

/**
 * Current ruleset versions of many contexts (of any tenants) in one query.
 * Contexts without a ruleset version are left out.
 */
export async function rulesetVersionsOf(
  db: Db,
  contexts: readonly ContextRef[],
): Promise<ContextVersion[]> {
  if (contexts.length === 0) return [];
  const rows = await db
    .selectFrom('contexts')
    .select(['tenant_id', 'context', 'ruleset_version'])
    .where(
      sql<boolean>`(tenant_id, context) in (select * from unnest(${contexts.map((c) => c.tenantId)}::text[], ${contexts.map((c) => c.context)}::text[]))`,
    )
    .where('ruleset_version', 'is not', null)
    .execute();
  return rows.map((row) => ({ tenantId: row.tenant_id, context: row.context, rulesetVersion: row.ruleset_version as number }));
}
