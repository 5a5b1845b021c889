/**
 * Rules and their lifecycle (docs/api.md). Content lives in immutable
 * rule_versions rows; the rules row says which version is the latest, which
 * is live, and whether the rule is archived.
 *
 * Every operation that changes what is live (publish, archive of a live
 * rule, rollback) runs in one transaction that first locks the context
 * row, so such operations on one context serialize across processes; it
 * then records the next ruleset version and calls beforeCommit with it
 * before committing. beforeCommit must not use this storage: on PGlite the
 * one connection is held by the transaction.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { advanceRuleset, liveRulesetVersion, loadRuleset, loadRulesText, lockContext, markVersionsPublished, publishDrafts, rulesetVersionsOf } from './context-rulesets.ts';
import { writeAudit } from './audit-log.ts';
import { importIntoContext } from './context-import.ts';
import { guard } from './database-errors.ts';
import { isUuid } from './identifiers.ts';
import { contentEquals, normalizeContent, toRule, type RuleRow } from './rule-content.ts';
import { decodeCursor, encodeCursor } from './rule-cursor.ts';
import type { DatabaseSchema, RulesetMember } from './schema.ts';
import {
  ConflictError,
  ContextNotFoundError,
  LimitExceededError,
  NotFoundError,
  RuleArchivedError,
  RuleNotFoundError,
  StaleVersionError,
  NO_CHANGE_INFO,
  type BeforeCommit,
  type ChangeInfo,
  type ChangeOrigin,
  type ContextRef,
  type ContextSummary,
  type ContextVersion,
  type ImportBaseText,
  type ImportOptions,
  type ImportSource,
  type ImportResult,
  type ListRulesQuery,
  type LiveRuleset,
  type Page,
  type PublishResult,
  type Rule,
  type RuleContent,
  type RuleEditAudit,
  type RuleStore,
  type RulesetText,
  type RuleVersion,
} from './types.ts';

type Db = Kysely<DatabaseSchema>;

function selectRules(db: Db) {
  return db
    .selectFrom('rules as r')
    .innerJoin('rule_versions as v', (join) =>
      join.onRef('v.tenant_id', '=', 'r.tenant_id').onRef('v.rule_id', '=', 'r.id').onRef('v.version', '=', 'r.version'),
    )
    .select([
      'r.id', 'r.context', 'r.code', 'r.version', 'r.published_version', 'r.archived_at',
      'r.created_at', 'r.updated_at', 'r.published_at', 'v.content',
    ]);
}

async function findRule(db: Db, tenantId: string, id: string, lock = false): Promise<RuleRow | undefined> {
  if (!isUuid(id)) return undefined;
  if (lock) {
    // The rules row is locked on its own, then read with its content by a
    // statement of its own. Locked through the join instead, a read that
    // waited for another edit of the rule would be rechecked by PostgreSQL
    // against the version row it had read before waiting, which no longer
    // matches the new `r.version`: the rule would look gone (404) instead
    // of edited meanwhile (409). The version rows are immutable.
    const locked = await db
      .selectFrom('rules')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (locked === undefined) return undefined;
  }
  return selectRules(db).where('r.tenant_id', '=', tenantId).where('r.id', '=', id).executeTakeFirst();
}

async function requireRule(db: Db, tenantId: string, id: string, lock = false): Promise<RuleRow> {
  const row = await findRule(db, tenantId, id, lock);
  if (row === undefined) throw new RuleNotFoundError();
  return row;
}

/**
 * Reads the rule, locks its context, then reads it again under a row lock:
 * the context is immutable, so the first read only serves to find which
 * context to lock, and the second sees any change that committed meanwhile.
 */
async function lockRuleAndContext(
  trx: Db,
  tenantId: string,
  id: string,
): Promise<{ rule: RuleRow; rulesetVersion: number | null }> {
  const { context } = await requireRule(trx, tenantId, id);
  const rulesetVersion = await lockContext(trx, tenantId, context);
  return { rule: await requireRule(trx, tenantId, id, true), rulesetVersion };
}

