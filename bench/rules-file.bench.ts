/**
 * Rules-file benchmark (`npm run bench:rules-file`): what export and import
 * of a 1,000-rule context cost over HTTP, on the real service.
 *
 * The service runs in process on PGlite in a temporary folder (or
 * PostgreSQL when DATABASE_URL is set, on a fresh database created and
 * dropped). 1,000 rules (copies of the loan rules, as
 * `suites/generated-ruleset.ts` makes them) are imported with
 * `publish=true` into a new context each round, so each round creates
 * 1,000 rules, compiles and publishes them in one transaction; then timed,
 * each the median of its rounds:
 *
 * - `import + publish (new context)`: the above;
 * - `export (live)`: GET …/export of the 1,000-rule context;
 * - `import unchanged`: the exported file imported back (every rule
 *   compared, none written);
 * - `import dry run`: the same with `dryRun=true`.
 *
 * `-- --quick` runs fewer rounds. No target: the figures are reported.
 */
import { performance } from 'node:perf_hooks';
import { buildApp } from '../src/app.ts';
import { generateApiKey, hashApiKey } from '../src/auth/api-key.ts';
import { loadConfig } from '../src/config.ts';
import { createStorage } from '../src/storage/create-storage.ts';
import { benchDatabase } from './tools/bench-database.ts';
import { fixed, median, textTable } from './tools/report-table.ts';
import { asFileRule } from './tools/rules-api.ts';
import { generateRuleset } from './suites/generated-ruleset.ts';

const RULES = 1000;
const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 10;
const TENANT = 'bench';
const KEY = generateApiKey();

async function main(): Promise<void> {
  const db = await benchDatabase('bench-rules-file');
  const config = loadConfig({
    RULES_DATA_DIR: db.dataDir, DATABASE_URL: db.databaseUrl ?? '', LOG_LEVEL: 'silent', PORT: '0',
    MAX_BODY_BYTES: String(16 * 1024 * 1024), RATE_LIMIT_MAX: '1000000',
  });
  const storage = await createStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await storage.tenants.ensureTenant(TENANT);
  await storage.apiKeys.create(TENANT, 'bench', 'admin', hashApiKey(KEY));
  const app = await buildApp({ config, storage });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const call = async (method: string, url: string, body?: unknown): Promise<unknown> => {
    const response = await fetch(`${base}/api/v1${url}`, {
      method,
      headers: { 'x-api-key': KEY, 'x-tenant-id': TENANT, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer: unknown = await response.json();
    if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(answer).slice(0, 500)}`);
    return answer;
  };
  const timed = async (run: (round: number) => Promise<unknown>): Promise<number[]> => {
    const times: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const start = performance.now();
      await run(round);
      times.push(performance.now() - start);
    }
    return times;
  };
  try {
    const file = { format: 'rules/v1', rules: generateRuleset(RULES).map(asFileRule), tests: [] };
    await call('POST', '/contexts/warm-up/import?publish=true', file);
    const importing = await timed((round) => call('POST', `/contexts/file-${round}/import?publish=true`, file));
    const exporting = await timed(() => call('GET', '/contexts/file-0/export'));
    const exported = await call('GET', '/contexts/file-0/export');
    const unchanged = await timed(() => call('POST', '/contexts/file-0/import', exported));
    const dryRun = await timed(() => call('POST', '/contexts/file-0/import?dryRun=true', exported));
    const row = (name: string, times: number[]) => [name, fixed(median(times), 0), fixed(Math.min(...times), 0), fixed(Math.max(...times), 0)];
    console.log(`Rules files, ${RULES} rules, ${storage.kind}, ${ROUNDS} rounds (ms)`);
    console.log(textTable({ header: ['operation', 'median', 'min', 'max'], rows: [
      row('import + publish (new context)', importing),
      row('export (live)', exporting),
      row('import unchanged', unchanged),
      row('import dry run', dryRun),
    ] }));
  } finally {
    await app.close();
    await storage.close();
    await db.drop();
  }
}

await main();
