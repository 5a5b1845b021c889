/**
 * A rule's decision table as CSV at the CLI (docs/operations.md, "CLI"):
 * `table export` and `table import` on the database, audited as the CLI's,
 * then the same commands against a running service with --url, through
 * GET and PUT /rules/{id}/table.csv. Run in process (runCli), as an
 * operator's script sees it: output, files written, exit status.
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
/** The ids of the rules LIMITS (with a table) and PLAIN (without). */
let limitsId: string;
let plainId: string;

const env = () => ({ RULES_DATA_DIR: db.dataDir, DATABASE_URL: db.databaseUrl ?? '' });
const { run, runJson } = cliRunner(env);

/** The largest amount by product and country. */
const table = {
  hitPolicy: 'first',
  inputs: [{ name: 'product', path: 'product' }, { name: 'country', path: 'country' }],
  outputs: ['maxAmount', 'note'],
  rows: [
    { when: ['"auto"', 'in ["US", "CA"]'], then: [50000, 'north, america'] },
    { when: ['"auto"', '-'], then: [20000, '12'] },
    { when: ['-', '-'], then: [1000, { tier: 'default' }] },
  ],
};

/** The table as CSV, as GET /rules/{id}/table.csv answers it. */
const tableCsv = [
  'product,country,maxAmount,note',
  '"""auto""","in [""US"", ""CA""]",50000,"north, america"',
  '"""auto""",-,20000,"""12"""',
  '-,-,1000,"{""tier"":""default""}"',
  '',
].join('\r\n');

const rulesFile = {
  format: 'rules/v1',
  rules: [
    {
      code: 'LIMITS', name: 'Amount within the limit', fieldPath: 'amount', table,
      expression: '$value <= $row.maxAmount', message: '{{ $value }} is over {{ $row.maxAmount }}',
    },
    { code: 'PLAIN', name: 'Plain', expression: 'true' },
  ],
};

async function write(name: string, text: string | Uint8Array): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

beforeAll(async () => {
  db = await freshDatabase();
  dir = await mkdtemp(join(tmpdir(), 'table-commands-'));
  expect((await run('migrate')).code).toBe(0);
  expect((await run('tenant', 'create', 'acme')).code).toBe(0);
  adminKey = (await runJson('key', 'create', 'acme', 'ops', '--role', 'admin')).key;
  const imported = await run('import', 'acme', 'loans', await write('loans.json', JSON.stringify(rulesFile)));
  expect(imported.code, imported.stderr).toBe(0);
  // The rules' ids, read while no CLI command holds the database.
  const storage = await createStorage({ databaseUrl: db.databaseUrl, dataDir: db.dataDir });
  try {
    const { items } = await storage.rules.list('acme', { context: 'loans', limit: 10 });
    limitsId = items.find((rule) => rule.code === 'LIMITS')!.id;
    plainId = items.find((rule) => rule.code === 'PLAIN')!.id;
  } finally {
    await storage.close();
  }
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await db?.drop();
});

