/**
 * Warm start benchmark (`npm run bench:warm-start`): what a restart costs
 * and whether any request after it pays for a compile.
 *
 * For each shape (200 contexts of 50 rules, 20 contexts of 1000 rules,
 * copies of the loan rules as `suites/generated-ruleset.ts` makes them),
 * a PGlite database is seeded (see `seed`), then
 * the service (the bundle `npm start` runs, in a child process) is started
 * on it twice: cold (WARM_START_MS=0) and warm, with a budget (the largest
 * WARM_START_MS allows) that lets the warm-up compile every context, so
 * the time to ready is that of a complete warm-up. For each start it prints:
 *
 * - the time to ready: from spawning the process to /health/ready
 *   answering 200 (polled every 100 ms, plus one API call that makes the
 *   validator key the requests use), and the validators cached at that
 *   moment (the `rules_validator_cache_entries` gauge);
 * - per context, the first request's Server-Timing against the median of
 *   the requests after it ("warm"), and how many compiles the first
 *   requests caused in all (`rules_validator_compiles_total`).
 *
 * `--quick` seeds a tenth of the contexts of each shape.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Kysely } from 'kysely';
import type { RuleDefinition } from '../compiler/types.ts';
import type { RuleContentInput } from '../compiler/rule-schema.ts';
import { toRuleContent } from '../src/rules/rule-body.ts';
import { runMigrations } from '../src/storage/migrate-to-latest.ts';
import { openDatabase } from '../src/storage/open-database.ts';
import { normalizeContent } from '../src/storage/rule-content.ts';
import { SqlRuleStore } from '../src/storage/rule-store.ts';
import type { DatabaseSchema } from '../src/storage/schema.ts';
import { SqlTenantStore } from '../src/storage/tenant-store.ts';
import { fixed, int, median, percentile, textTable } from './tools/report-table.ts';
import { startService, type ServiceProcess } from './tools/service-process.ts';
import { generateRuleset } from './suites/generated-ruleset.ts';
import { loanApplicationSuite as suite } from './suites/loan-application.ts';

const TENANT = 'bench';
/** The largest WARM_START_MS: time enough to compile every context. */
const WHOLE_WARM_UP_MS = 600_000;
/** Requests after the first, per context, whose median is the warm figure. */
const WARM_REQUESTS = 10;

interface Shape {
  contexts: number;
  rules: number;
}

interface ContextFigure {
  context: string;
  firstMs: number;
  warmMedianMs: number;
}

interface StartFigure {
  mode: 'cold' | 'warm';
  readyMs: number;
  cachedAtReady: number;
  /** Compiles caused by the first requests, all contexts together. */
  compilesByFirstRequests: number;
  contexts: ContextFigure[];
}

/**
 * Creates the contexts and publishes each. The drafts are written in two
 * statements per context (storage's create writes the same rows with a
 * transaction per rule, too slow for tens of thousands of rules); the
 * publish is storage's own.
 */
async function seed(dataDir: string, shape: Shape): Promise<string[]> {
  const database = await openDatabase({ dataDir });
  const contexts: string[] = [];
  try {
    await runMigrations(database.db, { kind: database.kind });
    await new SqlTenantStore(database.db).ensureTenant(TENANT);
    const store = new SqlRuleStore(database.db);
    const rules = generateRuleset(shape.rules);
    for (let c = 0; c < shape.contexts; c++) {
      const context = `ctx-${shape.rules}-${String(c).padStart(3, '0')}`;
      await insertDrafts(database.db, context, rules);
      await store.publishContext(TENANT, context, (next) => next);
      contexts.push(context);
    }
  } finally {
    await database.close();
  }
  return contexts;
}

/** Version 1 of each rule, as a draft: the rows storage's create writes. */
async function insertDrafts(db: Kysely<DatabaseSchema>, context: string, rules: readonly RuleDefinition[]): Promise<void> {
  const now = new Date();
  const ids = rules.map(() => randomUUID());
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('rules')
      .values(rules.map((rule, i) => ({ tenant_id: TENANT, id: ids[i], context, code: rule.code, version: 1, created_at: now, updated_at: now })))
      .execute();
    await trx
      .insertInto('rule_versions')
      .values(rules.map((rule, i) => ({
        tenant_id: TENANT,
        rule_id: ids[i],
        version: 1,
        content: JSON.stringify(normalizeContent(toRuleContent(asBody(rule)))),
        created_at: now,
      })))
      .execute();
  });
}

