/**
 * What POST /rules/check costs (`npm run bench:rule-check`): an editor calls
 * it on every keystroke, so it must answer in well under 10 ms for an
 * ordinary rule.
 *
 * Times, with tinybench:
 * - `in process`: the route's work without HTTP, the save-time checks
 *   (ruleContentProblems: shape, limits, the compiler's checkRule) and the
 *   warnings against a parsed payload schema (contentWarnings), for an
 *   ordinary rule (`when`, fieldPath, a two-condition expression, a message)
 *   and for a 200-line expression (about 4,000 characters, close to the
 *   default MAX_EXPRESSION_LENGTH);
 * - `over HTTP`: the same two through the real route, `app.inject` on the
 *   embedded database: authentication, the payload schema's revision read
 *   (one indexed read), serialization.
 *
 * The target: the ordinary rule's mean over HTTP under 10 ms, by far; it is
 * printed beside the figures with a verdict. `-- --quick` runs shorter.
 * Figures go to stdout only.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Bench } from 'tinybench';
import { PayloadSchema } from '../compiler/index.ts';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { ruleContentProblems } from '../src/rules/check-rule-content.ts';
import { contentWarnings } from '../src/rules/rule-warnings.ts';
import { toRuleContent } from '../src/rules/rule-body.ts';
import { bootstrapTenants } from '../src/startup/bootstrap.ts';
import { createStorage } from '../src/storage/create-storage.ts';

const TARGET_MS = 10;
const quick = process.argv.includes('--quick');

const PAYLOAD_SCHEMA = {
  type: 'object',
  properties: {
    total: { type: 'number' },
    status: { type: 'string' },
    customer: { type: 'object', properties: { type: { enum: ['person', 'business'] }, vatId: { type: 'string' } } },
    lines: { type: 'array', items: { type: 'object', properties: { qty: { type: 'integer' }, price: { type: 'number' } } } },
  },
};

const ORDINARY = {
  context: 'orders',
  code: 'BUSINESS_TOTAL',
  name: 'Business orders above the minimum',
  when: 'customer.type == "business"',
  fieldPath: 'total',
  expression: 'total >= 100 && status != "cancelled"',
  message: 'Total {{ $value }} is below the business minimum',
};

/** 200 lines of `total != n &&`: about 4,000 characters. */
const LONG = {
  ...ORDINARY,
  code: 'LONG',
  expression: Array.from({ length: 200 }, (_, i) => `total != ${i}`).join(' &&\n'),
};

function checkInProcess(rule: typeof ORDINARY, schema: PayloadSchema): number {
  const content = toRuleContent(rule);
  const problems = ruleContentProblems(rule.code, content, { maxExpressionLength: 4096, maxTableRows: 10_000 });
  const warnings = contentWarnings(rule.code, content, schema, 4096);
  return problems.length + warnings.length;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rule-check-bench-'));
  const adminKey = 'bench_rule_check_admin_key_000000000000';
  const config = loadConfig({ RULES_DATA_DIR: dataDir, RULES_BOOTSTRAP_TENANTS: `acme:${adminKey}`, LOG_LEVEL: 'silent', PORT: '0' });
  const storage = await createStorage({ dataDir });
  await bootstrapTenants(storage, config.bootstrapTenants ?? []);
  const app = await buildApp({ config, storage });
  const headers = { 'x-api-key': adminKey, 'x-tenant-id': 'acme', 'content-type': 'application/json' };
  try {
    const set = await app.inject({ method: 'PUT', url: '/api/v1/contexts/orders/payload-schema', headers, payload: PAYLOAD_SCHEMA });
    if (set.statusCode !== 200) throw new Error(`setting the payload schema: ${set.statusCode} ${set.body}`);
    const schema = new PayloadSchema(PAYLOAD_SCHEMA);
    const overHttp = async (rule: typeof ORDINARY): Promise<void> => {
      const response = await app.inject({ method: 'POST', url: '/api/v1/rules/check', headers, payload: { rule } });
      if (response.statusCode !== 200 || !(JSON.parse(response.body) as { ok: boolean }).ok) {
        throw new Error(`check: ${response.statusCode} ${response.body}`);
      }
    };

    const bench = new Bench({ time: quick ? 200 : 1000, warmupTime: quick ? 50 : 200 });
    bench
      .add('in process: ordinary rule', () => { checkInProcess(ORDINARY, schema); })
      .add('in process: 200-line expression', () => { checkInProcess(LONG, schema); })
      .add('over HTTP: ordinary rule', () => overHttp(ORDINARY))
      .add('over HTTP: 200-line expression', () => overHttp(LONG));
    await bench.run();

    const rows = bench.tasks.map((task) => {
      const result = task.result as { latency?: { mean: number; p99?: number }; mean?: number; p99?: number } | undefined;
      const mean = result?.latency?.mean ?? result?.mean ?? NaN;
      const p99 = result?.latency?.p99 ?? result?.p99 ?? NaN;
      return { task: task.name, 'mean ms': mean.toFixed(3), 'p99 ms': p99.toFixed(3) };
    });
    console.log(`rule check on ${os.cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}${quick ? ' (quick)' : ''}`);
    console.table(rows);
    const ordinary = Number(rows.find((row) => row.task === 'over HTTP: ordinary rule')?.['mean ms']);
    console.log(`target: an ordinary rule over HTTP under ${TARGET_MS} ms: ${ordinary.toFixed(3)} ms, ${ordinary < TARGET_MS ? 'met' : 'MISSED'}`);
  } finally {
    await app.close();
    await storage.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