describe('on the database', () => {
  it('table export prints the CSV exactly, or writes it to FILE', async () => {
    const printed = await run('table', 'export', 'acme', limitsId);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toBe(tableCsv);
    expect(await runJson('table', 'export', 'acme', limitsId)).toEqual({ ruleId: limitsId, version: 1, csv: tableCsv });

    const out = join(dir, 'limits.csv');
    const wrote = await run('table', 'export', 'acme', limitsId, out);
    expect(wrote.code, wrote.stderr).toBe(0);
    expect(wrote.stdout).toBe(`Wrote the decision table of rule ${limitsId} (version 1) to ${out}.\n`);
    expect(await runJson('table', 'export', 'acme', limitsId, out)).toEqual({ ruleId: limitsId, version: 1, out });
    expect(await readFile(out, 'utf8')).toBe(tableCsv);
  });

  it('round-trips: export, import, export gives the same CSV and the same version', async () => {
    const out = join(dir, 'round-trip.csv');
    expect((await run('table', 'export', 'acme', limitsId, out)).code).toBe(0);
    const imported = await runJson('table', 'import', 'acme', limitsId, out);
    expect(imported).toMatchObject({ id: limitsId, code: 'LIMITS', version: 1, status: 'draft', table, warnings: [] });
    expect((await run('table', 'export', 'acme', limitsId)).stdout).toBe(tableCsv);
  });

  it('table import replaces the rows, keeps inputs and hit policy, and prints the new version and the warnings', async () => {
    // As a spreadsheet saves it: a byte-order mark, LF line ends; a catch-all row first leaves the next one unreachable.
    const edited = await write('edited.csv', '\uFEFFproduct,country,maxAmount,note\n-,-,500,any\n"""boat""",-,7000,boats\n');
    const imported = await run('table', 'import', 'acme', limitsId, edited);
    expect(imported.code, imported.stderr).toBe(0);
    const [first, ...warnings] = imported.stdout.trimEnd().split('\n');
    expect(first).toBe(`Rule LIMITS (${limitsId}): 2 row(s); version 2, status draft.`);
    expect(warnings).toContainEqual(expect.stringMatching(/^warning TABLE_UNREACHABLE at table\.rows\[1\]: /));

    const exported = await run('table', 'export', 'acme', limitsId);
    expect(exported.stdout).toBe('product,country,maxAmount,note\r\n-,-,500,any\r\n"""boat""",-,7000,boats\r\n');
    // Back to the first rows: version 3, the table as it was.
    const restored = await runJson('table', 'import', 'acme', limitsId, await write('restored.csv', tableCsv));
    expect(restored).toMatchObject({ version: 3, table });
  });

  it('a bad CSV changes nothing and exits 1 naming the line and field', async () => {
    const wrongCount = await run('table', 'import', 'acme', limitsId, await write('count.csv', 'product,country,maxAmount,note\n-,-,1,x\n-,1,x\n'));
    expect(wrongCount.code).toBe(1);
    expect(wrongCount.stderr).toContain('count.csv was not imported, the CSV is invalid:\n  line 3: has 3 fields; the header has 4 (2 cells, then 2 outputs)');

    const openQuote = await run('table', 'import', 'acme', limitsId, await write('quote.csv', 'product,country,maxAmount,note\n-,"-,1,x\n'));
    expect(openQuote.code).toBe(1);
    expect(openQuote.stderr).toMatch(/line 2: field 2: a quoted field is not closed/);

    const header = await run('table', 'import', 'acme', limitsId, await write('header.csv', 'product,maxAmount\n-,1\n'));
    expect(header.code).toBe(1);
    expect(header.stderr).toContain('line 1: the header is product,maxAmount; the table\'s is product,country,maxAmount,note');

    const noCompile = await run('table', 'import', 'acme', limitsId, await write('compile.csv', 'product,country,maxAmount,note\n-,-,1,x\n-,>= (,1,x\n'));
    expect(noCompile.code).toBe(1);
    expect(noCompile.stderr).toMatch(/a row does not compile:\n {2}table\.rows\[1\]\.when\[1\]: /);

    const latin1 = Uint8Array.from([...new TextEncoder().encode('product,country,maxAmount,note\n-,-,1,'), 0xe9, 0x0a]);
    const notUtf8 = await run('table', 'import', 'acme', limitsId, await write('latin1.csv', latin1));
    expect(notUtf8.code).toBe(1);
    expect(notUtf8.stderr).toContain('is not UTF-8');

    const missing = await run('table', 'import', 'acme', limitsId, join(dir, 'missing.csv'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('cannot read');

    expect((await run('table', 'export', 'acme', limitsId)).stdout).toBe(tableCsv);
  });

  it('--version N imports only while the rule is still at version N', async () => {
    // The rule is at version 3 (the imports above); a file made from version 2 is refused and changes nothing.
    const stale = await run('table', 'import', 'acme', limitsId, await write('stale.csv', tableCsv.replace('1000', '900')), '--version', '2');
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('stale.csv was not imported: the rule is at version 3, not 2 (--version 2); export the table again');
    expect((await run('table', 'export', 'acme', limitsId)).stdout).toBe(tableCsv);
    const current = await runJson('table', 'import', 'acme', limitsId, await write('current.csv', tableCsv), '--version', '3');
    expect(current).toMatchObject({ version: 3, table });
  });

  it('an unknown rule, a rule without a table or an unknown tenant exit 1, saying so', async () => {
    const unknown = await run('table', 'export', 'acme', '00000000-0000-4000-8000-000000000000');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('error: tenant acme has no rule 00000000-0000-4000-8000-000000000000\n');
    expect((await run('table', 'export', 'acme', 'not-an-id')).stderr).toBe('error: tenant acme has no rule not-an-id\n');
    const plain = await run('table', 'import', 'acme', plainId, await write('plain.csv', tableCsv));
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain(`rule PLAIN (${plainId}) has no decision table`);
    const tenant = await run('table', 'export', 'nobody', limitsId);
    expect(tenant.code).toBe(1);
    expect(tenant.stderr).toContain('tenant nobody does not exist');
  });

  it('checks its command line (exit 2)', async () => {
    for (const argv of [
      ['table'], ['table', 'show', 'acme', limitsId], ['table', 'export', 'acme'], ['table', 'export', 'acme', limitsId, 'a', 'b'],
      ['table', 'import', 'acme', limitsId], ['table', 'import', 'Not A Tenant', limitsId, 'f.csv'], ['table', 'export', 'acme', limitsId, '--draft'],
      ['table', 'export', 'acme', limitsId, '--version', '1'], ['table', 'import', 'acme', limitsId, 'f.csv', '--version', '0'],
      ['table', 'import', 'acme', limitsId, 'f.csv', '--version', 'latest'],
    ]) {
      const result = await run(...argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr).toMatch(/^error: /);
    }
  });

  it('--help lists both commands', async () => {
    const help = (await run('--help')).stdout;
    expect(help).toContain('table export <tenant> <rule-id> [FILE]');
    expect(help).toContain('table import <tenant> <rule-id> FILE [--version N]');
  });
});

describe('against a running service (--url)', () => {
  it('exports and imports through the table.csv routes, audited as the key; a bad CSV names the line', async () => {
    const config = loadConfig({ ...env(), LOG_LEVEL: 'silent', PORT: '0' });
    const storage = await createStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    const app = await buildApp({ config, storage });
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      const remote = ['--url', url, '--key', adminKey];
      const exported = await run('table', 'export', 'acme', limitsId, ...remote);
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stdout).toBe(tableCsv);

      expect(await runJson('table', 'export', 'acme', limitsId, ...remote)).toEqual({ ruleId: limitsId, version: 3, csv: tableCsv });

      // Round trip: export to a file, import it, export again.
      const out = join(dir, 'remote.csv');
      expect((await run('table', 'export', 'acme', limitsId, out, ...remote)).stdout).toBe(`Wrote the decision table of rule ${limitsId} (version 3) to ${out}.\n`);
      expect(await readFile(out, 'utf8')).toBe(tableCsv);
      const same = await runJson('table', 'import', 'acme', limitsId, out, ...remote);
      expect(same).toMatchObject({ id: limitsId, version: 3, table, warnings: [] });
      expect((await run('table', 'export', 'acme', limitsId, ...remote)).stdout).toBe(tableCsv);

      const edited = await write('remote-edited.csv', 'product,country,maxAmount,note\n"""boat""",-,7000,boats\n-,-,500,any\n');
      // --version: the service refuses a file made from an older version (409), and takes it at the current one.
      const stale = await run('table', 'import', 'acme', limitsId, edited, '--version', '2', ...remote);
      expect(stale.code).toBe(1);
      expect(stale.stderr).toBe('error: 409 CONFLICT: the rule is at version 3, not 2\n');
      expect((await run('table', 'export', 'acme', limitsId, ...remote)).stdout).toBe(tableCsv);
      const imported = await run('table', 'import', 'acme', limitsId, edited, '--version', '3', ...remote);
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stdout).toBe(`Rule LIMITS (${limitsId}): 2 row(s); version 4, status draft.\n`);

      const bad = await run('table', 'import', 'acme', limitsId, await write('remote-bad.csv', 'product,country,maxAmount,note\n-,-,1,x\n-,1,x\n'), ...remote);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('400 INVALID_BODY: The CSV is invalid.\n  line 3: has 3 fields; the header has 4 (2 cells, then 2 outputs)');
      const plain = await run('table', 'export', 'acme', plainId, ...remote);
      expect(plain.code).toBe(1);
      expect(plain.stderr).toContain('404 NOT_FOUND: The rule has no decision table');
      expect((await run('table', 'export', 'acme', limitsId, '--url', url, '--key', 'rk_wrong')).code).toBe(1);

      // The CLI's own changes on the database are audited as the CLI's, the ones over HTTP as the key's.
      const audit = await fetch(`${url}/api/v1/audit?action=rule.update`, { headers: { 'x-api-key': adminKey, 'x-tenant-id': 'acme' } });
      const actors = ((await audit.json()) as { items: Array<{ actor: Record<string, unknown> }> }).items.map((entry) => entry.actor);
      expect(actors[0]).toMatchObject({ keyName: 'ops', role: 'admin' });
      expect(actors.filter((actor) => actor.cli === true)).toHaveLength(2);
    } finally {
      await app.close();
      await storage.close();
    }
    // What the service saved is what the database export shows.
    expect((await run('table', 'export', 'acme', limitsId)).stdout).toBe('product,country,maxAmount,note\r\n"""boat""",-,7000,boats\r\n-,-,500,any\r\n');
  });
});
