/**
 * `bench` (docs/operations.md, "What each rule costs"): a rules file's
 * validator timed offline over its tests' payloads, whole and without each
 * rule, and the same for a context on the database (its stored tests, or
 * its recorded samples with --samples) and on a running service (--url).
 * Timings are never asserted: only what a machine's load cannot change,
 * the report's shape, and the order of a rule thousands of times heavier
 * than the others (a quadratic check over 80 items against two
 * comparisons), which no noise reverses.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStorage } from '../../src/storage/create-storage.ts';
import { cliRunner, withService } from '../support/cli.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

/** Short tasks: the test checks what is reported, not how fast. */
const QUICK = ['--time', '20'];

const items = Array.from({ length: 80 }, (_, i) => ({ sku: `sku-${i}` }));
const file = {
  format: 'rules/v1',
  context: 'orders',
  rules: [
    { code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100', message: 'too much' },
    { code: 'SKUS', name: 'Distinct SKUs', fieldPath: 'items', expression: 'items.every(a => items.filter(b => b.sku == a.sku).length == 1)', message: 'a SKU twice' },
    { code: 'TERM', name: 'Term', fieldPath: 'term', expression: 'term >= 6', message: 'too short' },
  ],
  tests: [
    { name: 'small order', payload: { amount: 5, term: 12, items }, expect: { isValid: true } },
    { name: 'too much', payload: { amount: 500, term: 12, items }, expect: { isValid: false, failures: ['LIMIT'] } },
  ],
};

let dir: string;
let db: FreshDatabase;
let adminKey: string;

const offline = cliRunner(() => ({}));
const env = () => ({ RULES_DATA_DIR: db.dataDir, DATABASE_URL: db.databaseUrl ?? '' });
const { run, runJson } = cliRunner(env);

async function writeJson(name: string, value: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(value), 'utf8');
  return path;
}

/**
 * The service up for the remote form. The benchmark runs in this process,
 * beside the service: its timing loops hold the event loop, which would
 * make the service shed management requests (MAX_EVENT_LOOP_DELAY_MS 0: never).
 */
const withBenchService = (body: (url: string) => Promise<void>): Promise<void> =>
  withService({ ...env(), MAX_EVENT_LOOP_DELAY_MS: '0' }, body);

/** What every report holds, whatever the machine's speed. */
function expectReport(report: any, payloads: { from: string; count: number }): void {
  expect(report.payloads).toMatchObject(payloads);
  expect(report.payloads.validationsPerPass).toBeGreaterThanOrEqual(200);
  expect(report.rules).toBe(3);
  expect(report.runtime).toMatchObject({ node: process.version, tinybench: expect.stringMatching(/^\d+\.\d+\.\d+$/), taskMs: 20 });
  for (const figures of [report.validator, ...report.baselines, ...report.shares.map((share: any) => share.without)]) {
    expect(Object.keys(figures).sort()).toEqual(['meanUs', 'medianMarginUs', 'medianUs', 'opsPerSecond', 'p99Us', 'rmePercent', 'samples', 'tinybench']);
    expect(figures.meanUs).toBeGreaterThan(0);
    expect(figures.samples).toBeGreaterThan(0);
    expect(Object.keys(figures.tinybench).sort()).toEqual(['hz', 'meanMs', 'p99Ms']);
  }
  // One run of all rules before the first variant and one after each.
  expect(report.baselines).toHaveLength(4);
  expect(report.noiseUs).toBeGreaterThanOrEqual(0);
  expect(report.shares.map((share: any) => share.code).sort()).toEqual(['LIMIT', 'SKUS', 'TERM']);
  expect(report.shares[0].code).toBe('SKUS');
  expect(report.shares[0].share).toBeGreaterThan(0.5);
  for (const share of report.shares) {
    expect(share.share).toBeGreaterThanOrEqual(0);
    expect(share.share).toBeLessThanOrEqual(1);
    expect(typeof share.measuredShare).toBe('number');
    expect(typeof share.withinNoise).toBe('boolean');
  }
  expect(report.unmeasured).toEqual([]);
  expect(report.screened).toBeNull();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bench-cli-'));
  db = await freshDatabase();
  expect((await run('migrate')).code).toBe(0);
  expect((await run('tenant', 'create', 'acme')).code).toBe(0);
  adminKey = (await runJson('key', 'create', 'acme', 'ops', '--role', 'admin')).key;
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await db?.drop();
});

