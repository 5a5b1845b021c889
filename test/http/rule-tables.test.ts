/**
 * Decision tables through the API (docs/api.md, "Decision tables"), on the
 * real server and database: a rule with a `table` is created, read, edited
 * with PUT and PATCH, published, validated, rolled back, exported and
 * imported as a rules file, run by stored tests and replayed by the impact
 * report; bad tables are 400 problems naming the row and column.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SampleRecord } from '../../src/storage/types.ts';
import { startTestApp, type TestApp, type TestRequestOptions } from '../support/app.ts';
import { expectProblem, ok, type Json } from '../support/expect-response.ts';

let t: TestApp;
let validatorKey: string;

beforeAll(async () => {
  t = await startTestApp({ env: { MAX_TABLE_ROWS: '50' } });
  validatorKey = (await ok(api('POST', '/api-keys', { body: { name: 'validator', role: 'validator' } }), 201)).key;
});
afterAll(async () => {
  await t?.close();
});

function api(method: string, path: string, options: TestRequestOptions = {}) {
  return t.request(method, `/api/v1${path}`, options);
}

/** Limits by product and country: the largest amount of each. */
const limitsTable = {
  hitPolicy: 'first',
  inputs: [{ name: 'product', path: 'product' }, { name: 'country', path: 'country' }],
  outputs: ['maxAmount'],
  rows: [
    { when: ['"auto"', 'in ["US", "CA"]'], then: [50000] },
    { when: ['"auto"', '-'], then: [20000] },
    { when: ['-', '-'], then: [1000] },
  ],
};

function tableRule(context: string, overrides: Json = {}): Json {
  return {
    context,
    code: 'AMOUNT_WITHIN_LIMIT',
    name: 'Amount within the product\'s limit',
    fieldPath: 'amount',
    table: limitsTable,
    expression: '$value <= $row.maxAmount',
    message: '{{ $value }} is over the limit of {{ $row.maxAmount }}',
    ...overrides,
  };
}

async function failures(context: string, payload: Json): Promise<Json[]> {
  return (await ok(api('POST', '/validation/validate', { body: { context, payload }, key: validatorKey }))).failures;
}

