/**
 * The ruleset of a context: locking it, reading it (live, as a publish
 * would make it, or as it was at a ruleset version), and recording a new
 * ruleset version. Every change of what is live goes through
 * advanceRuleset inside the transaction that holds the context lock, so
 * ruleset versions of a context are consecutive and each one's members
 * say exactly what was live, with what made it (action), the caller's
 * note and the API key; the same transaction announces the new version on
 * the `rules_changes` channel.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { notifyChange } from '../sync/change-notice.ts';
import { toRuleDefinition } from '../../compiler/rule-schema.ts';
import { changedCodes, diffRulesetsSteps } from './ruleset-diff.ts';
import { TUNING } from '../tuning.ts';
import { runInSlices } from '../time-slices.ts';
import { normalizeContent } from './rule-content.ts';
import type { DatabaseSchema, RulesetAction, RulesetMember } from './schema.ts';
import type {
  ChangeInfo, ContextRef, ContextVersion, LiveRuleset, RuleContent, RuleSnapshot, RulesetChanges,
} from './types.ts';

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

/** The context's live ruleset version, without locking; null when it has none (or no row yet). */
export async function liveRulesetVersion(db: Db, tenantId: string, context: string): Promise<number | null> {
  const row = await db
    .selectFrom('contexts')
    .select('ruleset_version')
    .where('tenant_id', '=', tenantId)
    .where('context', '=', context)
    .executeTakeFirst();
  return row?.ruleset_version ?? null;
}

/** A ruleset plus the rule versions it is made of. */
export interface LoadedRuleset {
  rules: LiveRuleset['rules'];
  members: RulesetMember[];
  /**
   * The same rules as a POST takes them, by code; those `which` keeps when
   * given. Made when asked: a publish of one rule of thousands needs one.
   */
  snapshots: (which?: (index: number) => boolean) => RuleSnapshot[];
}

/**
 * The non-archived rules of a context with, per rule, the content of its
 * live version (`live`) or of its latest version (`draft`: what a context
 * publish would make live). Rules never published are absent from `live`.
 *
 * The rows become rules in slices of TUNING.installSliceMs: a context of
 * thousands of rules took tens of milliseconds at once, on the event loop
 * that answers every tenant's validations (a publish reads its rules twice,
 * and every process that follows its change notice once more).
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
  const rules = await runInSlices(mapInSteps(rows, (row) => toRuleDefinition(row.code, row.content as unknown as RuleContent)), TUNING.installSliceMs.value);
  return {
    rules,
    members: rows.map((row) => ({ ruleId: row.id, version: row.version })),
    snapshots: (which) => rows.flatMap((row, i) => (which === undefined || which(i) ? [toSnapshot(context, row.code, row.content)] : [])),
  };
}

/** `items.map(convert)`, one item a step. */
function* mapInSteps<T, U>(items: readonly T[], convert: (item: T) => U): Generator<void, U[], void> {
  const out: U[] = [];
  for (const item of items) {
    out.push(convert(item));
    yield;
  }
  return out;
}

/** The rules of a context as loadRuleset reads them, left as the database's JSON text. */
export interface RulesText {
  /** `[{ "code": ..., "content": ... }, ...]` (with ids, also `id` and `version`), sorted by code: each content as stored. */
  json: string;
  count: number;
  /** Whether every rule's latest version is its live one (so the drafts are what is live). */
  allLive: boolean;
}

/**
 * The rules loadRuleset would read, as one JSON text the database writes:
 * a management thread parses it (src/pool/tasks/stored-rules.ts), so the
 * event loop never parses or walks thousands of rules.
 */