/** A compiler rule definition as the body a client would send for it. */
function asBody(rule: RuleDefinition): RuleContentInput {
  const { code: _code, schema, ...rest } = rule;
  return { ...rest, ...(typeof schema === 'object' ? { schema } : {}) };
}

async function metric(service: ServiceProcess, series: string): Promise<number> {
  const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

/** One validation; its Server-Timing total in milliseconds. */
async function serverMs(service: ServiceProcess, body: string): Promise<number> {
  const response = await fetch(`${service.baseUrl}/api/v1/validation/validate`, {
    method: 'POST', headers: service.headers, body, signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`validate answered ${response.status}: ${text.slice(0, 500)}`);
  const timing = /dur=([0-9.]+)/.exec(response.headers.get('server-timing') ?? '');
  if (timing === null) throw new Error('no Server-Timing on a validation answer');
  return Number(timing[1]);
}

async function measureStart(dataDir: string, contexts: string[], mode: StartFigure['mode']): Promise<StartFigure> {
  const started = performance.now();
  const service = await startService({
    tenantId: TENANT,
    startTimeoutMs: 600_000,
    env: { RULES_DATA_DIR: dataDir, WARM_START_MS: mode === 'cold' ? '0' : String(WHOLE_WARM_UP_MS) },
  });
  const readyMs = performance.now() - started;
  try {
    const cachedAtReady = await metric(service, 'rules_validator_cache_entries');
    const compilesBefore = await metric(service, 'rules_validator_compiles_total{result="ok"}');
    const figures: ContextFigure[] = [];
    for (const context of contexts) {
      const body = JSON.stringify({ context, payload: suite.payloads.failing });
      const firstMs = await serverMs(service, body);
      const warm: number[] = [];
      for (let i = 0; i < WARM_REQUESTS; i++) warm.push(await serverMs(service, body));
      figures.push({ context, firstMs, warmMedianMs: median(warm) });
    }
    const compilesByFirstRequests = (await metric(service, 'rules_validator_compiles_total{result="ok"}')) - compilesBefore;
    return { mode, readyMs, cachedAtReady, compilesByFirstRequests, contexts: figures };
  } finally {
    await service.stop();
  }
}

function printStart(shape: Shape, figure: StartFigure, total: number): void {
  const first = figure.contexts.map((c) => c.firstMs);
  const warm = figure.contexts.map((c) => c.warmMedianMs);
  console.log(
    `\n${shape.contexts} x ${shape.rules} rules, ${figure.mode}: ready in ${int(figure.readyMs)} ms, ` +
      `${figure.cachedAtReady} of ${total} validators cached at ready, ` +
      `${figure.compilesByFirstRequests} compiles caused by the first requests`,
  );
  console.log(
    `  first request ms: median ${fixed(median(first), 2)}, p95 ${fixed(percentile(first, 95), 2)}, max ${fixed(Math.max(...first), 2)}; ` +
      `warm median of medians ${fixed(median(warm), 2)}`,
  );
  console.log(textTable({
    header: ['context', 'first ms', 'warm median ms', 'first / warm'],
    rows: figure.contexts.map((c) => [c.context, fixed(c.firstMs, 2), fixed(c.warmMedianMs, 2), fixed(c.firstMs / c.warmMedianMs, 1)]),
  }));
}

export async function runWarmStartBench(options: { quick?: boolean } = {}): Promise<Array<{ shape: Shape; starts: StartFigure[] }>> {
  const shapes: Shape[] = [{ contexts: 200, rules: 50 }, { contexts: 20, rules: 1000 }].map((shape) => ({
    ...shape,
    contexts: options.quick === true ? shape.contexts / 10 : shape.contexts,
  }));
  const results: Array<{ shape: Shape; starts: StartFigure[] }> = [];
  for (const shape of shapes) {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'rules-bench-warm-'));
    try {
      const seedStarted = performance.now();
      const contexts = await seed(dataDir, shape);
      console.log(`\nseeded ${shape.contexts} contexts of ${shape.rules} rules in ${int(performance.now() - seedStarted)} ms`);
      const starts: StartFigure[] = [];
      for (const mode of ['cold', 'warm'] as const) {
        const figure = await measureStart(dataDir, contexts, mode);
        printStart(shape, figure, contexts.length);
        starts.push(figure);
      }
      results.push({ shape, starts });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  return results;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runWarmStartBench({ quick: process.argv.includes('--quick') });
}
