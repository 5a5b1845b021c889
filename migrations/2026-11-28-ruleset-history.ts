/**
 * The history of each context's ruleset versions: what made a version
 * (publish, archive of a live rule, rollback, import), the note the caller
 * gave, and the API key that made it. Which rule versions were live in a
 * version was already recorded (ruleset_versions.members), so every
 * version's rules can be read back; this adds the why and the who.
 *
 * Versions recorded before this migration get an action inferred from
 * their members (below), no note and no actor: that was never stored.
 */
import { sql, type Kysely } from 'kysely';

type Action = 'publish' | 'archive' | 'rollback';

interface Member {
  ruleId: string;
  version: number;
}

interface VersionRow {
  ruleset_version: number;
  members: Member[];
  created_at: Date;
}

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('ruleset_versions')
    .addColumn('action', 'text', (c) => c.check(sql`action in ('publish', 'archive', 'rollback', 'import')`))
    .execute();
  await db.schema.alterTable('ruleset_versions').addColumn('note', 'text').execute();
  // The key as it was when it made the change: keys are revoked, never
  // deleted, but the name is kept here so history reads without a join.
  await db.schema.alterTable('ruleset_versions').addColumn('actor_key_id', 'uuid').execute();
  await db.schema.alterTable('ruleset_versions').addColumn('actor_key_name', 'text').execute();

  await backfillActions(db);
  await db.schema.alterTable('ruleset_versions').alterColumn('action', (c) => c.setNotNull()).execute();
}

/**
 * Infers the action of each existing version, one context at a time (so
 * memory holds one context's history):
 * - a rollback inserts copies of old rule versions with the version's own
 *   timestamp, which nothing else does; a rollback that changed nothing
 *   has the same members as the version before it;
 * - an archive leaves the members of the version before it less one rule
 *   (fewer or the same members, added nothing: a rollback);
 * - anything else is a publish.
 * A rollback that only archived one rule reads as an archive.
 */
async function backfillActions(db: Kysely<any>): Promise<void> {
  const contexts = await db
    .selectFrom('ruleset_versions')
    .select(['tenant_id', 'context'])
    .distinct()
    .execute() as Array<{ tenant_id: string; context: string }>;
  for (const { tenant_id: tenantId, context } of contexts) {
    const versions = await db
      .selectFrom('ruleset_versions')
      .select(['ruleset_version', 'members', 'created_at'])
      .where('tenant_id', '=', tenantId)
      .where('context', '=', context)
      .orderBy('ruleset_version')
      .execute() as VersionRow[];
    const copies = await db
      .selectFrom('rule_versions as v')
      .innerJoin('rules as r', (join) => join.onRef('r.tenant_id', '=', 'v.tenant_id').onRef('r.id', '=', 'v.rule_id'))
      .select(['v.rule_id', 'v.version', 'v.created_at'])
      .where('v.tenant_id', '=', tenantId)
      .where('r.context', '=', context)
      .whereRef('v.created_at', '=', 'v.published_at')
      .execute() as Array<{ rule_id: string; version: number; created_at: Date }>;
    const copiedAt = new Map(copies.map((c) => [`${c.rule_id}@${c.version}`, c.created_at.getTime()]));
    let previous: Set<string> | null = null;
    for (const row of versions) {
      const members = new Set(row.members.map((m) => `${m.ruleId}@${m.version}`));
      const action = inferAction(previous, members, (member) => copiedAt.get(member) === row.created_at.getTime());
      await db
        .updateTable('ruleset_versions')
        .set({ action })
        .where('tenant_id', '=', tenantId)
        .where('context', '=', context)
        .where('ruleset_version', '=', row.ruleset_version)
        .execute();
      previous = members;
    }
  }
}

function inferAction(previous: Set<string> | null, members: Set<string>, copiedNow: (member: string) => boolean): Action {
  if (previous === null) return 'publish';
  if ([...members].some(copiedNow)) return 'rollback';
  const added = [...members].filter((m) => !previous.has(m));
  if (added.length > 0) return 'publish';
  return previous.size - members.size === 1 ? 'archive' : 'rollback';
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['actor_key_name', 'actor_key_id', 'note', 'action']) {
    await db.schema.alterTable('ruleset_versions').dropColumn(column).execute();
  }
}