async function insertVersion(trx: Db, tenantId: string, ruleId: string, version: number, content: unknown, now: Date, published: boolean): Promise<void> {
  await trx
    .insertInto('rule_versions')
    .values({
      tenant_id: tenantId,
      rule_id: ruleId,
      version,
      content: JSON.stringify(content),
      created_at: now,
      published_at: published ? now : null,
    })
    .execute();
}

/**
 * Refuses a rule joining the context's non-archived rules (create,
 * restore): LimitExceededError past maxRulesPerContext, ConflictError
 * (`clash`) when one of them has its code. Run under the context lock,
 * which makes both checks exact under concurrency; the partial unique index
 * backs the second.
 */
async function assertRoomForRule(
  trx: Db, tenantId: string, context: string, code: string, maxRulesPerContext: number, clash: string,
): Promise<void> {
  const { count } = await trx
    .selectFrom('rules')
    .select(sql<number>`count(*)::int`.as('count'))
    .where('tenant_id', '=', tenantId)
    .where('context', '=', context)
    .where('archived_at', 'is', null)
    .executeTakeFirstOrThrow();
  if (count >= maxRulesPerContext) {
    throw new LimitExceededError(`context "${context}" already has ${count} rules, the maximum is ${maxRulesPerContext}`);
  }
  const taken = await trx
    .selectFrom('rules')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('context', '=', context)
    .where('code', '=', code)
    .where('archived_at', 'is', null)
    .executeTakeFirst();
  if (taken !== undefined) throw new ConflictError(clash);
}

