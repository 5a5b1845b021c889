/**
 * `cli test FILE` (docs/operations.md): a rules file's tests against the
 * file's own rules, with no service and no database, as a CI job runs it
 * on every change to the file. Run in process with an environment that
 * names no database: the commands that need one refuse, naming both
 * variables, instead of creating an empty database in ./data.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliRunner } from '../support/cli.ts';

/** No DATABASE_URL, no RULES_DATA_DIR. */
const { run, runJson } = cliRunner(() => ({}));

let dir: string;

const file = {
  format: 'rules/v1',
  context: 'loans',
  payloadSchema: { type: 'object', properties: { amount: { type: 'number' }, term: { type: 'number' } } },
  rules: [
    { code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100', message: 'too much' },
    { code: 'TERM', name: 'Term', fieldPath: 'term', expression: 'term >= 6', message: 'too short' },
  ],
  tests: [
    { name: 'small passes', payload: { amount: 5, term: 12 }, expect: { isValid: true } },
    { name: 'big fails', payload: { amount: 500, term: 12 }, expect: { isValid: false, failures: ['LIMIT'] } },
  ],
};

async function writeJson(name: string, value: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(value), 'utf8');
  return path;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'offline-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('test FILE, offline', () => {
  it('passes a file whose rules compile and whose tests pass: exit 0', async () => {
    const result = await run('test', await writeJson('good.json', file));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('ok   tests[0] small passes: valid');
    expect(result.stdout).toContain('ok   tests[1] big fails: invalid (LIMIT)');
    expect(result.stdout).toContain('2 passed, 0 failed.');
    expect(await runJson('test', join(dir, 'good.json'))).toMatchObject({ passed: 2, failed: 0, errors: [], warnings: [] });
  });

  it('fails a file whose edited rule breaks a test, naming the test and the codes that differ: exit 1', async () => {
    const raised = { ...file, rules: [{ ...file.rules[0], expression: 'amount <= 1000' }, file.rules[1]] };
    const result = await run('test', await writeJson('raised.json', raised));
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('ok   tests[0] small passes: valid');
    expect(result.stdout).toContain('FAIL tests[1] big fails: expects invalid, failing LIMIT; got valid: LIMIT did not fail');
    expect(result.stdout).toContain('1 passed, 1 failed.');

    const shorter = { ...file, tests: [{ name: 'short fails', payload: { amount: 500, term: 3 }, expect: { isValid: false, failures: ['LIMIT'] } }] };
    const unexpected = await run('test', await writeJson('shorter.json', shorter));
    expect(unexpected.code).toBe(1);
    expect(unexpected.stdout).toContain('FAIL tests[0] short fails: expects invalid, failing LIMIT; got invalid, failing LIMIT, TERM: TERM failed unexpectedly');
    const json = await run('test', join(dir, 'shorter.json'), '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({ passed: 0, failed: 1, results: [{ name: 'short fails', ok: false, failures: ['LIMIT', 'TERM'] }] });
  });

  it('fails a file with a rule that does not compile, naming each error by its path, running no test: exit 1', async () => {
    const broken = { ...file, rules: [file.rules[0], { ...file.rules[1], expression: 'term >' }, { code: 'NEW', name: 'New', expression: 'new Date()' }] };
    const result = await run('test', await writeJson('broken.json', broken));
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('does not compile; no test was run');
    expect(result.stdout).toMatch(/ {2}rules\[1\]\.expression: line 1/);
    expect(result.stdout).toMatch(/ {2}rules\[2\]\.expression: .*`new` is not allowed/);
    expect(result.stdout).not.toContain('passed');
    const json = await run('test', join(dir, 'broken.json'), '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).errors.map((e: { path: string }) => e.path)).toEqual(['rules[1].expression', 'rules[2].expression']);
  });

  it('prints the warnings of the file\'s rules against its payload schema, without failing', async () => {
    const typo = { ...file, rules: [{ ...file.rules[0], fieldPath: 'amuont', expression: 'amuont <= 100' }], tests: [] };
    const result = await run('test', await writeJson('typo.json', typo));
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toMatch(/^warning \S+ at rules\[0\]\.\S+: .*amuont/m);
    expect(result.stdout).toContain('0 passed, 0 failed.');
  });

  it('refuses what is not a rules file, exit 1; the old form and --url, exit 2', async () => {
    const shape = await run('test', await writeJson('shape.json', { format: 'rules/v1', rules: [{ code: 'A' }] }));
    expect(shape.code).toBe(1);
    expect(shape.stderr).toContain('is not a rules file');
    expect(shape.stderr).toContain('rules[0]');
    expect((await run('test', join(dir, 'missing.json'))).stderr).toContain('cannot read');

    const old = await run('test', 'acme', 'loans', join(dir, 'good.json'));
    expect(old.code).toBe(2);
    expect(old.stderr).toContain('test-drafts <tenant> <context> [FILE]');
    const remote = await run('test', join(dir, 'good.json'), '--url', 'http://127.0.0.1:1', '--key', 'k');
    expect(remote.code).toBe(2);
    expect(remote.stderr).toContain('--url does not apply to "test"');
  });
});

describe('without a database named', () => {
  it.each([
    [['migrate']],
    [['tenant', 'create', 'acme']],
    [['key', 'list', 'acme']],
    [['test-drafts', 'acme', 'loans']],
  ])('%j refuses, naming DATABASE_URL and RULES_DATA_DIR: exit 1', async (args) => {
    for (const env of [{}, { DATABASE_URL: '', RULES_DATA_DIR: ' ' }] as Array<Record<string, string>>) {
      const result = await cliRunner(() => env).run(...args);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('no database given: set DATABASE_URL');
      expect(result.stderr).toContain('RULES_DATA_DIR');
    }
  });
});
