/**
 * Importing a rules file into a context (docs/api.md, "Rules as files"):
 * the context's drafts are made equal to the file's rules, matched by code,
 * and its payload schema and tests replaced when the file carries them, all
 * in the caller's transaction, with one audit entry and, when asked, the
 * publish (ruleset action `import`). Either all of it commits or none.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { importBaseDigest, importChanges, importResult, importWrites, type RuleHead } from './import-changes.ts';
import { writeAudit } from './audit-log.ts';
import { advanceRuleset, liveRulesetVersion, lockContext, publishDrafts, type AdvancedRuleset } from './context-rulesets.ts';
import type { DatabaseSchema } from './schema.ts';
import {
  StaleImportBaseError, type BeforeCommit, type ChangeInfo, type ImportOptions, type ImportPlan, type ImportResult, type ImportSource, type ImportWrites,
  type PreparedImport,
} from './types.ts';

type Db = Kysely<DatabaseSchema>;

/** A non-archived rule of the context: which rule, at which version, whether live. */
interface RuleRow extends RuleHead {
  published_version: number | null;
}

/** Rows per insert statement: a few hundred kilobytes of contents each, far under PostgreSQL's 65,535 parameters (7 a row). */
const ROWS_PER_INSERT = 500;

/**
 * Runs an import in `trx`. A dry run reads without locking and writes
 * nothing; a real one locks the context first, so it serializes with every
 * other lifecycle operation of the context, and locks its rules.
 */
export async function importIntoContext<T>(
  trx: Db,
  tenantId: string,
  context: string,
  source: ImportSource,
  options: ImportOptions,
  beforeCommit: BeforeCommit<T>,
  info: ChangeInfo,
): Promise<{ result: ImportResult; live?: T }> {
  const current = options.dryRun ? await liveRulesetVersion(trx, tenantId, context) : await lockContext(trx, tenantId, context);
  const decided = 'prepared' in source
    ? await preparedDecision(trx, tenantId, context, source.prepared, current)
    : await decisionHere(trx, tenantId, context, source.plan, options, current);
  const { rules, writes, result, extras } = decided;
  if (options.dryRun) return { result };
  const { create, update, archive } = writes;

  const now = new Date();
  for (const rows of inChunks(create)) {
    const created = rows.map(({ code, contentJson }) => ({ id: randomUUID(), code, contentJson }));
    await trx.insertInto('rules')
      .values(created.map(({ id, code }) => ({ tenant_id: tenantId, id, context, code, version: 1, created_at: now, updated_at: now })))
      .execute();
    await insertDraftVersions(trx, tenantId, created.map(({ id, contentJson }) => ({ id, version: 1, contentJson })), now);
  }
  for (const rows of inChunks(update)) {
    await insertDraftVersions(trx, tenantId, rows.map(({ id, version, contentJson }) => ({ id, version: version + 1, contentJson })), now);
    // Each at the version it was compared at (locked, and checked above), so one more is the version just inserted.
    await trx.updateTable('rules')
      .set((eb) => ({ version: eb('version', '+', 1), updated_at: now }))
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', rows.map((row) => row.id))
      .execute();
  }
  for (const rows of inChunks(archive)) {
    await trx
      .updateTable('rules')
      .set({ archived_at: now, published_version: null, updated_at: now })
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', rows.map((rule) => rule.id))
      .execute();
  }
  if (extras.payloadSchema !== undefined) await replacePayloadSchema(trx, tenantId, context, extras.payloadSchema, now);
  if (extras.tests !== undefined) await replaceTests(trx, tenantId, context, extras.tests, now);

  // What is live changes with a publish, or when a live rule is pruned
  // (as archiving it alone would): either way, a new ruleset version.
  let advanced: AdvancedRuleset | null = null;
  if (options.publish) advanced = await publishDrafts(trx, tenantId, context, current, 'import', info, beforeCommit.readBefore);
  const archived = new Set(archive.map((rule) => rule.id));
  if (advanced === null && rules.some((rule) => archived.has(rule.id) && rule.published_version !== null)) {
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
      payloadSchema: extras.payloadSchema === undefined ? 'kept' : extras.payloadSchema === null ? 'removed' : 'replaced',
      tests: extras.tests === undefined ? 'kept' : extras.tests.length,
    },
  });
  if (advanced === null) return { result };
  return { result, live: await beforeCommit(advanced.next) };
}

/** What an import writes and answers, and the rules it found (locked, in a real import). */
interface ImportDecision {
  rules: RuleRow[];
  writes: ImportWrites;
  result: ImportResult;
  extras: Pick<ImportPlan, 'payloadSchema' | 'tests'>;
}

/**
 * An import compared on a thread with the rules it was sent (a real one):
 * StaleImportBaseError unless those are still the context's rules, which
 * are locked here, so they stay so until the transaction ends.
 */
async function preparedDecision(trx: Db, tenantId: string, context: string, prepared: PreparedImport, current: number | null): Promise<ImportDecision> {
  const rules = await contextRules(trx, tenantId, context, true).select(['r.id', 'r.code', 'r.version', 'r.published_version']).execute();
  if (importBaseDigest(rules) !== prepared.baseDigest) throw new StaleImportBaseError();
  return { rules, writes: prepared.writes, result: { ...prepared.result, rulesetVersion: current }, extras: prepared };
}

/** An import compared here, with the context's rules as this transaction reads them (locked unless a dry run). */
async function decisionHere(
  trx: Db, tenantId: string, context: string, plan: ImportPlan, options: ImportOptions, current: number | null,
): Promise<ImportDecision> {
  const rules = await contextRules(trx, tenantId, context, !options.dryRun)
    .innerJoin('rule_versions as v', (join) =>
      join.onRef('v.tenant_id', '=', 'r.tenant_id').onRef('v.rule_id', '=', 'r.id').onRef('v.version', '=', 'r.version'),
    )
    .select(['r.id', 'r.code', 'r.version', 'r.published_version', 'v.content'])
    .execute();
  const changes = importChanges(context, rules, plan, options);
  const result = importResult(changes, options.dryRun, current);
  const writes = options.dryRun ? { create: [], update: [], archive: [] } : importWrites(changes);
  return { rules, writes, result, extras: plan };
}

/** The context's non-archived rules by code, locked (for update) in a real import. */
function contextRules(trx: Db, tenantId: string, context: string, lock: boolean) {
  const query = trx
    .selectFrom('rules as r')
    .where('r.tenant_id', '=', tenantId)
    .where('r.context', '=', context)
    .where('r.archived_at', 'is', null)
    .orderBy('r.code');
  return lock ? query.modifyEnd(sql`for update of r`) : query;
}

function* inChunks<T>(items: readonly T[]): Generator<readonly T[]> {
  for (let from = 0; from < items.length; from += ROWS_PER_INSERT) yield items.slice(from, from + ROWS_PER_INSERT);
}

async function insertDraftVersions(
  trx: Db, tenantId: string, versions: ReadonlyArray<{ id: string; version: number; contentJson: string }>, now: Date,
): Promise<void> {
  await trx
    .insertInto('rule_versions')
    .values(versions.map(({ id, version, contentJson }) => ({
      tenant_id: tenantId, rule_id: id, version, content: contentJson, created_at: now, published_at: null,
    })))
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