describe('a rule with a table', () => {
  const context = 'tables-lifecycle';
  let rule: Json;

  beforeAll(async () => {
    rule = await ok(api('POST', '/rules', { body: tableRule(context) }), 201);
  });

  it('is stored and answered with its table as sent', async () => {
    expect(rule.table).toEqual(limitsTable);
    expect((await ok(api('GET', `/rules/${rule.id}`))).table).toEqual(limitsTable);
    const list = await ok(api('GET', `/rules?context=${context}`));
    expect(list.items[0].table).toEqual(limitsTable);
  });

  it('validates with the matched row once published', async () => {
    await ok(api('POST', `/rules/${rule.id}/publish`));
    expect(await failures(context, { product: 'auto', country: 'US', amount: 40000 })).toEqual([]);
    const [failure] = await failures(context, { product: 'auto', country: 'FR', amount: 40000 });
    expect(failure).toMatchObject({ ruleCode: 'AMOUNT_WITHIN_LIMIT', message: '40000 is over the limit of 20000', actualValue: 40000 });
    expect(await failures(context, { product: 'boat', country: 'US', amount: 1000 })).toEqual([]);
  });

  it('PUT replaces the table and the draft is what the diff and a publish show', async () => {
    const current = await ok(api('GET', `/rules/${rule.id}`));
    const rows = [...limitsTable.rows];
    rows[1] = { when: ['"auto"', '-'], then: [30000] };
    const updated = await ok(api('PUT', `/rules/${rule.id}`, { body: { ...current, table: { ...limitsTable, rows } } }));
    expect(updated.table.rows[1].then).toEqual([30000]);
    expect(updated.status).toBe('draft');
    // Still live at 20000 until published.
    expect(await failures(context, { product: 'auto', country: 'FR', amount: 25000 })).toHaveLength(1);
    const diff = await ok(api('GET', `/contexts/${context}/diff`));
    expect(diff.changed.map((c: Json) => c.code)).toEqual(['AMOUNT_WITHIN_LIMIT']);
    expect(diff.changed[0].tableRows).toEqual([{ change: 'changed', path: 'table.rows[1]', fromPath: 'table.rows[1]' }]);
    const published = await ok(api('POST', `/contexts/${context}/publish`));
    expect(published.changes).toEqual({
      added: [], changed: ['AMOUNT_WITHIN_LIMIT'], removed: [],
      tableRows: [{ code: 'AMOUNT_WITHIN_LIMIT', change: 'changed', path: 'table.rows[1]', fromPath: 'table.rows[1]' }],
    });
    expect(await failures(context, { product: 'auto', country: 'FR', amount: 25000 })).toEqual([]);
  });

  it('PATCH can set the noMatch of the table and remove it again', async () => {
    const current = await ok(api('GET', `/rules/${rule.id}`));
    const patched = await ok(api('PATCH', `/rules/${rule.id}`, {
      body: { table: { noMatch: 'pass' }, version: current.version }, contentType: 'application/merge-patch+json',
    }));
    expect(patched.table).toEqual({ ...current.table, noMatch: 'pass' });
    const back = await ok(api('PATCH', `/rules/${rule.id}`, {
      body: { table: { noMatch: null }, version: patched.version }, contentType: 'application/merge-patch+json',
    }));
    expect(back.table).toEqual(current.table);
  });

  it('a rollback brings the first table back live', async () => {
    await ok(api('POST', `/contexts/${context}/rollback`, { body: { rulesetVersion: 1 } }));
    expect(await failures(context, { product: 'auto', country: 'FR', amount: 25000 })).toHaveLength(1);
    const versions = await ok(api('GET', `/contexts/${context}/versions/1`));
    expect(versions.rules[0].table).toEqual(limitsTable);
  });

  it('a table without an expression passes on a match and fails without one (allowed combinations)', async () => {
    const allowed = {
      hitPolicy: 'first', inputs: [{ name: 'product', path: 'product' }, { name: 'country', path: 'country' }],
      rows: [{ when: ['"auto"', 'in ["US", "CA"]'] }, { when: ['"boat"', '"US"'] }],
    };
    const combo = await ok(api('POST', '/rules', { body: { context: 'tables-allowed', code: 'ALLOWED', name: 'Allowed combination', table: allowed } }), 201);
    await ok(api('POST', `/rules/${combo.id}/publish`));
    expect(await failures('tables-allowed', { product: 'boat', country: 'US' })).toEqual([]);
    expect((await failures('tables-allowed', { product: 'boat', country: 'CA' })).map((f) => f.ruleCode)).toEqual(['ALLOWED']);
  });
});

describe('bad tables are 400 naming the row and column', () => {
  const post = (table: unknown) => expectProblem(api('POST', '/rules', { body: tableRule('tables-bad', { table }) }), 400, 'INVALID_BODY');
  const paths = (problem: Json) => problem.errors.map((e: Json) => e.path);

  it('a cell that does not parse', async () => {
    const rows = [...limitsTable.rows, { when: ['"boat"', '>= ('], then: [5] }];
    const problem = await post({ ...limitsTable, rows });
    expect(paths(problem)).toEqual(['table.rows[3].when[1]']);
    // The column inside the cell's text, then the place in the table.
    expect(problem.errors[0].message).toMatch(/^line 1, column 4: table\.rows\[3\]\.when\[1\]: /);
  });

  it('a row with the wrong number of cells', async () => {
    const rows = [limitsTable.rows[0], { when: ['"auto"'], then: [5] }];
    expect(paths(await post({ ...limitsTable, rows }))).toEqual(['table.rows[1].when']);
  });

  it('an unknown hit policy', async () => {
    const problem = await post({ ...limitsTable, hitPolicy: 'last' });
    expect(paths(problem)).toEqual(['table.hitPolicy']);
    expect(problem.errors[0].message).toContain('first, unique, any, collect');
  });

  it('a table over MAX_TABLE_ROWS', async () => {
    const rows = Array.from({ length: 51 }, (_, i) => ({ when: [JSON.stringify(`p${i}`), '-'], then: [i] }));
    const problem = await post({ ...limitsTable, rows });
    expect(paths(problem)).toEqual(['table.rows']);
    expect(problem.errors[0].message).toContain('at most 50 rows');
  });

  it('a cell over the cell length limit', async () => {
    const rows = [{ when: [JSON.stringify('x'.repeat(1200)), '-'], then: [1] }];
    const problem = await post({ ...limitsTable, rows });
    expect(paths(problem)).toEqual(['table.rows[0].when[0]']);
    expect(problem.errors[0].message).toContain('at most 1000 characters');
  });

  it('a table that is not an object is refused by the body schema', async () => {
    expect(paths(await post(['rows']))).toEqual(['table']);
  });

  it('POST /rules/check answers the same places', async () => {
    const rows = [...limitsTable.rows, { when: ['"boat"', '>= ('], then: [5] }];
    const answer = await ok(api('POST', '/rules/check', { body: { rule: tableRule('tables-bad', { table: { ...limitsTable, rows } }) } }));
    expect(answer.errors).toEqual([expect.objectContaining({ path: 'table.rows[3].when[1]', line: 1, column: 4 })]);
  });
});

