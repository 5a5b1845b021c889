/**
 * `impact <tenant> <context> [--target draft|N] [--limit N]` at the CLI
 * (docs/operations.md): the impact report on the database directly, and
 * the same report from a running service with --url and --key, printed
 * for a person or as JSON. Run in process (runCli), as an operator sees it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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

const rule = (code: string, fieldPath: string, expression: string) => ({ code, name: code, fieldPath, expression, message: `${code} fails` });

async function importFile(name: string, rules: unknown[], ...flags: string[]): Promise<void> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify({ format: 'rules/v1', rules }), 'utf8');
  const result = await run('import', 'acme', 'loans', path, ...flags);
  expect(result.code, result.stderr).toBe(0);
}

/** The expected report: LIMIT raised from 100 to 200 and MIN added, on the payloads below. */
const expected = {
  samples: 4, unchanged: 1, becameInvalid: 1, becameValid: 1, failuresChanged: 1,
  byRule: [{ ruleCode: 'MIN', newFailures: 2, resolvedFailures: 0 }, { ruleCode: 'LIMIT', newFailures: 0, resolvedFailures: 1 }],
};

beforeAll(async () => {
  db = await freshDatabase();
  dir = await mkdtemp(join(tmpdir(), 'impact-cli-'));
  expect((await run('migrate')).code).toBe(0);
  expect((await run('tenant', 'create', 'acme')).code).toBe(0);
  adminKey = (await runJson('key', 'create', 'acme', 'ops', '--role', 'admin')).key;
  await importFile('v1.json', [rule('LIMIT', 'amount', 'amount <= 100'), rule('TERM', 'term', 'term <= 12')], '--publish');
  await importFile('draft.json', [rule('LIMIT', 'amount', 'amount <= 200'), rule('MIN', 'amount', 'amount >= 10'), rule('TERM', 'term', 'term <= 12')]);
  // Samples go in through the store the sampling writer uses; the CLI needs the database to itself afterwards.
  const storage = await createStorage({ databaseUrl: db.databaseUrl, dataDir: db.dataDir });
  try {
    const payloads = [{ amount: 50, term: 6 }, { amount: 150, term: 6 }, { amount: 5, term: 6 }, { amount: 5, term: 24 }];
    await storage.samples.insertMany(payloads.map((payload, i) => ({
      tenantId: 'acme', context: 'loans', recordedAt: new Date(Date.UTC(2026, 10, 20, 8, i)), rulesetVersion: 1, isValid: true, failures: [], payload,
    })));
  } finally {
    await storage.close();
  }
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await db?.drop();
});

describe('impact on the database', () => {
  it('prints the counts, the rules that moved and the examples', async () => {
    const result = await run('impact', 'acme', 'loans');
    expect(result.code, result.stderr).toBe(0);
    const [first] = result.stdout.split('\n');
    expect(first).toBe('Impact of the draft of context loans on its 4 newest sample(s), compared with the live rules:');
    for (const row of [/^unchanged +1$/m, /^became invalid +1$/m, /^became valid +1$/m, /^failures changed +1$/m, /^RULE +NEW FAILURES +RESOLVED FAILURES$/m, /^MIN +2 +0$/m, /^LIMIT +0 +1$/m]) {
      expect(result.stdout).toMatch(row);
    }
    expect(result.stdout).toMatch(/^[0-9a-f-]{36} +2026-11-20T08:02:00\.000Z +valid +invalid \(MIN\)$/m);
    expect(result.stdout).toMatch(/^[0-9a-f-]{36} +2026-11-20T08:03:00\.000Z +invalid \(TERM\) +invalid \(MIN, TERM\)$/m);
  });

  it('answers the report as the API does with --json, and takes --target and --limit', async () => {
    expect(await runJson('impact', 'acme', 'loans')).toMatchObject(expected);
    expect(await runJson('impact', 'acme', 'loans', '--target', '1')).toMatchObject({ samples: 4, unchanged: 4, byRule: [], examples: [] });
    expect(await runJson('impact', 'acme', 'loans', '--limit', '1')).toMatchObject({ samples: 1, failuresChanged: 1 });
  });

  it('fails for an unknown version or context, and checks its command line', async () => {
    const unknown = await run('impact', 'acme', 'loans', '--target', '9');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no ruleset version 9');
    expect((await run('impact', 'acme', 'nothing')).code).toBe(1);
    for (const args of [['--target', 'live'], ['--limit', '0'], ['--limit', '100001'], ['--draft']]) {
      const wrong = await run('impact', 'acme', 'loans', ...args);
      expect(wrong.code, args.join(' ')).toBe(2);
    }
    expect((await run('export', 'acme', 'loans', '--target', '1')).code).toBe(2);
  });
});

describe('impact against a running service (--url, --key)', () => {
  it('prints the service\'s report', async () => {
    const local = await runJson('impact', 'acme', 'loans');
    const config = loadConfig({ ...env(), LOG_LEVEL: 'silent', PORT: '0' });
    const storage = await createStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    const app = await buildApp({ config, storage });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const remote = ['--url', url, '--key', adminKey];
      expect(await runJson('impact', 'acme', 'loans', ...remote)).toEqual(local);
      const text = await run('impact', 'acme', 'loans', '--target', '1', ...remote);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toContain('Impact of version 1 of context loans');
      const unknown = await run('impact', 'acme', 'loans', '--target', '9', ...remote);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('404 NOT_FOUND');
    } finally {
      await app.close();
      await storage.close();
    }
  });
});