export async function loadRulesText(db: Db, tenantId: string, context: string, mode: 'live' | 'draft', withIds = false): Promise<RulesText> {
  const versionColumn = mode === 'live' ? 'r.published_version' : 'r.version';
  // With ids, each rule also says which of its versions the content is (as an import's comparison must: import-changes.ts).
  const rule = withIds
    ? sql`json_build_object('id', r.id, 'version', r.version, 'code', r.code, 'content', v.content)`
    : sql`json_build_object('code', r.code, 'content', v.content)`;
  const row = await db
    .selectFrom('rules as r')
    .innerJoin('rule_versions as v', (join) =>
      join.onRef('v.tenant_id', '=', 'r.tenant_id').onRef('v.rule_id', '=', 'r.id').onRef('v.version', '=', versionColumn),
    )
    .select([
      // The same order as loadRuleset's: by code, in the column's collation.
      sql<string>`coalesce(json_agg(${rule} order by r.code)::text, '[]')`.as('json'),
      sql<number>`count(*)::int`.as('count'),
      sql<boolean>`coalesce(bool_and(r.published_version is not null and r.published_version = r.version), true)`.as('allLive'),
    ])
    .where('r.tenant_id', '=', tenantId)
    .where('r.context', '=', context)
    .where('r.archived_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { json: row.json, count: Number(row.count), allLive: row.allLive };
}

/** A rule version's content as a POST takes it. */
export function toSnapshot(context: string, code: string, content: unknown): RuleSnapshot {
  return { context, code, ...normalizeContent(content as RuleContent) };
}

/**
 * The members of a recorded ruleset version, or undefined when the
 * context has no such version.
 */
export async function membersAt(db: Db, tenantId: string, context: string, rulesetVersion: number): Promise<RulesetMember[] | undefined> {
  const row = await db
    .selectFrom('ruleset_versions')
    .select('members')
    .where('tenant_id', '=', tenantId)
    .where('context', '=', context)
    .where('ruleset_version', '=', rulesetVersion)
    .executeTakeFirst();
  return row?.members;
}

/**
 * The rules of the given rule versions as a POST takes them, sorted by
 * code: one query however many there are. A rule's code never changes, so
 * the rules row gives the code of any of its versions.
 */
export async function snapshotsOf(db: Db, tenantId: string, context: string, members: readonly RulesetMember[]): Promise<RuleSnapshot[]> {
  if (members.length === 0) return [];
  const rows = await db
    .selectFrom('rule_versions as v')
    .innerJoin('rules as r', (join) => join.onRef('r.tenant_id', '=', 'v.tenant_id').onRef('r.id', '=', 'v.rule_id'))
    .select(['r.code', 'v.content'])
    .where('v.tenant_id', '=', tenantId)
    .where(
      sql<boolean>`(v.rule_id, v.version) in (select * from unnest(${members.map((m) => m.ruleId)}::uuid[], ${members.map((m) => m.version)}::int[]))`,
    )
    .orderBy('r.code')
    .execute();
  return runInSlices(mapInSteps(rows, (row) => toSnapshot(context, row.code, row.content)), TUNING.installSliceMs.value);
}

/** The live rules a change is about to make live, with what they were read from. */
interface RulesGoingLive {
  rules: LiveRuleset['rules'];
  members: RulesetMember[];
  versionsDigest: string;
  /** The rules as a POST takes them, by code, of those `which` keeps. */
  snapshots: (which: (index: number) => boolean) => Promise<RuleSnapshot[]>;
}

/**
 * The live rules as the transaction now sees them. When `readBefore` was
 * read from exactly these rule versions (the dry run of the same operation,
 * validators/early-compile.ts), its rules are handed over and only the
 * versions are read: a rule version's content never changes, so the rules
 * are the same, and the event loop is spared parsing and converting
 * thousands of rules a second time. The few snapshots the change record
 * needs (the rules entering) are then read by themselves.
 */
async function liveRulesGoingLive(trx: Db, tenantId: string, context: string, readBefore: LiveRuleset | undefined): Promise<RulesGoingLive> {
  if (readBefore?.versionsDigest !== undefined && readBefore.context === context && readBefore.tenantId === tenantId) {
    // loadRuleset's query and order, without the content.
    const rows = await trx
      .selectFrom('rules as r')
      .innerJoin('rule_versions as v', (join) =>
        join.onRef('v.tenant_id', '=', 'r.tenant_id').onRef('v.rule_id', '=', 'r.id').onRef('v.version', '=', 'r.published_version'),
      )
      .select(['r.id', 'v.version'])
      .where('r.tenant_id', '=', tenantId)
      .where('r.context', '=', context)
      .where('r.archived_at', 'is', null)
      .orderBy('r.code')
      .execute();
    const members = rows.map((row) => ({ ruleId: row.id, version: row.version }));
    const versionsDigest = digestOf(members);
    if (versionsDigest === readBefore.versionsDigest) {
      return {
        rules: readBefore.rules, members, versionsDigest,
        snapshots: (which) => snapshotsOf(trx, tenantId, context, members.filter((_, i) => which(i))),
      };
    }
  }
  const { rules, members, snapshots } = await loadRuleset(trx, tenantId, context, 'live');
  return { rules, members, versionsDigest: digestOf(members), snapshots: (which) => Promise.resolve(snapshots(which)) };
}

/** A digest of rule versions in order (ids hold no '@' or newline). */
function digestOf(members: readonly RulesetMember[]): string {
  return createHash('sha256').update(members.map((m) => `${m.ruleId}@${m.version}`).join('\n')).digest('hex');
}

/** A ruleset version just recorded: the ruleset for beforeCommit, and what it changed by code. */
export interface AdvancedRuleset {
  next: LiveRuleset;
  /**
   * What the version changed, by code: read and compared when asked, inside
   * the same transaction, and only then. Call it after beforeCommit: a dry
   * run ends in beforeCommit and never pays for the comparison, nor does an
   * operation that does not report it (an import, an archive).
   */
  changes: () => Promise<RulesetChanges>;
}

/**
 * Records the next ruleset version of a locked context from the live
 * rules as the transaction now sees them, with what made it and who, and
 * returns that ruleset for beforeCommit plus what changed since the
 * current version.
 */
export async function advanceRuleset(
  trx: Db,
  tenantId: string,
  context: string,
  current: number | null,
  now: Date,
  action: RulesetAction,
  info: ChangeInfo,
  readBefore?: LiveRuleset,
): Promise<AdvancedRuleset> {
  const rulesetVersion = (current ?? 0) + 1;
  const { rules, members, versionsDigest, snapshots } = await liveRulesGoingLive(trx, tenantId, context, readBefore);
  // Only rule versions that entered or left the live set can differ; the
  // content of those that left is read, so a publish of one rule in a
  // large context reads one old version, not the whole ruleset. (A code
  // is unique among the live rules of a version, so a rule that stayed
  // cannot share its code with one that came or went.)
  const previous = current === null ? [] : (await membersAt(trx, tenantId, context, current)) ?? [];
  const changes = async (): Promise<RulesetChanges> => {
    const memberKey = (m: RulesetMember): string => `${m.ruleId}@${m.version}`;
    const wasLive = new Set(previous.map(memberKey));
    const isLive = new Set(members.map(memberKey));
    const before = await snapshotsOf(trx, tenantId, context, previous.filter((m) => !isLive.has(memberKey(m))));
    const after = await snapshots((i) => !wasLive.has(memberKey(members[i])));
    return changedCodes(await runInSlices(diffRulesetsSteps(before, after), TUNING.installSliceMs.value));
  };
  const actorKeyName = info.actorKeyId === null ? null : await keyName(trx, tenantId, info.actorKeyId);
  await trx
    .insertInto('ruleset_versions')
    .values({
      tenant_id: tenantId,
      context,
      ruleset_version: rulesetVersion,
      members: JSON.stringify(members),
      created_at: now,
      action,
      note: info.note,
      actor_key_id: actorKeyName === null ? null : info.actorKeyId,
      actor_key_name: actorKeyName,
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
  return { next: { tenantId, context, rulesetVersion, rules, versionsDigest }, changes };
}

/** The name of the tenant's key with this id; null when there is none (then no actor is recorded). */
async function keyName(trx: Db, tenantId: string, keyId: string): Promise<string | null> {
  const row = await trx
    .selectFrom('api_keys')
    .select('name')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', keyId)
    .executeTakeFirst();
  return row?.name ?? null;
}

/**
 * Makes the latest version of every draft of a locked context live and
 * records the next ruleset version with `action`: a context publish, and
 * an import that publishes in its own transaction (action `import`).
 * Returns null, changing nothing, when there is no draft.
 */
export async function publishDrafts(
  trx: Db,
  tenantId: string,
  context: string,
  current: number | null,
  action: RulesetAction,
  info: ChangeInfo,
  readBefore?: LiveRuleset,
): Promise<(AdvancedRuleset & { ids: string[] }) | null> {
  const drafts = await trx
    .selectFrom('rules')
    .select(['id', 'version'])
    .where('tenant_id', '=', tenantId)
    .where('context', '=', context)
    .where('archived_at', 'is', null)
    .where(sql<boolean>`published_version is distinct from version`)
    .orderBy('created_at')
    .orderBy('id')
    .forUpdate()
    .execute();
  if (drafts.length === 0) return null;
  const now = new Date();
  const ids = drafts.map((d) => d.id);
  await trx
    .updateTable('rules')
    .set((eb) => ({ published_version: eb.ref('version'), published_at: now, updated_at: now }))
    .where('tenant_id', '=', tenantId)
    // One array parameter: `in` with thousands of ids builds (on the event loop) and sends a parameter each.
    .where(sql<boolean>`id = any(${ids}::uuid[])`)
    .execute();
  await markVersionsPublished(trx, tenantId, drafts.map((d) => ({ ruleId: d.id, version: d.version })), now);
  return { ...(await advanceRuleset(trx, tenantId, context, current, now, action, info, readBefore)), ids };
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