describe('rules files, stored tests and the impact report', () => {
  const context = 'tables-files';

  beforeAll(async () => {
    const rule = await ok(api('POST', '/rules', { body: tableRule(context) }), 201);
    await ok(api('POST', `/rules/${rule.id}/publish`));
  });

  it('export carries the table, and importing the file unchanged changes nothing', async () => {
    const file = await ok(api('GET', `/contexts/${context}/export`));
    expect(file.rules[0].table).toEqual(limitsTable);
    const result = await ok(api('POST', `/contexts/${context}/import`, { body: file }));
    expect(result).toMatchObject({ create: [], update: [], unchanged: ['AMOUNT_WITHIN_LIMIT'] });
  });

  it('an imported table that does not compile is refused naming the rule, row and column', async () => {
    const file = await ok(api('GET', `/contexts/${context}/export`));
    file.rules[0].table = { ...limitsTable, rows: [{ when: ['"auto"', 'in ["US"'], then: [1] }] };
    const problem = await expectProblem(api('POST', `/contexts/${context}/import`, { body: file }), 400, 'INVALID_BODY');
    expect(problem.errors.map((e: Json) => e.path)).toEqual(['rules[0].table.rows[0].when[1]']);
  });

  it('an import of a changed table updates the rule', async () => {
    const file = await ok(api('GET', `/contexts/${context}/export`));
    file.rules[0].table = { ...limitsTable, rows: [...limitsTable.rows.slice(0, 2), { when: ['-', '-'], then: [2000] }] };
    const result = await ok(api('POST', `/contexts/${context}/import?dryRun=true`, { body: file }));
    expect(result.update).toEqual(['AMOUNT_WITHIN_LIMIT']);
  });

  it('stored tests run against the table', async () => {
    await ok(api('PUT', `/contexts/${context}/tests`, {
      body: {
        tests: [
          { name: 'auto in the US within 50000', payload: { product: 'auto', country: 'US', amount: 50000 }, expect: { isValid: true } },
          { name: 'auto in France over 20000', payload: { product: 'auto', country: 'FR', amount: 20001 }, expect: { isValid: false, failures: ['AMOUNT_WITHIN_LIMIT'] } },
        ],
      },
    }));
    const run = await ok(api('POST', `/contexts/${context}/tests/run`, { body: { target: 'live' } }));
    expect(run).toMatchObject({ passed: 2, failed: 0 });
  });

  it('the impact report replays samples against a changed table', async () => {
    const samples: SampleRecord[] = [
      { payload: { product: 'boat', country: 'US', amount: 1500 }, live: ['AMOUNT_WITHIN_LIMIT'] },
      { payload: { product: 'auto', country: 'FR', amount: 100 }, live: [] },
    ].map(({ payload, live }, i) => ({
      tenantId: t.tenantId, context, recordedAt: new Date(Date.parse('2026-11-20T08:00:00Z') + i * 60_000),
      rulesetVersion: 1, isValid: live.length === 0, failures: live, payload,
    }));
    await t.storage.samples.insertMany(samples);
    const rule = (await ok(api('GET', `/rules?context=${context}`))).items[0];
    const rows = [...limitsTable.rows.slice(0, 2), { when: ['-', '-'], then: [2000] }];
    await ok(api('PUT', `/rules/${rule.id}`, { body: { ...rule, table: { ...limitsTable, rows } } }));
    const report = await ok(api('POST', `/contexts/${context}/impact`));
    expect(report).toMatchObject({ samples: 2, unchanged: 1, becameValid: 1, becameInvalid: 0 });
    expect(report.byRule).toEqual([{ ruleCode: 'AMOUNT_WITHIN_LIMIT', newFailures: 0, resolvedFailures: 1 }]);
  });
});

