/**
 * Ruleset diff benchmark (`npm run bench:diff`): what GET
 * /contexts/{context}/diff costs between two 1,000-rule versions.
 *
 * A context of 1,000 rules (copies of the loan rules, as
 * `suites/generated-ruleset.ts` makes them) is published as version 1;
 * then 100 rules are edited, 50 added and the context published again, and
 * 20 rules archived (one version each), so the last version differs from
 * the first by added, changed and removed rules. Timed, each a median of
 * rounds after a warm-up:
 *
 * - `read + diff`: what the route does, without HTTP: both versions' rules
 *   read from the database in one snapshot (`history.rulesets`), then
 *   compared (`diffRulesets`);
 * - `live vs draft`: the default diff, after 100 more edits left as drafts;
 * - `diff only`: the comparison alone, on rules already read (tinybench).
 *
 * The database is PGlite in a temporary folder, or PostgreSQL when
 * DATABASE_URL is set (a fresh database is created and dropped). Target:
 * `read + diff` under 200 ms (median). `-- --quick` runs fewer rounds.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { Bench } from 'tinybench';
import type { RuleDefinition } from '../compiler/types.ts';
import type { RuleContentInput } from '../compiler/rule-schema.ts';
import { diffRulesets } from '../src/storage/ruleset-diff.ts';
import { toRuleContent } from '../src/rules/rule-body.ts';
import { createStorage } from '../src/storage/create-storage.ts';
import { normalizeContent } from '../src/storage/rule-content.ts';
import type { Storage } from '../src/storage/types.ts';
import { fixed, median, textTable } from './tools/report-table.ts';
import { generateRuleset } from './suites/generated-ruleset.ts';

const TENANT = 'bench';
const CONTEXT = 'diff-1000';
const RULES = 1000;
/** Median of `read + diff` must stay under this (milliseconds). */
const TARGET_MS = 200;
const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 5 : 30;
const accept = <T>(next: T): T => next;

function asBody(rule: RuleDefinition): RuleContentInput {
  const { code: _code, schema, ...rest } = rule;
  return { ...rest, ...(typeof schema === 'object' ? { schema } : {}) };
}

/** Seeds the context: version 1 of 1,000 rules, then edits, additions and archives; returns the last version. */
async function seed(storage: Storage): Promise<number> {
  await storage.tenants.ensureTenant(TENANT);
  const rules = generateRuleset(RULES + 50);
  const ids: string[] = [];
  for (const rule of rules.slice(0, RULES)) {
    ids.push((await storage.rules.create(TENANT, CONTEXT, rule.code, toRuleContent(asBody(rule)), 5000)).id);
  }
  await storage.rules.publishContext(TENANT, CONTEXT, accept);
  await editEvery(storage, ids, 10, 0);
  for (const rule of rules.slice(RULES)) {
    await storage.rules.create(TENANT, CONTEXT, rule.code, toRuleContent(asBody(rule)), 5000);
  }
  await storage.rules.publishContext(TENANT, CONTEXT, accept);
  for (const id of ids.slice(0, 20)) await storage.rules.archive(TENANT, id, accept);
  const [live] = await storage.history.rulesets(TENANT, CONTEXT, ['live']);
  return live.rulesetVersion!;
}

/** Edits every `step`-th rule (from `offset`): a new priority, a new tag. */
async function editEvery(storage: Storage, ids: readonly string[], step: number, offset: number): Promise<void> {
  for (let i = 20 + offset; i < ids.length; i += step) {
    const rule = (await storage.rules.get(TENANT, ids[i]))!;
    const content = normalizeContent(rule);
    await storage.rules.update(TENANT, ids[i], rule.version, { ...content, priority: content.priority + 1, tags: [...content.tags, `edit-${offset}`] });
  }
}

/** Median milliseconds of `rounds` runs of `run`, after two warm-up runs. */
async function timed(run: () => Promise<unknown>, rounds: number): Promise<number> {
  await run();
  await run();
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  return median(times);
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'rules-diff-bench-'));
  const baseUrl = process.env.DATABASE_URL;
  let databaseUrl: string | undefined;
  if (baseUrl !== undefined && baseUrl !== '') {
    const name = `diff_bench_${randomUUID().replaceAll('-', '')}`;
    const admin = new pg.Client({ connectionString: baseUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(baseUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
  }
  const storage = await createStorage({ dataDir, databaseUrl });
  try {
    const started = performance.now();
    const last = await seed(storage);
    console.log(`seeded ${RULES} rules, ${last} ruleset versions, on ${storage.kind} in ${fixed(performance.now() - started, 0)} ms`);

    const readAndDiff = async () => {
      const [from, to] = await storage.history.rulesets(TENANT, CONTEXT, [1, last]);
      return diffRulesets(from.rules, to.rules);
    };
    const sample = await readAndDiff();
    const versionsMs = await timed(readAndDiff, ROUNDS);

    // 100 more edits, left as drafts.
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await storage.rules.list(TENANT, { context: CONTEXT, limit: 500, cursor });
      ids.push(...page.items.map((rule) => rule.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    await editEvery(storage, ids, 10, 5);
    const liveDraft = async () => {
      const [from, to] = await storage.history.rulesets(TENANT, CONTEXT, ['live', 'draft']);
      return diffRulesets(from.rules, to.rules);
    };
    const draftSample = await liveDraft();
    const draftMs = await timed(liveDraft, ROUNDS);

    const [from, to] = await storage.history.rulesets(TENANT, CONTEXT, [1, last]);
    const bench = new Bench({ time: quick ? 200 : 1000 });
    bench.add('diff only', () => {
      diffRulesets(from.rules, to.rules);
    });
    await bench.run();
    const pure = bench.getTask('diff only')!.result;
    if (pure.state !== 'completed') throw new Error(`diff only: ${pure.state}`);
    const pureMs = pure.latency.p50;

    const describe = (diff: ReturnType<typeof diffRulesets>) => `+${diff.added.length} ~${diff.changed.length} -${diff.removed.length}`;
    console.log(textTable({
      header: ['measure', 'rules (from / to)', 'differences', 'median ms'],
      rows: [
        [`read + diff (1 vs ${last})`, `${from.rules.length} / ${to.rules.length}`, describe(sample), fixed(versionsMs, 2)],
        ['live vs draft', '', describe(draftSample), fixed(draftMs, 2)],
        ['diff only', `${from.rules.length} / ${to.rules.length}`, describe(sample), fixed(pureMs, 3)],
      ],
    }));
    const verdict = versionsMs < TARGET_MS ? 'met' : 'MISSED';
    console.log(`target: read + diff of two ${RULES}-rule versions under ${TARGET_MS} ms (median): ${verdict}`);
    if (verdict !== 'met') process.exitCode = 1;
  } finally {
    await storage.close();
    await rm(dataDir, { recursive: true, force: true });
    if (databaseUrl !== undefined) {
      const admin = new pg.Client({ connectionString: baseUrl });
      await admin.connect();
      await admin.query(`drop database if exists ${new URL(databaseUrl).pathname.slice(1)}`);
      await admin.end();
    }
  }
}

await main();
