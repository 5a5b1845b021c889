/**
 * Importing a rules file into a context (docs/api.md, "Rules as files"):
 * the context's drafts are made equal to the file's rules, matched by code,
 * and its payload schema and tests replaced when the file carries them, all
 * in the caller's transaction, with one audit entry and, when asked, the
 * publish (ruleset action `import`). Either all of it commits or none.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { importChanges, importResult } from './import-changes.ts';
import { writeAudit } from './audit-log.ts';
import { advanceRuleset, liveRulesetVersion, lockContext, publishDrafts, type AdvancedRuleset } from './context-rulesets.ts';
import type { DatabaseSchema } from './schema.ts';
import type { BeforeCommit, ChangeInfo, ImportOptions, ImportPlan, ImportResult, RuleContent } from './types.ts';

type Db = Kysely<DatabaseSchema>;

/** A non-archived rule of the context with its latest content. */
interface CurrentRule {
  id: string;
  code: string;
  version: number;
  published_version: number | null;
  content: unknown;
}

/**
 * Runs an import in `trx`. A dry run reads without locking and writes
 * nothing; a real one locks the context first, so it serializes with every
 * other lifecycle operation of the context.
 */
export async function importIntoContext<T>(
  trx: Db,
  tenantId: string,
  context: string,
  plan: ImportPlan,
  options: ImportOptions,
  beforeCommit: BeforeCommit<T>,
  info: ChangeInfo,
): Promise<{ result: ImportResult; live?: T }> {
  const current = options.dryRun ? await liveRulesetVersion(trx, tenantId, context) : await lockContext(trx, tenantId, context);
  let query = trx
    .selectFrom('rules as r')
    .innerJoin('rule_versions as v', (join) =>
      join.onRef('v.tenant_id', '=', 'r.tenant_id').onRef('v.rule_id', '=', 'r.id').onRef('v.version', '=', 'r.version'),
    )
    .select(['r.id', 'r.code', 'r.version', 'r.published_version', 'v.content'])
    .where('r.tenant_id', '=', tenantId)
    .where('r.context', '=', context)
    .where('r.archived_at', 'is', null)
    .orderBy('r.code');
  if (!options.dryRun) query = query.modifyEnd(sql`for update of r`);
  const rules: CurrentRule[] = await query.execute();

  const changes = importChanges(context, rules, plan, options);
  const { create, update, archive } = changes;
  const result = importResult(changes, options.dryRun, current);
  if (options.dryRun) return { result };

  const now = new Date();
  for (const { code, content } of create) {
    const id = randomUUID();
    await trx.insertInto('rules').values({ tenant_id: tenantId, id, context, code, version: 1, created_at: now, updated_at: now }).execute();
    await insertDraftVersion(trx, tenantId, id, 1, content, now);
  }
  for (const { rule, content } of update) {
    const version = rule.version + 1;
    await insertDraftVersion(trx, tenantId, rule.id, version, content, now);
    await trx.updateTable('rules').set({ version, updated_at: now }).where('tenant_id', '=', tenantId).where('id', '=', rule.id).execute();
  }
  if (archive.length > 0) {
    await trx
      .updateTable('rules')
      .set({ archived_at: now, published_version: null, updated_at: now })
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', archive.map((rule) => rule.id))
      .execute();
  }
  if (plan.payloadSchema !== undefined) await replacePayloadSchema(trx, tenantId, context, plan.payloadSchema, now);
  if (plan.tests !== undefined) await replaceTests(trx, tenantId, context, plan.tests, now);

  // What is live changes with a publish, or when a live rule is pruned
  // (as archiving it alone would): either way, a new ruleset version.
  let advanced: AdvancedRuleset | null = null;
  if (options.publish) advanced = await publishDrafts(trx, tenantId, context, current, 'import', info, beforeCommit.readBefore);
  if (advanced === null && archive.some((rule) => rule.published_version !== null)) {
    advanced = await advanceRuleset(trx, tenantId, context, current, now, 'import', info, beforeCommit.readBefore);
  }
  if (advanced !== null) result.rulesetVersion = advanced.next.rulesetVersion;
  await writeAudit(trx, tenantId, info.origin, {
    action: 'context.import',
    context,
    note: info.note ?? undefined,
    before: { rulesetVersion: current },
    after: {
      ...result,
      payloadSchema: plan.payloadSchema === undefined ? 'kept' : plan.payloadSchema === null ? 'removed' : 'replaced',
      tests: plan.tests === undefined ? 'kept' : plan.tests.length,
    },
  });
  if (advanced === null) return { result };
  return { result, live: await beforeCommit(advanced.next) };
}

async function insertDraftVersion(trx: Db, tenantId: string, ruleId: string, version: number, content: RuleContent, now: Date): Promise<void> {
  await trx
    .insertInto('rule_versions')
    .values({ tenant_id: tenantId, rule_id: ruleId, version, content: JSON.stringify(content), created_at: now, published_at: null })
    .execute();
}

/** Sets (null: removes) the payload schema, under a new revision as PUT does. */
async function replacePayloadSchema(trx: Db, tenantId: string, context: string, schema: unknown, now: Date): Promise<void> {
  if (schema === null) {
    await trx.deleteFrom('payload_schemas').where('tenant_id', '=', tenantId).where('context', '=', context).execute();
    return;
  }
  const json = JSON.stringify(schema);
  const revision = randomUUID();
  await trx
    .insertInto('payload_schemas')
    .values({ tenant_id: tenantId, context, schema: json, revision, updated_at: now })
    .onConflict((oc) => oc.columns(['tenant_id', 'context']).doUpdateSet({ schema: json, revision, updated_at: now }))
    .execute();
}

/** Stores the tests ([]: removes them), as PUT /tests does. */
async function replaceTests(trx: Db, tenantId: string, context: string, tests: NonNullable<ImportPlan['tests']>, now: Date): Promise<void> {
  if (tests.length === 0) {
    await trx.deleteFrom('context_tests').where('tenant_id', '=', tenantId).where('context', '=', context).execute();
    return;
  }
  const json = JSON.stringify(tests);
  await trx
    .insertInto('context_tests')
    .values({ tenant_id: tenantId, context, tests: json, updated_at: now })
    .onConflict((oc) => oc.columns(['tenant_id', 'context']).doUpdateSet({ tests: json, updated_at: now }))
    .execute();
}