describe('the diff names each table row added, removed, changed or moved', () => {
  const context = 'tables-diff';
  const row = (product: string, max: number) => ({ when: [JSON.stringify(product), '-'], then: [max] });
  const base = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((p, i) => row(p, i * 100));
  let id: string;

  beforeAll(async () => {
    id = (await ok(api('POST', '/rules', { body: tableRule(context, { table: { ...limitsTable, rows: base } }) }), 201)).id;
    await ok(api('POST', `/rules/${id}/publish`));
  });

  async function diffAfter(rows: Json[]): Promise<Json> {
    const current = await ok(api('GET', `/rules/${id}`));
    await ok(api('PUT', `/rules/${id}`, { body: { ...current, table: { ...limitsTable, rows } } }));
    const diff = await ok(api('GET', `/contexts/${context}/diff`));
    return diff.changed[0];
  }

  it('a row inserted, another changed further down and one removed', async () => {
    // `new` inserted after b, e's outputs changed, g removed.
    const changed = await diffAfter([base[0], base[1], row('new', 1), base[2], base[3], row('e', 999), base[5], base[7]]);
    expect(changed.tableRows).toEqual([
      { change: 'added', path: 'table.rows[2]' },
      { change: 'changed', path: 'table.rows[5]', fromPath: 'table.rows[4]' },
      { change: 'removed', path: 'table.rows[6]' },
    ]);
    expect(changed.fields.table.to.rows[2]).toEqual(row('new', 1));
  });

  it('a row moved up (it now answers before the rows it passed) and nothing else', async () => {
    const changed = await diffAfter([base[0], base[6], base[1], base[2], base[3], base[4], base[5], base[7]]);
    expect(changed.tableRows).toEqual([{ change: 'moved', path: 'table.rows[1]', fromPath: 'table.rows[6]' }]);
  });

  it('a change of the table that leaves its rows alone lists no rows', async () => {
    const current = await ok(api('GET', `/rules/${id}`));
    await ok(api('PUT', `/rules/${id}`, { body: { ...current, table: { ...limitsTable, rows: base, noMatch: 'pass' } } }));
    const changed = (await ok(api('GET', `/contexts/${context}/diff`))).changed[0];
    expect(Object.keys(changed.fields)).toEqual(['table']);
    expect(changed.tableRows).toBeUndefined();
  });
});