/** RuleStore over the rules, rule_versions, contexts and ruleset_versions tables. */
export class SqlRuleStore implements RuleStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  create(tenantId: string, context: string, code: string, content: RuleContent, maxRulesPerContext: number, origin?: ChangeOrigin): Promise<Rule> {
    const clash = `a rule with code "${code}" already exists in context "${context}"`;
    return guard(
      () =>
        this.#db.transaction().execute(async (trx) => {
          await lockContext(trx, tenantId, context);
          await assertRoomForRule(trx, tenantId, context, code, maxRulesPerContext, clash);

          const id = randomUUID();
          const now = new Date();
          await trx
            .insertInto('rules')
            .values({ tenant_id: tenantId, id, context, code, version: 1, created_at: now, updated_at: now })
            .execute();
          await insertVersion(trx, tenantId, id, 1, normalizeContent(content), now, false);
          const created = toRule(await requireRule(trx, tenantId, id));
          await writeAudit(trx, tenantId, origin, { action: 'rule.create', context, target: id, after: created });
          return created;
        }),
      clash,
    );
  }

  get(tenantId: string, id: string): Promise<Rule | null> {
    return guard(async () => {
      const row = await findRule(this.#db, tenantId, id);
      return row === undefined ? null : toRule(row);
    });
  }

  list(tenantId: string, query: ListRulesQuery): Promise<Page<Rule>> {
    return guard(async () => {
      let select = selectRules(this.#db).where('r.tenant_id', '=', tenantId);
      if (query.context !== undefined) select = select.where('r.context', '=', query.context);
      switch (query.status ?? 'active') {
        case 'active':
          select = select.where('r.archived_at', 'is', null);
          break;
        case 'archived':
          select = select.where('r.archived_at', 'is not', null);
          break;
        case 'published':
          select = select.where('r.archived_at', 'is', null).whereRef('r.published_version', '=', 'r.version');
          break;
        case 'draft':
          select = select.where('r.archived_at', 'is', null).where(sql<boolean>`r.published_version is distinct from r.version`);
          break;
        case 'all':
          break;
      }
      if (query.tag !== undefined) {
        select = select.where(sql<boolean>`(v.content::jsonb -> 'tags') @> ${JSON.stringify([query.tag])}::jsonb`);
      }
      if (query.cursor !== undefined) {
        const after = decodeCursor(query.cursor);
        select = select.where(sql<boolean>`(r.created_at, r.id) > (${after.createdAt}::timestamptz, ${after.id}::uuid)`);
      }
      const limit = Math.max(1, Math.floor(query.limit));
      // One row more than the page tells whether another page follows.
      const rows = await select.orderBy('r.created_at').orderBy('r.id').limit(limit + 1).execute();
      const items = rows.slice(0, limit);
      const last = items.at(-1);
      const nextCursor = rows.length > limit && last !== undefined ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null;
      return { items: items.map(toRule), nextCursor };
    });
  }

  update(tenantId: string, id: string, basedOnVersion: number, content: RuleContent, audit?: RuleEditAudit): Promise<Rule> {
    return guard(() =>
      this.#db.transaction().execute(async (trx) => {
        const rule = await requireRule(trx, tenantId, id, true);
        if (rule.archived_at !== null) throw new RuleArchivedError();
        if (rule.version !== basedOnVersion) {
          throw new StaleVersionError(rule.version, basedOnVersion);
        }
        // A PUT that changes nothing is not a content change (docs/api.md):
        // no new version, and a published rule stays published. Repeating a
        // PUT is then harmless, as HTTP means PUT to be.
        const next = normalizeContent(content);
        if (contentEquals(normalizeContent(rule.content as unknown as RuleContent), next)) return toRule(rule);
        const now = new Date();
        const version = rule.version + 1;
        await trx
          .updateTable('rules')
          .set({ version, updated_at: now })
          .where('tenant_id', '=', tenantId)
          .where('id', '=', id)
          .execute();
        await insertVersion(trx, tenantId, id, version, next, now, false);
        const updated = toRule(await requireRule(trx, tenantId, id));
        await writeAudit(trx, tenantId, audit?.origin, { action: audit?.action ?? 'rule.update', context: rule.context, target: id, before: toRule(rule), after: updated });
        return updated;
      }),
    );
  }

  versions(tenantId: string, id: string): Promise<RuleVersion[] | null> {
    return guard(async () => {
      if ((await findRule(this.#db, tenantId, id)) === undefined) return null;
      const rows = await this.#db
        .selectFrom('rule_versions')
        .select(['version', 'content', 'created_at', 'published_at'])
        .where('tenant_id', '=', tenantId)
        .where('rule_id', '=', id)
        .orderBy('version', 'desc')
        .execute();
      return rows.map((row) => ({
        version: row.version,
        ...normalizeContent(row.content as unknown as RuleContent),
        createdAt: row.created_at.toISOString(),
        publishedAt: row.published_at?.toISOString() ?? null,
      }));
    });
  }

  restore(tenantId: string, id: string, maxRulesPerContext: number, origin?: ChangeOrigin): Promise<Rule> {
    return guard(
      () =>
        this.#db.transaction().execute(async (trx) => {
          const { rule } = await lockRuleAndContext(trx, tenantId, id);
          if (rule.archived_at === null) throw new ConflictError('the rule is not archived');
          const clash = `code "${rule.code}" is used by another rule of context "${rule.context}"`;
          await assertRoomForRule(trx, tenantId, rule.context, rule.code, maxRulesPerContext, clash);

          // A new version copying the archived content, as a rollback's
          // copies: the versions before it stay as they were (with when
          // each was live), the restore shows in the history, and an edit
          // based on the version read before the restore is stale.
          // Archiving cleared published_version, so the rule reads "draft".
          const now = new Date();
          const version = rule.version + 1;
          await insertVersion(trx, tenantId, id, version, normalizeContent(rule.content as unknown as RuleContent), now, false);
          await trx
            .updateTable('rules')
            .set({ version, archived_at: null, updated_at: now })
            .where('tenant_id', '=', tenantId)
            .where('id', '=', id)
            .execute();
          const restored = toRule(await requireRule(trx, tenantId, id));
          await writeAudit(trx, tenantId, origin, { action: 'rule.restore', context: rule.context, target: id, before: toRule(rule), after: restored });
          return restored;
        }),
      // The partial unique index backs the code check under concurrency.
      'the rule\'s code is used by another rule of its context',
    );
  }

  archive<T>(tenantId: string, id: string, beforeCommit: BeforeCommit<T>, info: ChangeInfo = NO_CHANGE_INFO): Promise<{ rule: Rule; live?: T }> {
    return guard(() =>
      this.#db.transaction().execute(async (trx) => {
        const { rule, rulesetVersion } = await lockRuleAndContext(trx, tenantId, id);
        if (rule.archived_at !== null) return { rule: toRule(rule) };
        const wasLive = rule.published_version !== null;
        const now = new Date();
        await trx
          .updateTable('rules')
          .set({ archived_at: now, published_version: null, updated_at: now })
          .where('tenant_id', '=', tenantId)
          .where('id', '=', id)
          .execute();
        const archived = toRule(await requireRule(trx, tenantId, id));
        // A rule that was never live leaves the ruleset as it is.
        if (!wasLive) {
          await writeAudit(trx, tenantId, info.origin, { action: 'rule.archive', context: rule.context, target: id, before: toRule(rule), after: archived });
          return { rule: archived };
        }
        const { next } = await advanceRuleset(trx, tenantId, rule.context, rulesetVersion, now, 'archive', info, beforeCommit.readBefore);
        await writeAudit(trx, tenantId, info.origin, {
          action: 'rule.archive', context: rule.context, target: id, before: toRule(rule), after: { ...archived, rulesetVersion: next.rulesetVersion },
        });
        return { rule: archived, live: await beforeCommit(next) };
      }),
    );
  }

  publishRule<T>(
    tenantId: string, id: string, beforeCommit: BeforeCommit<T>, info: ChangeInfo = NO_CHANGE_INFO,
  ): Promise<{ rule: Rule; result: PublishResult; live: T }> {
    return guard(() =>
      this.#db.transaction().execute(async (trx) => {
        const { rule, rulesetVersion } = await lockRuleAndContext(trx, tenantId, id);
        if (rule.archived_at !== null) throw new RuleArchivedError();
        if (rule.published_version === rule.version) throw new ConflictError(`version ${rule.version} is already live`);
        const now = new Date();
        await trx
          .updateTable('rules')
          .set({ published_version: rule.version, published_at: now, updated_at: now })
          .where('tenant_id', '=', tenantId)
          .where('id', '=', id)
          .execute();
        await markVersionsPublished(trx, tenantId, [{ ruleId: id, version: rule.version }], now);
        const { next, changes } = await advanceRuleset(trx, tenantId, rule.context, rulesetVersion, now, 'publish', info, beforeCommit.readBefore);
        const live = await beforeCommit(next);
        const published = toRule(await requireRule(trx, tenantId, id));
        const result = { context: rule.context, rulesetVersion: next.rulesetVersion, published: [id], changes: await changes() };
        await writeAudit(trx, tenantId, info.origin, {
          action: 'rule.publish', context: rule.context, target: id, note: info.note ?? undefined,
          before: { rulesetVersion }, after: result,
        });
        return { rule: published, result, live };
      }),
    );
  }

  publishContext<T>(
    tenantId: string, context: string, beforeCommit: BeforeCommit<T>, info: ChangeInfo = NO_CHANGE_INFO,
  ): Promise<{ result: PublishResult; live?: T }> {
    return guard(() =>
      this.#db.transaction().execute(async (trx) => {
        const rulesetVersion = await lockContext(trx, tenantId, context);
        const published = await publishDrafts(trx, tenantId, context, rulesetVersion, 'publish', info, beforeCommit.readBefore);
        if (published === null) {
          // Only archived rules that never went live: there is no version
          // to report, so the context counts as unknown. (Throwing also
          // rolls back the context row lockContext may have created.)
          if (rulesetVersion === null) throw new ContextNotFoundError(context);
          return { result: { context, rulesetVersion, published: [], changes: { added: [], changed: [], removed: [] } } };
        }
        const live = await beforeCommit(published.next);
        const result = { context, rulesetVersion: published.next.rulesetVersion, published: published.ids, changes: await published.changes() };
        await writeAudit(trx, tenantId, info.origin, {
          action: 'context.publish', context, note: info.note ?? undefined, before: { rulesetVersion }, after: result,
        });
        return { result, live };
      }),
    );
  }

  rollback<T>(
    tenantId: string, context: string, rulesetVersion: number, maxRulesPerContext: number, beforeCommit: BeforeCommit<T>,
    info: ChangeInfo = NO_CHANGE_INFO,
  ): Promise<{ result: PublishResult; live: T }> {
    return guard(() =>
      this.#db.transaction().execute(async (trx) => {
        const current = await lockContext(trx, tenantId, context);
        const target = Number.isSafeInteger(rulesetVersion)
          ? await trx
            .selectFrom('ruleset_versions')
            .select('members')
            .where('tenant_id', '=', tenantId)
            .where('context', '=', context)
            .where('ruleset_version', '=', rulesetVersion)
            .executeTakeFirst()
          : undefined;
        if (current === null || target === undefined) {
          throw new NotFoundError(`context "${context}" has no ruleset version ${rulesetVersion}`);
        }
        if (rulesetVersion === current) throw new ConflictError(`ruleset version ${rulesetVersion} is already live`);

        const rules = await trx
          .selectFrom('rules')
          .select(['id', 'code', 'version', 'published_version', 'archived_at'])
          .where('tenant_id', '=', tenantId)
          .where('context', '=', context)
          .orderBy('created_at')
          .orderBy('id')
          .forUpdate()
          .execute();
        const byId = new Map(rules.map((r) => [r.id, r]));
        const members = target.members.filter((m) => byId.has(m.ruleId));
        const memberIds = new Set(members.map((m) => m.ruleId));
        const liveNow: RulesetMember[] = rules
          .filter((r) => r.archived_at === null && r.published_version !== null)
          .map((r) => ({ ruleId: r.id, version: r.published_version as number }));
        const contents = await loadContents(trx, tenantId, [...members, ...liveNow]);

        const toArchive = liveNow.filter((m) => !memberIds.has(m.ruleId)).map((m) => m.ruleId);
        const liveVersionOf = new Map(liveNow.map((m) => [m.ruleId, m.version]));
        const toCopy = members.filter((m) => {
          const liveVersion = liveVersionOf.get(m.ruleId);
          return liveVersion === undefined || !contentEquals(contents.get(key(m.ruleId, liveVersion)), contents.get(key(m.ruleId, m.version)));
        });

        // A revived rule takes back its code; any other rule still holding
        // it after this rollback (live or draft) makes the rollback refuse.
        const archiving = new Set(toArchive);
        const revived = toCopy.filter((member) => byId.get(member.ruleId)!.archived_at !== null);
        // Reviving counts against the limit as creating does; a rollback
        // that adds no rule passes even where a lowered limit is exceeded.
        const kept = rules.filter((r) => r.archived_at === null).length - toArchive.length;
        if (revived.length > 0 && kept + revived.length > maxRulesPerContext) {
          throw new LimitExceededError(
            `rolling back to ruleset version ${rulesetVersion} would leave context "${context}" with ${kept + revived.length} rules, the maximum is ${maxRulesPerContext}`,
          );
        }
        for (const member of revived) {
          const rule = byId.get(member.ruleId)!;
          const holder = rules.find(
            (r) => r.id !== rule.id && r.code === rule.code && r.archived_at === null && !archiving.has(r.id),
          );
          if (holder !== undefined) {
            throw new ConflictError(`rule code "${rule.code}" of ruleset version ${rulesetVersion} is now used by another rule`);
          }
        }

        const now = new Date();
        if (toArchive.length > 0) {
          await trx
            .updateTable('rules')
            .set({ archived_at: now, published_version: null, updated_at: now })
            .where('tenant_id', '=', tenantId)
            .where('id', 'in', toArchive)
            .execute();
        }
        // Copies, not pointers to old versions: the latest version is then
        // the live one, statuses read "published", and a later publish has
        // no stale draft to re-apply.
        for (const member of toCopy) {
          const version = byId.get(member.ruleId)!.version + 1;
          await insertVersion(trx, tenantId, member.ruleId, version, contents.get(key(member.ruleId, member.version)), now, true);
          await trx
            .updateTable('rules')
            .set({ version, published_version: version, archived_at: null, published_at: now, updated_at: now })
            .where('tenant_id', '=', tenantId)
            .where('id', '=', member.ruleId)
            .execute();
        }
        const { next, changes } = await advanceRuleset(trx, tenantId, context, current, now, 'rollback', info, beforeCommit.readBefore);
        const live = await beforeCommit(next);
        const result = { context, rulesetVersion: next.rulesetVersion, published: toCopy.map((m) => m.ruleId), changes: await changes() };
        await writeAudit(trx, tenantId, info.origin, {
          action: 'context.rollback', context, note: info.note ?? undefined,
          before: { rulesetVersion: current }, after: { ...result, rolledBackTo: rulesetVersion },
        });
        return { result, live };
      }),
    );
  }

  importContext<T>(
    tenantId: string, context: string, source: ImportSource, options: ImportOptions, beforeCommit: BeforeCommit<T>,
    info: ChangeInfo = NO_CHANGE_INFO,
  ): Promise<{ result: ImportResult; live?: T }> {
    return guard(() => {
      // A dry run reads the rules and the version in one snapshot and writes nothing.
      const transaction = options.dryRun ? this.#db.transaction().setIsolationLevel('repeatable read') : this.#db.transaction();
      return transaction.execute((trx) => importIntoContext(trx, tenantId, context, source, options, beforeCommit, info));
    }, 'a rule of the file has a code another rule of the context took meanwhile');
  }

  liveRuleset(tenantId: string, context: string): Promise<LiveRuleset | null> {
    return this.#snapshotRuleset(tenantId, context, 'live');
  }

  draftRuleset(tenantId: string, context: string): Promise<LiveRuleset | null> {
    return this.#snapshotRuleset(tenantId, context, 'draft');
  }

  rulesetText(tenantId: string, context: string, mode: 'live' | 'draft'): Promise<RulesetText | null> {
    return this.#inSnapshot(async (trx) => {
      const current = await liveRulesetVersion(trx, tenantId, context);
      if (mode === 'live' && current === null) return null;
      const rules = await loadRulesText(trx, tenantId, context, mode);
      if (mode === 'live') return { tenantId, context, rulesetVersion: current!, rulesJson: rules.json };
      if (rules.count === 0) return null;
      // As #snapshotRuleset: one more than the live version when anything is a draft.
      const rulesetVersion = current !== null && rules.allLive ? current : (current ?? 0) + 1;
      return { tenantId, context, rulesetVersion, rulesJson: rules.json };
    });
  }

  importBaseText(tenantId: string, context: string): Promise<ImportBaseText> {
    // As a dry run's importIntoContext reads them: the version and the rules in one snapshot.
    return this.#inSnapshot(async (trx) => {
      const rulesetVersion = await liveRulesetVersion(trx, tenantId, context);
      return { rulesetVersion, rulesJson: (await loadRulesText(trx, tenantId, context, 'draft', true)).json };
    });
  }

  /** `read` in one repeatable-read transaction, database errors mapped. */
  #inSnapshot<T>(read: (trx: Kysely<DatabaseSchema>) => Promise<T>): Promise<T> {
    return guard(() => this.#db.transaction().setIsolationLevel('repeatable read').execute(read));
  }

  /**
   * One snapshot (repeatable read) for the version number and the rules,
   * so a publish committing in between cannot pair version N with the
   * rules of N+1.
   */
  #snapshotRuleset(tenantId: string, context: string, mode: 'live' | 'draft'): Promise<LiveRuleset | null> {
    return guard(() =>
      this.#db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute(async (trx) => {
          const current = await liveRulesetVersion(trx, tenantId, context);
          if (mode === 'live') {
            if (current === null) return null;
            const { rules } = await loadRuleset(trx, tenantId, context, 'live');
            return { tenantId, context, rulesetVersion: current, rules };
          }
          const { rules, members } = await loadRuleset(trx, tenantId, context, 'draft');
          if (rules.length === 0) return null;
          // The version a context publish would produce: one more when
          // anything is a draft.
          const live = await loadRuleset(trx, tenantId, context, 'live');
          const unchanged =
            current !== null &&
            live.members.length === members.length &&
            live.members.every((m, i) => m.ruleId === members[i].ruleId && m.version === members[i].version);
          return { tenantId, context, rulesetVersion: unchanged ? current : (current ?? 0) + 1, rules };
        }),
    );
  }

  rulesetVersionsOf(contexts: readonly ContextRef[]): Promise<ContextVersion[]> {
    return guard(() => rulesetVersionsOf(this.#db, contexts));
  }

  rulesetVersions(tenantId: string): Promise<Map<string, number>> {
    return guard(async () => {
      const rows = await this.#db
        .selectFrom('contexts')
        .select(['context', 'ruleset_version'])
        .where('tenant_id', '=', tenantId)
        .where('ruleset_version', 'is not', null)
        .execute();
      return new Map(rows.map((r) => [r.context, r.ruleset_version as number]));
    });
  }

  contexts(tenantId: string): Promise<ContextSummary[]> {
    return guard(async () => {
      const rows = await this.#db
        .selectFrom('contexts as c')
        .leftJoin('rules as r', (join) => join.onRef('r.tenant_id', '=', 'c.tenant_id').onRef('r.context', '=', 'c.context'))
        .select([
          'c.context',
          'c.ruleset_version',
          sql<number>`count(r.id) filter (where r.archived_at is null and r.published_version is distinct from r.version)::int`.as('draft'),
          sql<number>`count(r.id) filter (where r.archived_at is null and r.published_version = r.version)::int`.as('published'),
          sql<number>`count(r.id) filter (where r.archived_at is not null)::int`.as('archived'),
        ])
        .where('c.tenant_id', '=', tenantId)
        .groupBy(['c.context', 'c.ruleset_version'])
        .orderBy('c.context')
        .execute();
      return rows
        .filter((r) => r.ruleset_version !== null || r.draft + r.published + r.archived > 0)
        .map((r) => ({
          context: r.context,
          rulesetVersion: r.ruleset_version,
          rules: { draft: r.draft, published: r.published, archived: r.archived },
        }));
    });
  }
}

function key(ruleId: string, version: number): string {
  return `${ruleId}@${version}`;
}

/** The content of each listed rule version, keyed by key(). */
async function loadContents(trx: Db, tenantId: string, wanted: RulesetMember[]): Promise<Map<string, unknown>> {
  const contents = new Map<string, unknown>();
  if (wanted.length === 0) return contents;
  const rows = await trx
    .selectFrom('rule_versions')
    .select(['rule_id', 'version', 'content'])
    .where('tenant_id', '=', tenantId)
    .where(
      sql<boolean>`(rule_id, version) in (select * from unnest(${wanted.map((m) => m.ruleId)}::uuid[], ${wanted.map((m) => m.version)}::int[]))`,
    )
    .execute();
  for (const row of rows) contents.set(key(row.rule_id, row.version), row.content);
  return contents;
}
