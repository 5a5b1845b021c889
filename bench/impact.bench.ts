/**
 * Impact-report benchmark (`npm run bench:impact`): what
 * POST /contexts/{context}/impact costs on 10,000 recorded samples of a
 * 50-rule context, over HTTP on the real service, and what the replay alone
 * costs.
 *
 * The service runs in process on PGlite in a temporary folder (or
 * PostgreSQL when DATABASE_URL is set, on a fresh database created and
 * dropped). A context of 50 rules (copies of the loan rules, as
 * `suites/generated-ruleset.ts` makes them) is published; then the draft
 * loosens the loan-to-income rules and tightens the loan-amount range, so
 * the report has every kind of change to count. 10,000 samples (the loan
 * payloads, passing and failing, with amounts and incomes varied) go in
 * through the sample store. Then, each the median of its rounds after a
 * warm-up:
 *
 * - `report over HTTP`: the route as a client sees it: the samples read,
 *   the draft compiled, both rulesets replayed in slices, the answer sent;
 * - `replay alone`: `replayImpact` (src/rules/impact-report.ts) on the same
 *   samples already read, with both validators already compiled.
 *
 * Target: the report over HTTP within a second (median); the process exits
 * 1 when it is missed. The load average is printed with the figures, since
 * the machine is shared. `-- --quick` runs fewer rounds.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { RuleDefinition } from '../compiler/types.ts';
import { buildApp } from '../src/app.ts';
import { generateApiKey, hashApiKey } from '../src/auth/api-key.ts';
import { loadConfig } from '../src/config.ts';
import { replayImpact, type ImpactReport } from '../src/rules/impact-report.ts';
import { createStorage } from '../src/storage/create-storage.ts';
import type { SampleRecord } from '../src/storage/types.ts';
import { TUNING } from '../src/tuning.ts';
import { compileValidator } from '../src/validators/compile-validator.ts';
import { benchDatabase } from './tools/bench-database.ts';
import { fixed, median, textTable } from './tools/report-table.ts';
import { asFileRule, callApi } from './tools/rules-api.ts';
import { generateRuleset } from './suites/generated-ruleset.ts';
import { loanApplicationSuite } from './suites/loan-application.ts';

const RULES = 50;
const SAMPLES = 10_000;
const TARGET_MS = 1000;
const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 10;
const TENANT = 'bench';
const CONTEXT = 'loans';
const KEY = generateApiKey();

/** The draft: loan-to-income loosened from five times the income to six, the amount range's upper bound lowered to 40,000. */
function drafted(rules: RuleDefinition[]): RuleDefinition[] {
  return rules.map((rule) => {
    if (rule.code.startsWith('LOAN_TO_INCOME_')) return { ...rule, expression: 'loan.amount <= applicant.income * 6' };
    if (rule.code.startsWith('LOAN_AMOUNT_RANGE_')) return { ...rule, expression: 'isNumber($value) && $value >= 1000 && $value <= 40000' };
    return rule;
  });
}

/** The loan payloads with amounts and incomes varied; every fifth one the failing payload. */
function samplePayloads(): unknown[] {
  const { passing, failing } = loanApplicationSuite.payloads as { passing: Record<string, any>; failing: Record<string, any> };
  return Array.from({ length: SAMPLES }, (_, i) => {
    const base = i % 5 === 4 ? failing : passing;
    return {
      ...base,
      applicant: { ...base.applicant, income: 5_000 + (i % 17) * 1_000 },
      loan: { ...base.loan, amount: 5_000 + (i % 23) * 2_000 },
    };
  });
}

async function main(): Promise<void> {
  const db = await benchDatabase('bench-impact');
  const config = loadConfig({
    RULES_DATA_DIR: db.dataDir, DATABASE_URL: db.databaseUrl ?? '', LOG_LEVEL: 'silent', PORT: '0', RATE_LIMIT_MAX: '1000000',
  });
  const storage = await createStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await storage.tenants.ensureTenant(TENANT);
  await storage.apiKeys.create(TENANT, 'bench', 'admin', hashApiKey(KEY));
  const app = await buildApp({ config, storage });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const service = { baseUrl: base, adminKey: KEY, tenantId: TENANT };
  const call = (method: string, url: string, body?: unknown): Promise<unknown> => callApi(service, method, `/api/v1${url}`, body);
  const timed = async (run: () => unknown): Promise<number[]> => {
    await run();
    const times: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const start = performance.now();
      await run();
      times.push(performance.now() - start);
    }
    return times;
  };
  try {
    const live = generateRuleset(RULES);
    const draft = drafted(live);
    await call('POST', `/contexts/${CONTEXT}/import?publish=true`, { format: 'rules/v1', rules: live.map(asFileRule) });
    await call('POST', `/contexts/${CONTEXT}/import`, { format: 'rules/v1', rules: draft.map(asFileRule) });
    const recordedAt = Date.now() - SAMPLES * 1000;
    await storage.samples.insertMany(samplePayloads().map((payload, i): SampleRecord => ({
      tenantId: TENANT, context: CONTEXT, recordedAt: new Date(recordedAt + i * 1000), rulesetVersion: 1, isValid: true, failures: [], payload,
    })));

    let report: ImpactReport | undefined;
    const overHttp = await timed(async () => {
      report = await call('POST', `/contexts/${CONTEXT}/impact`, { limit: SAMPLES }) as ImpactReport;
    });

    const samples = await storage.samples.newest(TENANT, CONTEXT, SAMPLES);
    const compile = async (rules: RuleDefinition[], rulesetVersion: number) =>
      (await compileValidator({ tenantId: TENANT, context: CONTEXT, rulesetVersion, rules }, {})).validator!;
    const rulesets = { live: await compile(live, 1), target: await compile(draft, 2) };
    const limits = {
      maxPayloadDepth: config.maxPayloadDepth, evaluationDeadlineMs: TUNING.evaluationDeadlineMs.value, budgetMs: TUNING.impactReplayBudgetMs.value,
    };
    const replayAlone = await timed(() => replayImpact(samples, rulesets, limits, Date.now()));

    const row = (name: string, times: number[]) => [name, fixed(median(times), 0), fixed(Math.min(...times), 0), fixed(Math.max(...times), 0)];
    const [one, five, fifteen] = loadavg();
    console.log(`Impact report, ${SAMPLES} samples, ${RULES} rules, ${storage.kind}, ${ROUNDS} rounds (ms); load average ${fixed(one, 1)} ${fixed(five, 1)} ${fixed(fifteen, 1)}`);
    console.log(textTable({ header: ['operation', 'median', 'min', 'max'], rows: [row('report over HTTP', overHttp), row('replay alone', replayAlone)] }));
    const { samples: replayed, unchanged, becameInvalid, becameValid, failuresChanged } = report!;
    console.log(`The report: ${replayed} samples, ${unchanged} unchanged, ${becameInvalid} became invalid, ${becameValid} became valid, ${failuresChanged} failures changed.`);
    const met = median(overHttp) <= TARGET_MS;
    console.log(`Target: report over HTTP within ${TARGET_MS} ms (median): ${met ? 'met' : 'MISSED'}`);
    if (!met) process.exitCode = 1;
  } finally {
    await app.close();
    await storage.close();
    await db.drop();
  }
}

await main();