describe('bench FILE, offline', () => {
  it('prints the time per validation and each rule\'s share, the heaviest rule first', async () => {
    const path = await writeJson('orders.json', file);
    const result = await offline.run('bench', path, ...QUICK);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe(`Benchmark of ${path}: 3 rule(s), over the payloads of its 2 test(s); a pass validates 200 payloads.`);
    expect(lines[1]).toMatch(/^tinybench \d+\.\d+\.\d+ on node v\d+\.\d+\.\d+, 20 ms per task\.$/);
    expect(result.stdout).toMatch(/^MEAN +MEDIAN +P99 +OPS\/S +SAMPLES +RME$/m);
    expect(result.stdout).toMatch(/^[\d.]+ µs +[\d.]+ µs +[\d.]+ µs +[\d,]+ +\d+ +±[\d.]+%$/m);
    const header = lines.findIndex((line) => /^RULE +SHARE +SAVES +ALL RULES +WITHOUT IT$/.test(line));
    expect(header).toBeGreaterThan(0);
    expect(lines[header + 1]).toMatch(/^SKUS +\d+\.\d% +-?[\d.]+ µs +[\d.]+ µs +[\d.]+ µs( +within noise)?$/);
    expect(lines.slice(header + 2, header + 4).map((line) => line.split(' ')[0]).sort()).toEqual(['LIMIT', 'TERM']);
    expect(result.stdout).toMatch(/^The shares add up to [\d.]+%; the rest is what every validation pays whatever its rules, and noise\.$/m);
  });

  it('prints a stable document with --json', async () => {
    const path = join(dir, 'orders.json');
    const report = await offline.runJson('bench', path, ...QUICK);
    expect(Object.keys(report).sort()).toEqual([
      'baselines', 'noiseUs', 'payloads', 'rules', 'runtime', 'screened', 'shareSum', 'shares', 'source', 'unmeasured', 'validator',
    ]);
    expect(report.source).toEqual({ kind: 'file', file: path });
    expectReport(report, { from: 'tests', count: 2 });
  });

  it('with --top, times the costliest rules alone first and only those with and without', async () => {
    const report = await offline.runJson('bench', join(dir, 'orders.json'), ...QUICK, '--top', '1');
    expect(report.shares.map((share: any) => share.code)).toEqual(['SKUS']);
    expect(report.screened.map((entry: any) => entry.code)[0]).toBe('SKUS');
    expect(report.screened).toHaveLength(3);
    expect([...report.unmeasured].sort()).toEqual(['LIMIT', 'TERM']);
    const text = await offline.run('bench', join(dir, 'orders.json'), ...QUICK, '--top', '1');
    expect(text.stdout).toContain('2 rule(s) not measured (--top 1): the 1 costliest alone were; --json lists every rule\'s time alone.');
  });

  it('exits 1 naming each error by its path when a rule does not compile, measuring nothing', async () => {
    const broken = { ...file, rules: [file.rules[0], { ...file.rules[1], expression: 'items.every(a =>' }, file.rules[2]] };
    const path = await writeJson('broken.json', broken);
    const result = await offline.run('bench', path);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`${path} does not compile; nothing was measured:`);
    expect(result.stdout).toMatch(/^ {2}rules\[1\]\.expression: /m);
    expect(result.stdout).not.toContain('µs');
    const json = await offline.run('bench', path, '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ errors: [{ path: 'rules[1].expression' }] });
  });

  it('exits 1 for a file with no tests, and for one that is not there', async () => {
    const untested = await offline.run('bench', await writeJson('untested.json', { ...file, tests: [] }));
    expect(untested.code).toBe(1);
    expect(untested.stderr).toContain('has no tests: bench times the validator over the tests\' payloads');
    const missing = await offline.run('bench', join(dir, 'nowhere.json'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('cannot read');
  });

  it('exits 2 on a wrong command line, doing nothing', async () => {
    const cases: Array<[string[], string]> = [
      [['bench'], 'expected: bench FILE, or bench <tenant> <context>'],
      [['bench', 'f.json', '--time', 'soon'], '--time must be a whole number'],
      [['bench', 'f.json', '--time', '0'], '--time must be between 1 and 60000'],
      [['bench', 'f.json', '--top', '0'], '--top must be between 1'],
      [['bench', 'f.json', '--samples', '10'], '--samples applies only to "bench <tenant> <context>"'],
      [['bench', 'f.json', '--url', 'http://127.0.0.1:1', '--key', 'k'], '--url does not apply to "bench"'],
      [['bench', 'acme', 'orders', '--samples', '10', '--url', 'http://127.0.0.1:1', '--key', 'k'], 'the API does not list'],
      [['test', 'f.json', '--time', '20'], '--time applies only to "bench" and "bench <tenant> <context>"'],
    ];
    for (const [args, message] of cases) {
      const result = await offline.run(...args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toContain(message);
    }
  });
});

describe('bench <tenant> <context>', () => {
  it('times the live rules over the stored tests on the database, or over the newest recorded samples', async () => {
    const imported = await run('import', 'acme', 'orders', join(dir, 'orders.json'), '--publish');
    expect(imported.code, imported.stdout + imported.stderr).toBe(0);
    const report = await runJson('bench', 'acme', 'orders', ...QUICK);
    expect(report.source).toEqual({ kind: 'context', tenantId: 'acme', context: 'orders', ruleset: 'live', rulesetVersion: 1 });
    expectReport(report, { from: 'tests', count: 2 });

    const none = await run('bench', 'acme', 'orders', '--samples', '5');
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('context orders of tenant acme (live rules, version 1) has no recorded samples');

    // Samples go in through the store the sampling writer uses; the CLI needs the database to itself afterwards.
    const storage = await createStorage({ databaseUrl: db.databaseUrl, dataDir: db.dataDir });
    try {
      await storage.samples.insertMany([1, 2, 3].map((i) => ({
        tenantId: 'acme', context: 'orders', recordedAt: new Date(Date.UTC(2026, 10, 20, 8, i)), rulesetVersion: 1, isValid: true, failures: [],
        payload: { amount: i, term: 12, items },
      })));
    } finally {
      await storage.close();
    }
    expectReport(await runJson('bench', 'acme', 'orders', '--samples', '2', ...QUICK), { from: 'samples', count: 2 });
    const text = await run('bench', 'acme', 'orders', '--samples', '100', ...QUICK);
    expect(text.stdout.split('\n')[0]).toBe('Benchmark of context orders of tenant acme (live rules, version 1): 3 rule(s), over its 3 newest recorded sample(s); a pass validates 201 payloads.');

    const unknown = await run('bench', 'acme', 'nothing');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('context nothing of tenant acme has no rules');
  });

  it('times a context of a running service with --url, from its export', async () => {
    await withBenchService(async (url) => {
      const remote = cliRunner(() => ({ RULES_API_KEY: adminKey }));
      const report = await remote.runJson('bench', 'acme', 'orders', '--url', url, ...QUICK);
      expect(report.source).toEqual({ kind: 'context', tenantId: 'acme', context: 'orders', ruleset: 'live', rulesetVersion: 1 });
      expectReport(report, { from: 'tests', count: 2 });
      const draft = await remote.run('bench', 'acme', 'orders', '--draft', '--url', url, ...QUICK);
      expect(draft.code, draft.stderr).toBe(0);
      expect(draft.stdout.split('\n')[0]).toBe('Benchmark of context orders of tenant acme (draft rules): 3 rule(s), over the payloads of its 2 test(s); a pass validates 200 payloads.');
      const refused = await cliRunner(() => ({ RULES_API_KEY: 'rk_wrong' })).run('bench', 'acme', 'orders', '--url', url);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('401');
    });
  });
});
