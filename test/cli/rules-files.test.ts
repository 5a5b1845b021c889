/**
 * Rules files at the CLI (docs/operations.md): export, import and test on
 * the database directly, audited as the CLI's, then the same commands
 * against a running service with --url and --key. Run in process (runCli),
 * as operators' scripts would see it: output, files written, exit status.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createStorage } from '../../src/storage/create-storage.ts';
import { cliRunner } from '../support/cli.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

let db: FreshDatabase;
let dir: string;
let adminKey: string;

const env = () => ({ RULES_DATA_DIR: db.dataDir, DATABASE_URL: db.databaseUrl ?? '' });

const { run, runJson } = cliRunner(env);

const file = {
  format: 'rules/v1',
  payloadSchema: { type: 'object', properties: { amount: { type: 'number' } } },
  rules: [{ code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100', message: 'too much' }],
  tests: [
    { name: 'small passes', payload: { amount: 5 }, expect: { isValid: true } },
    { name: 'big fails', payload: { amount: 500 }, expect: { isValid: false, failures: ['LIMIT'] } },
  ],
};

async function writeJson(name: string, value: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(value), 'utf8');
  return path;
}

beforeAll(async () => {
  db = await freshDatabase();
  dir = await mkdtemp(join(tmpdir(), 'rules-files-'));
  expect((await run('migrate')).code).toBe(0);
  expect((await run('tenant', 'create', 'acme')).code).toBe(0);
  adminKey = (await runJson('key', 'create', 'acme', 'ops', '--role', 'admin')).key;
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await db?.drop();
});

describe('on the database', () => {
  it('a dry run changes nothing; an import with --publish makes the file live', async () => {
    const path = await writeJson('loans.json', file);
    const dry = await runJson('import', 'acme', 'loans', path, '--dry-run');
    expect(dry).toMatchObject({ dryRun: true, create: ['LIMIT'], rulesetVersion: null });
    expect((await run('export', 'acme', 'loans', '--draft')).code).toBe(1);

    const done = await runJson('import', 'acme', 'loans', path, '--publish');
    expect(done).toMatchObject({ dryRun: false, create: ['LIMIT'], update: [], rulesetVersion: 1, warnings: [] });
    const text = await run('import', 'acme', 'loans', path);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('unchanged: LIMIT');
  });

  it('exports the live file to stdout or --out', async () => {
    const printed = await runJson('export', 'acme', 'loans');
    expect(printed).toEqual({
      format: 'rules/v1',
      context: 'loans',
      rulesetVersion: 1,
      payloadSchema: file.payloadSchema,
      rules: [{ ...file.rules[0], severity: 'Error', required: false, priority: 0, enabled: true, tags: [] }],
      tests: file.tests,
    });
    const out = join(dir, 'out.json');
    const wrote = await run('export', 'acme', 'loans', '--out', out);
    expect(wrote.code, wrote.stderr).toBe(0);
    expect(JSON.parse(await readFile(out, 'utf8'))).toEqual(printed);
    expect((await run('export', 'acme', 'nothing')).code).toBe(1);
  });

  it('tests the draft with the stored tests or a file\'s (test-drafts), exit 1 when one fails', async () => {
    const stored = await run('test-drafts', 'acme', 'loans');
    expect(stored.code, stored.stderr).toBe(0);
    expect(stored.stdout).toContain('2 passed, 0 failed.');
    const failing = await writeJson('failing.json', { ...file, tests: [{ name: 'big passes', payload: { amount: 500 }, expect: { isValid: true } }] });
    const result = await run('test-drafts', 'acme', 'loans', failing);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('FAIL tests[0] big passes: expects valid; got invalid, failing LIMIT: LIMIT failed unexpectedly');
    // A publishing import that raises the limit is refused by the file's tests, and changes nothing.
    const raised = await writeJson('raised.json', { ...file, rules: [{ ...file.rules[0], expression: 'amount <= 1000' }] });
    const refused = await run('import', 'acme', 'loans', raised, '--publish');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('TESTS_FAILED');
    expect((await runJson('export', 'acme', 'loans', '--draft')).rules[0].expression).toBe('amount <= 100');
  });

  it('refuses a file with rules that do not compile, naming each, changing nothing', async () => {
    const bad = await writeJson('bad.json', { ...file, rules: [{ code: 'A', name: 'A', expression: 'new Date()' }, { code: 'B', name: 'B', expression: 'x >' }] });
    const result = await run('import', 'acme', 'loans', bad, '--prune');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('rules[0].expression');
    expect(result.stderr).toContain('rules[1].expression');
    const shape = await run('import', 'acme', 'loans', await writeJson('shape.json', { format: 'rules/v1', rules: [{ code: 'A' }] }));
    expect(shape.code).toBe(1);
    expect(shape.stderr).toContain('rules[0]');
    expect((await runJson('export', 'acme', 'loans', '--draft')).rules.map((r: { code: string }) => r.code)).toEqual(['LIMIT']);
  });

  it('checks its command line', async () => {
    expect((await run('import', 'acme', 'loans')).code).toBe(2);
    expect((await run('export', 'acme', 'loans', '--prune')).code).toBe(2);
    expect((await run('export', 'acme', 'loans', '--url', 'http://127.0.0.1:1')).code).toBe(2);
    expect((await run('tenant', 'create', 'acme', '--url', 'http://127.0.0.1:1', '--key', 'k')).code).toBe(2);
    expect((await run('test', 'acme', 'loans')).code).toBe(2);
  });
});

describe('against a running service (--url, --key)', () => {
  it('exports, imports and tests over HTTP, audited as the key', async () => {
    const config = loadConfig({ ...env(), LOG_LEVEL: 'silent', PORT: '0' });
    const storage = await createStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    const app = await buildApp({ config, storage });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const remote = ['--url', url, '--key', adminKey];
      const exported = await runJson('export', 'acme', 'loans', ...remote);
      expect(exported).toEqual(await runJsonOver(storage, 'loans'));
      const path = await writeJson('remote.json', exported);
      expect(await runJson('import', 'acme', 'copy', path, '--publish', ...remote)).toMatchObject({ create: ['LIMIT'], rulesetVersion: 1 });
      const tested = await run('test-drafts', 'acme', 'copy', ...remote);
      expect(tested.code, tested.stderr).toBe(0);
      expect(tested.stdout).toContain('2 passed, 0 failed.');
      const failing = await writeJson('remote-failing.json', { ...file, tests: [{ name: 'big passes', payload: { amount: 500 }, expect: { isValid: true } }] });
      const remoteFailing = await run('test-drafts', 'acme', 'copy', failing, ...remote);
      expect(remoteFailing.code).toBe(1);
      expect(remoteFailing.stdout).toContain('FAIL tests[0] big passes: expects valid; got invalid, failing LIMIT: LIMIT failed unexpectedly');

      const audit = await fetch(`${url}/api/v1/audit?action=context.import`, { headers: { 'x-api-key': adminKey, 'x-tenant-id': 'acme' } });
      const entries = ((await audit.json()) as { items: Array<{ context: string; actor: Record<string, unknown> }> }).items;
      expect(entries.find((e) => e.context === 'copy')?.actor).toMatchObject({ keyName: 'ops', role: 'admin' });
      expect(entries.filter((e) => e.context === 'loans').map((e) => e.actor)).toContainEqual({ cli: true });
      expect((await run('export', 'acme', 'loans', '--url', url, '--key', 'rk_wrong')).code).toBe(1);
    } finally {
      await app.close();
      await storage.close();
    }
  });
});

/** The live file as the service's own export answers it. */
async function runJsonOver(storage: Awaited<ReturnType<typeof createStorage>>, context: string): Promise<unknown> {
  const [live] = await storage.history.rulesets('acme', context, ['live']);
  const schema = await storage.payloadSchemas.get('acme', context);
  return {
    format: 'rules/v1', context, rulesetVersion: live.rulesetVersion, payloadSchema: schema?.schema ?? null,
    rules: live.rules.map(({ context: _c, ...rule }) => rule), tests: await storage.tests.list('acme', context),
  };
}