describe('a table as CSV', () => {
  const context = 'tables-csv';
  const csvTable = {
    ...limitsTable,
    outputs: ['maxAmount', 'note'],
    rows: [
      { when: ['"auto"', 'in ["US", "CA"]'], then: [50000, 'north, america'] },
      { when: ['"auto"', '-'], then: [20000, '12'] },
      { when: ['-', '$cell == "FR" || $cell == "DE"'], then: [1000, { tier: 'eu' }] },
      { when: ['-', '-'], then: [null, 'say "no"'] },
    ],
  };
  let id: string;
  const csv = (text: string | Uint8Array, contentType: string | null = 'text/csv', query = '') =>
    api('PUT', `/rules/${id}/table.csv${query}`, { rawBody: text, contentType });

  beforeAll(async () => {
    id = (await ok(api('POST', '/rules', { body: tableRule(context, { table: csvTable }) }), 201)).id;
  });

  it('exports the header and rows, quoted as RFC 4180 says', async () => {
    const res = await api('GET', `/rules/${id}/table.csv`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.text).toBe([
      'product,country,maxAmount,note',
      '"""auto""","in [""US"", ""CA""]",50000,"north, america"',
      '"""auto""",-,20000,"""12"""',
      '-,"$cell == ""FR"" || $cell == ""DE""",1000,"{""tier"":""eu""}"',
      '-,-,null,"say ""no"""',
      '',
    ].join('\r\n'));
  });

  it('round-trips: the export put back changes nothing, and the table reads back identical', async () => {
    const before = await ok(api('GET', `/rules/${id}`));
    const exported = (await api('GET', `/rules/${id}/table.csv`)).text;
    const after = await ok(csv(exported));
    expect(after.version).toBe(before.version);
    expect(after.table).toEqual(csvTable);
  });

  it('says the rule version its rows are from (X-Rule-Version), which PUT takes as ?version=', async () => {
    const exported = await api('GET', `/rules/${id}/table.csv`);
    const version = Number(exported.headers.get('x-rule-version'));
    expect(version).toBe((await ok(api('GET', `/rules/${id}`))).version);
    const edited = exported.text.replace('50000', '45000');
    const saved = await ok(csv(edited, 'text/csv', `?version=${version}`));
    expect(saved.version).toBe(version + 1);
    expect((await api('GET', `/rules/${id}/table.csv`)).headers.get('x-rule-version')).toBe(String(version + 1));
    // The export's version is now stale: an edit made from it is refused.
    await expectProblem(csv(edited, 'text/csv', `?version=${version}`), 409, 'CONFLICT');
    await ok(csv(exported.text, 'text/csv', `?version=${version + 1}`));
  });

  it('a spreadsheet\'s edit (a BOM, LF line ends, a new row) becomes a new version with the same inputs and hit policy', async () => {
    const before = await ok(api('GET', `/rules/${id}`));
    const body = '\uFEFFproduct,country,maxAmount,note\n"""boat""",-,7000,boats\n-,-,0,none\n';
    const after = await ok(csv(new TextEncoder().encode(body), 'text/csv; charset=utf-8', `?version=${before.version}`));
    expect(after.version).toBe(before.version + 1);
    expect(after.table).toEqual({
      ...csvTable, rows: [{ when: ['"boat"', '-'], then: [7000, 'boats'] }, { when: ['-', '-'], then: [0, 'none'] }],
    });
    const audit = await ok(api('GET', '/audit?action=rule.update'));
    expect(audit.items[0]).toMatchObject({ action: 'rule.update' });
  });

  it('a wrong header is 400 naming line 1 and the header expected', async () => {
    const problem = await expectProblem(csv('product,maxAmount,note\n-,1,x\n'), 400, 'INVALID_BODY');
    expect(problem.errors).toEqual([{ path: 'line 1', message: expect.stringContaining('the table\'s is product,country,maxAmount,note') }]);
  });

  it('a line with the wrong number of fields is 400 naming the line', async () => {
    const problem = await expectProblem(csv('product,country,maxAmount,note\n-,-,1,x\n-,1,x\n'), 400, 'INVALID_BODY');
    expect(problem.errors).toEqual([{ path: 'line 3', message: 'has 3 fields; the header has 4 (2 cells, then 2 outputs)' }]);
  });

  it('a quote left open names the line and field', async () => {
    const problem = await expectProblem(csv('product,country,maxAmount,note\n-,"-,1,x\n'), 400, 'INVALID_BODY');
    expect(problem.errors[0]).toEqual({ path: 'line 2', message: expect.stringMatching(/^field 2: a quoted field is not closed/) });
  });

  it('a cell that does not parse is named by its row and column in the table', async () => {
    const problem = await expectProblem(csv('product,country,maxAmount,note\n-,-,1,x\n-,>= (,1,x\n'), 400, 'INVALID_BODY');
    expect(problem.errors.map((e: Json) => e.path)).toEqual(['table.rows[1].when[1]']);
  });

  it('more rows than MAX_TABLE_ROWS is 400 naming the first line over', async () => {
    const lines = Array.from({ length: 51 }, (_, i) => `"""p${i}""",-,${i},x`);
    const problem = await expectProblem(csv(['product,country,maxAmount,note', ...lines].join('\n')), 400, 'INVALID_BODY');
    expect(problem.errors).toEqual([{ path: 'line 52', message: expect.stringContaining('at most 50 rows') }]);
  });

  it('bytes that are not UTF-8 are 400, another media type 415', async () => {
    const latin1 = Uint8Array.from([...new TextEncoder().encode('product,country,maxAmount,note\n-,-,1,'), 0xe9, 0x0a]);
    await expectProblem(csv(latin1), 400, 'INVALID_BODY');
    await expectProblem(csv('product,country,maxAmount,note\n', 'application/json'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    await expectProblem(csv('product,country,maxAmount,note\n', 'text/csv; charset=latin1'), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('a stale version is 409; a rule without a table is 404', async () => {
    const exported = (await api('GET', `/rules/${id}/table.csv`)).text;
    await expectProblem(csv(exported, 'text/csv', '?version=1'), 409, 'CONFLICT');
    const plain = await ok(api('POST', '/rules', { body: { context, code: 'PLAIN', name: 'Plain', expression: 'true' } }), 201);
    await expectProblem(api('GET', `/rules/${plain.id}/table.csv`), 404, 'NOT_FOUND');
  });
});
