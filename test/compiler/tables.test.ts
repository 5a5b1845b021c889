/**
 * Decision tables (issue 34), the compiler: cells read as the contract
 * writes them, every refusal naming its row and column, and what a table
 * rule reports for each hit policy and noMatch. The random comparison with
 * the reference scan is table-differential.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { compileRuleset, explainRuleset, type CompileError, type RuleDefinition, type TableDefinition } from '../../compiler/index.ts';
import { DEFAULT_LIMITS } from '../../compiler/limits.ts';
import { planRule } from '../../compiler/rule-plan.ts';
import { parseCell, type CellTest } from '../../compiler/table/cell-test.ts';

const LOANS: TableDefinition = {
  hitPolicy: 'first',
  inputs: [
    { name: 'product', path: 'loan.product' },
    { name: 'country', path: 'applicant.country' },
    { name: 'score', expression: 'applicant.score' },
  ],
  outputs: ['maxAmount', 'minTermMonths'],
  rows: [
    { when: ['"auto"', 'in ["US", "CA"]', '>= 700'], then: [50000, 12] },
    { when: ['"auto"', '-', '[600..700)'], then: [20000, 24] },
    { when: ['-', '-', '< 600'], then: [0, 0] },
  ],
  noMatch: 'fail',
};

const LIMIT_RULE: RuleDefinition = {
  code: 'AMOUNT_WITHIN_LIMIT', name: 'Amount within the product\'s limit', fieldPath: 'loan.amount',
  table: LOANS,
  expression: '$value <= $row.maxAmount && loan.termMonths >= $row.minTermMonths',
  message: '{{ $value }} is over the limit of {{ $row.maxAmount }} for this product',
};

function loan(amount: number, product: string, country: string | undefined, score: number, termMonths = 36): unknown {
  return { loan: { amount, product, termMonths }, applicant: { country, score } };
}

function errorsOf(rule: RuleDefinition): Pick<CompileError, 'field' | 'code' | 'path' | 'message' | 'line' | 'column'>[] {
  return compileRuleset([rule]).errors.map(({ field, code, path, message, line, column }) =>
    ({ field, code, path, message, ...(line === undefined ? {} : { line, column }) }));
}

function withTable(table: Partial<TableDefinition>, rule: Partial<RuleDefinition> = {}): RuleDefinition {
  return { code: 'T', name: 'T', table: { ...LOANS, ...table }, ...rule };
}

describe('cells', () => {
  const cases: [text: string, test: CellTest | { expression: string }][] = [
    ['-', { kind: 'any' }],
    ['  -  ', { kind: 'any' }],
    ['"auto"', { kind: 'equal', value: 'auto' }],
    ['"say \\"hi\\""', { kind: 'equal', value: 'say "hi"' }],
    ['700', { kind: 'equal', value: 700 }],
    ['-2.5e1', { kind: 'equal', value: -25 }],
    ['true', { kind: 'equal', value: true }],
    ['false', { kind: 'equal', value: false }],
    ['null', { kind: 'equal', value: null }],
    ['date("2026-01-01")', { kind: 'equal', value: Date.UTC(2026, 0, 1) }],
    ['< 5', { kind: 'compare', op: '<', value: 5 }],
    ['<=5', { kind: 'compare', op: '<=', value: 5 }],
    ['> "m"', { kind: 'compare', op: '>', value: 'm' }],
    ['>= 700', { kind: 'compare', op: '>=', value: 700 }],
    ['>= date("2026-01-01T12:00Z")', { kind: 'compare', op: '>=', value: Date.UTC(2026, 0, 1, 12) }],
    ['!= "X"', { kind: 'notEqual', value: 'X' }],
    ['!= null', { kind: 'notEqual', value: null }],
    ['[600..700)', { kind: 'range', low: 600, high: 700, lowIncluded: true, highIncluded: false }],
    ['(1..5]', { kind: 'range', low: 1, high: 5, lowIncluded: false, highIncluded: true }],
    ['[ 1 .. 1 ]', { kind: 'range', low: 1, high: 1, lowIncluded: true, highIncluded: true }],
    ['["a".."m")', { kind: 'range', low: 'a', high: 'm', lowIncluded: true, highIncluded: false }],
    ['in ["US", "CA"]', { kind: 'oneOf', values: ['US', 'CA'] }],
    ['in [1, 1, null]', { kind: 'oneOf', values: [1, null] }],
    ['not("X")', { kind: 'not', test: { kind: 'equal', value: 'X' } }],
    ['not(in ["US", "CA"])', { kind: 'not', test: { kind: 'oneOf', values: ['US', 'CA'] } }],
    ['not([1..2])', { kind: 'not', test: { kind: 'range', low: 1, high: 2, lowIncluded: true, highIncluded: true } }],
    ['$cell % 2 == 0', { expression: '$cell % 2 == 0' }],
    ['"a" == $cell', { expression: '"a" == $cell' }],
    ['startsWith($cell, "A")', { expression: 'startsWith($cell, "A")' }],
  ];
  it.each(cases)('%s', (text, expected) => {
    const parsed = parseCell(text);
    expect(parsed).toEqual('expression' in expected ? { ok: true, ...expected } : { ok: true, test: expected });
  });

  const refused: [text: string, message: string, column: number][] = [
    ['', 'a cell cannot be empty: write - for any value', 1],
    ['< true', '`<` compares numbers, strings or dates, not boolean', 7],
    ['>= null', '`>=` compares numbers, strings or dates, not null', 8],
    ['[5..1]', 'this range is empty: its low bound is above its high bound', 7],
    ['[1..1)', 'this range is empty: its low bound is above its high bound', 7],
    ['[1.."b"]', 'the bounds of a range are two numbers, two dates or two strings', 9],
    ['[1..2', 'a range ends with `]` (bound included) or `)` (excluded)', 6],
    ['in []', 'an empty list matches nothing', 5],
    ['in ["US" "CA"]', 'expected `,` or `]` in the list', 10],
    ['not(-)', 'expected a literal: a string in double quotes, a number, true, false, null or date("…")', 5],
    ['not("X") x', 'unexpected text after the test', 10],
    ['date("2026-02-30")', 'not a valid ISO-8601 date or date-time', 6],
    ['< 5 6', 'unexpected text after the test', 5],
  ];
  it.each(refused)('refuses %j', (text, message, column) => {
    expect(parseCell(text)).toEqual({ ok: false, message, column });
  });
});

describe('compile errors name the row and column', () => {
  const cases: [what: string, rule: RuleDefinition, errors: ReturnType<typeof errorsOf>][] = [
    ['a cell that does not parse', withTable({ rows: [{ when: ['"auto"', '-', '>= 700'], then: [1, 2] }, { when: ['"auto"', 'in ["US"', '-'], then: [1, 2] }] }), [
      { field: 'table', code: 'SYNTAX_ERROR', path: 'table.rows[1].when[1]', message: 'table.rows[1].when[1]: expected `,` or `]` in the list', line: 1, column: 9 },
    ]],
    ['an expression cell that does not compile', withTable({ rows: [{ when: ['-', '$cell.foo(', '-'], then: [1, 2] }] }), [
      { field: 'table', code: 'SYNTAX_ERROR', path: 'table.rows[0].when[1]', message: 'table.rows[0].when[1]: Unexpected token', line: 1, column: 11 },
    ]],
    ['a bare word (a forgotten quote)', withTable({ rows: [{ when: ['auto', '-', '-'], then: [1, 2] }] }), [
      {
        field: 'table', code: 'SYNTAX_ERROR', path: 'table.rows[0].when[0]',
        message: 'table.rows[0].when[0]: this cell is neither a test (-, a literal, < 5, [1..5), in [...], not(...)) nor an expression using $cell; a text value is written in double quotes',
      },
    ]],
    ['a cell reading $value', withTable({ rows: [{ when: ['$cell < $value', '-', '-'], then: [1, 2] }] }), [
      {
        field: 'table', code: 'NOT_ALLOWED', path: 'table.rows[0].when[0]',
        message: 'table.rows[0].when[0]: `$value` is not available in a cell: a cell sees $cell (the column\'s value) and the payload',
      },
    ]],
    ['a row with the wrong number of cells', withTable({ rows: [{ when: ['"auto"', '-'], then: [1, 2] }] }), [
      { field: 'table', code: 'INVALID_TABLE', path: 'table.rows[0].when', message: 'table.rows[0].when: the row has 2 cells; the table has 3 inputs' },
    ]],
    ['an unknown hit policy', withTable({ hitPolicy: 'priority' as never }), [
      { field: 'table', code: 'INVALID_TABLE', path: 'table.hitPolicy', message: 'table.hitPolicy: unknown hit policy "priority": it is one of first, unique, any, collect' },
    ]],
    ['an output count mismatch', withTable({ rows: [{ when: ['-', '-', '-'], then: [1] }] }), [
      { field: 'table', code: 'INVALID_TABLE', path: 'table.rows[0].then', message: 'table.rows[0].then: 1 output values; the table has 2 outputs (maxAmount, minTermMonths)' },
    ]],
    ['a default row with the wrong output count', withTable({ noMatch: { then: [1, 2, 3] } }), [
      { field: 'table', code: 'INVALID_TABLE', path: 'table.noMatch.then', message: 'table.noMatch.then: 3 output values; the table has 2 outputs (maxAmount, minTermMonths)' },
    ]],
    ['an unknown noMatch', withTable({ noMatch: 'skip' as never }), [
      { field: 'table', code: 'INVALID_TABLE', path: 'table.noMatch', message: 'table.noMatch: noMatch is "fail", "pass" or { "then": [ ...one value per output ] }' },
    ]],
    ['an input with both path and expression', withTable({ inputs: [{ name: 'a', path: 'a', expression: 'a' }, ...LOANS.inputs.slice(1)] }), [
      { field: 'table', code: 'INVALID_TABLE', path: 'table.inputs[0]', message: 'table.inputs[0]: an input has exactly one of path and expression' },
    ]],
    ['an input path with []', withTable({ inputs: [{ name: 'a', path: 'items[].qty' }, ...LOANS.inputs.slice(1)] }), [
      { field: 'table', code: 'INVALID_PATH', path: 'table.inputs[0].path', message: 'table.inputs[0].path: an input path cannot contain `[]`: use an expression such as items.map(x => x.qty)' },
    ]],
    ['an input expression that is not allowed', withTable({ inputs: [{ name: 'a', expression: 'new Date()' }, ...LOANS.inputs.slice(1)] }), [
      { field: 'table', code: 'NOT_ALLOWED', path: 'table.inputs[0].expression', message: 'table.inputs[0].expression: `new` is not allowed', line: 1, column: 1 },
    ]],
    ['names used twice', withTable({ outputs: ['product', 'minTermMonths'] }), [
      { field: 'table', code: 'INVALID_TABLE', path: 'table.inputs[0].name', message: 'table.inputs[0].name: the name "product" is used twice among the inputs and outputs' },
    ]],
    ['an output that is not a plain name', withTable({ outputs: ['max amount', 'minTermMonths'] }), [
      {
        field: 'table', code: 'INVALID_TABLE', path: 'table.outputs[0]',
        message: 'table.outputs[0]: an output name is 1-64 characters of A-Z, a-z, 0-9 and _, not starting with a digit (it is read as $row.name)',
      },
    ]],
    ['a cell that is not text', withTable({ rows: [{ when: ['-', 5 as never, '-'], then: [1, 2] }] }), [
      { field: 'table', code: 'INVALID_TABLE', path: 'table.rows[0].when[1]', message: 'table.rows[0].when[1]: a cell is the text of a test, such as "-", "\\"US\\"", ">= 700" or "[1..5)"' },
    ]],
    ['a cell over the length limit', withTable({ rows: [{ when: [`"${'x'.repeat(DEFAULT_LIMITS.maxTableCellLength)}"`, '-', '-'], then: [1, 2] }] }), [
      { field: 'table', code: 'TOO_LONG', path: 'table.rows[0].when[0]', message: `table.rows[0].when[0]: a cell is at most ${DEFAULT_LIMITS.maxTableCellLength} characters` },
    ]],
    ['more inputs than the limit', withTable({ inputs: Array.from({ length: 33 }, (_, i) => ({ name: `i${i}`, path: `i${i}` })), rows: [] }), [
      { field: 'table', code: 'LIMIT_EXCEEDED', path: 'table.inputs', message: 'table.inputs: a table has at most 32 inputs, this one has 33' },
    ]],
    ['$row.name of an output the table does not have', withTable({}, { expression: '$row.maxAmout > 1', message: '{{ $row.other }}' }), [
      { field: 'expression', code: 'INVALID_TABLE', path: undefined, message: '`$row.maxAmout` is not an output of the table: its outputs are maxAmount, minTermMonths' },
      { field: 'message', code: 'INVALID_TABLE', path: undefined, message: '`$row.other` is not an output of the table: its outputs are maxAmount, minTermMonths' },
    ]],
    ['$row outside a table rule', { code: 'T', name: 'T', expression: '$row.max > 1' }, [
      { field: 'expression', code: 'NOT_ALLOWED', path: undefined, message: '`$row` is only allowed in the expression and message of a rule with a table', line: 1, column: 1 },
    ]],
    ['$cell in the rule\'s expression', withTable({}, { expression: '$cell > 1' }), [
      { field: 'expression', code: 'NOT_ALLOWED', path: undefined, message: '`$cell` is only allowed in a cell of a decision table', line: 1, column: 1 },
    ]],
    ['$rowIndex in when', withTable({}, { when: '$rowIndex > 1' }), [
      { field: 'when', code: 'NOT_ALLOWED', path: undefined, message: '`$rowIndex` is only allowed in the expression and message of a rule with a table', line: 1, column: 1 },
    ]],
  ];
  it.each(cases)('%s', (_what, rule, expected) => {
    expect(errorsOf(rule)).toEqual(expected.map((e) => (e.path === undefined ? { ...e, path: undefined } : e)));
  });

  it('refuses a table over the row limit, which the limits can change', () => {
    const rows = Array.from({ length: 11 }, () => ({ when: ['-', '-', '-'], then: [1, 2] }));
    const rule = withTable({ rows });
    expect(compileRuleset([rule], { limits: { maxTableRows: 10 } }).errors.map((e) => e.message))
      .toEqual(['table.rows: a table has at most 10 rows, this one has 11']);
    expect(compileRuleset([rule]).errors).toEqual([]);
    expect(DEFAULT_LIMITS.maxTableRows).toBe(10_000);
  });

  it('stops after 20 errors with a last one that says so', () => {
    const rows = Array.from({ length: 50 }, () => ({ when: ['<', '-', '-'], then: [1, 2] }));
    const errors = compileRuleset([withTable({ rows })]).errors;
    expect(errors).toHaveLength(21);
    expect(errors[19].path).toBe('table.rows[19].when[0]');
    expect(errors[20].message).toBe('table: stopped after 20 errors; correct these and save again');
  });

  it('counts the table toward the ruleset\'s text', () => {
    const plain = planRule({ code: 'T', name: 'T', table: { ...LOANS, rows: [] } }, DEFAULT_LIMITS);
    const full = planRule({ code: 'T', name: 'T', table: LOANS }, DEFAULT_LIMITS);
    if (!plain.ok || !full.ok) throw new Error('the tables should plan');
    expect(full.plan.textLength - plain.plan.textLength).toBe(JSON.stringify(LOANS.rows).length - 2);
  });
});

describe('a rule with a table', () => {
  const { validate } = compileRuleset([LIMIT_RULE]);

  it('passes when the first matching row\'s outputs allow the value', () => {
    expect(validate(loan(40000, 'auto', 'US', 710, 12), 0)).toEqual({ isValid: true, totalRulesEvaluated: 1, failures: [] });
  });

  it('fails with $row in the message when they do not', () => {
    expect(validate(loan(40000, 'auto', 'FR', 650), 0).failures).toEqual([{
      ruleCode: 'AMOUNT_WITHIN_LIMIT', ruleName: 'Amount within the product\'s limit', severity: 'Error',
      message: '40000 is over the limit of 20000 for this product', errorCode: 'AMOUNT_WITHIN_LIMIT',
      fieldPath: 'loan.amount', actualValue: 40000, expectedValue: null,
    }]);
  });

  it('fails when no row matches (noMatch "fail"), with a message that does not need a row', () => {
    expect(validate(loan(1, 'bike', 'US', 650), 0).failures.map((f) => f.message))
      .toEqual(['Amount within the product\'s limit: no row of its table matches']);
  });

  it('lets a missing input match only - and null', () => {
    const table: TableDefinition = {
      hitPolicy: 'first', inputs: [{ name: 'country', path: 'country' }], outputs: ['row'],
      rows: [{ when: ['!= "US"'], then: ['not US'] }, { when: ['not("US")'], then: ['not(US)'] }, { when: ['null'], then: ['null'] }, { when: ['-'], then: ['any'] }],
    };
    const { validate: check } = compileRuleset([{ code: 'R', name: 'R', table, expression: 'false', message: '{{ $row.row }}' }]);
    expect(check({}, 0).failures[0].message).toBe('null');
    expect(check({ country: null }, 0).failures[0].message).toBe('null');
    expect(check({ country: 'FR' }, 0).failures[0].message).toBe('not US');
    expect(check({ country: 'US' }, 0).failures[0].message).toBe('any');
  });

  it('takes $value <= $row.maxAmount as its expected value, per matched row', () => {
    const { validate: check } = compileRuleset([{ ...LIMIT_RULE, expression: '$value <= $row.maxAmount', message: undefined }]);
    expect(check(loan(60000, 'auto', 'US', 710), 0).failures[0].expectedValue).toBe(50000);
    expect(check(loan(30000, 'auto', 'FR', 610), 0).failures[0].expectedValue).toBe(20000);
  });

  it('without an expression, passes on any match (a table of allowed combinations)', () => {
    const { validate: check } = compileRuleset([{ code: 'R', name: 'Allowed', table: { ...LOANS, outputs: [], rows: LOANS.rows.map((r) => ({ when: r.when })) } }]);
    expect(check(loan(1, 'auto', 'US', 710), 0).isValid).toBe(true);
    expect(check(loan(1, 'bike', 'US', 710), 0).failures.map((f) => f.message)).toEqual(['Allowed: no row of its table matches']);
  });

  it('judges the default row of noMatch { then }, and passes with noMatch "pass"', () => {
    const otherwise = compileRuleset([{ ...LIMIT_RULE, table: { ...LOANS, noMatch: { then: [100, 0] } } }]).validate;
    expect(otherwise(loan(100, 'bike', 'US', 650), 0).isValid).toBe(true);
    expect(otherwise(loan(101, 'bike', 'US', 650), 0).failures[0].message).toBe('101 is over the limit of 100 for this product');
    const pass = compileRuleset([{ ...LIMIT_RULE, table: { ...LOANS, noMatch: 'pass' } }]).validate;
    expect(pass(loan(1e9, 'bike', 'US', 650), 0).isValid).toBe(true);
  });

  it('under unique, reports a second match with its own error code', () => {
    const table: TableDefinition = { ...LOANS, hitPolicy: 'unique' };
    const { validate: check } = compileRuleset([{ ...LIMIT_RULE, table }]);
    expect(check(loan(1, 'auto', 'US', 710), 0).isValid).toBe(true);
    const unique = compileRuleset([{ ...LIMIT_RULE, table: { ...table, rows: [...LOANS.rows, { when: ['"auto"', '"US"', '-'], then: [1, 1] }] } }]).validate;
    expect(unique(loan(1, 'auto', 'US', 710), 0).failures).toEqual([expect.objectContaining({
      errorCode: 'TABLE_NOT_UNIQUE', ruleCode: 'AMOUNT_WITHIN_LIMIT',
      message: 'Amount within the product\'s limit: table rows 0 and 3 both match, and the hit policy unique allows one',
    })]);
  });

  it('under any, passes equal outputs and reports different ones with its own error code', () => {
    const rows = [...LOANS.rows, { when: ['"auto"', '"US"', '-'], then: [50000, 12] }, { when: ['"auto"', '"CA"', '-'], then: [1, 1] }];
    const { validate: check } = compileRuleset([{ ...LIMIT_RULE, table: { ...LOANS, hitPolicy: 'any', rows } }]);
    expect(check(loan(1, 'auto', 'US', 710), 0).isValid).toBe(true);
    expect(check(loan(1, 'auto', 'CA', 710), 0).failures.map((f) => [f.errorCode, f.message])).toEqual([[
      'TABLE_OUTPUTS_DIFFER', 'Amount within the product\'s limit: table rows 0 and 4 match with different outputs, and the hit policy any needs them equal',
    ]]);
  });

  it('under collect, judges every matching row and names each failing one', () => {
    const table: TableDefinition = {
      hitPolicy: 'collect', inputs: [{ name: 'amount', path: 'amount' }], outputs: ['max'],
      rows: [{ when: ['> 0'], then: [10] }, { when: ['> 5'], then: [100] }, { when: ['> 50'], then: [5] }],
    };
    const { validate: check } = compileRuleset([{ code: 'R', name: 'R', fieldPath: 'amount', table, expression: '$value <= $row.max' }]);
    expect(check({ amount: 60 }, 0).failures.map((f) => [f.message, f.expectedValue])).toEqual([
      ['R failed (table.rows[0])', 10], ['R failed (table.rows[2])', 5],
    ]);
    expect(check({ amount: 3 }, 0).isValid).toBe(true);
  });

  it('names the rows that matched in the explain trace, or the closest one when none did', () => {
    const { explain } = explainRuleset([{ ...LIMIT_RULE, table: { ...LOANS, hitPolicy: 'collect' } }]);
    expect(explain(loan(40000, 'auto', 'US', 710, 12), 0).trace).toEqual([
      { ruleCode: 'AMOUNT_WITHIN_LIMIT', outcome: 'passed', fieldPath: 'loan.amount', value: 40000, rows: [0] },
    ]);
    expect(explain(loan(40000, 'auto', 'FR', 500, 12), 0).trace[0]).toMatchObject({ outcome: 'failed', rows: [2] });
    // No row matches a bike: row 1 ("auto", -, [600..700)) matches two cells of three, the most.
    expect(explain(loan(40000, 'bike', 'FR', 650, 12), 0).trace[0]).toEqual({
      ruleCode: 'AMOUNT_WITHIN_LIMIT', outcome: 'failed', fieldPath: 'loan.amount', value: 40000, rows: [], closestRow: 1,
    });
    expect(explainRuleset([LIMIT_RULE]).explain(loan(1, 'auto', 'US', 710, 12), 0).trace[0].rows).toEqual([0]);
  });

  it('runs per element in a forEach rule, with inputs read from $item', () => {
    const table: TableDefinition = {
      hitPolicy: 'first', inputs: [{ name: 'sku', expression: '$item.sku' }], outputs: ['max'],
      rows: [{ when: ['"A"'], then: [5] }, { when: ['-'], then: [1] }],
    };
    const { validate: check } = compileRuleset([{
      code: 'Q', name: 'Qty', forEach: 'items', fieldPath: 'items[].qty', table, expression: '$value <= $row.max', message: 'item {{ $index }}: {{ $value }} > {{ $row.max }}',
    }]);
    expect(check({ items: [{ sku: 'A', qty: 6 }, { sku: 'B', qty: 1 }, { sku: 'B', qty: 2 }] }, 0).failures.map((f) => [f.fieldPath, f.message, f.expectedValue]))
      .toEqual([['items[0].qty', 'item 0: 6 > 5', 5], ['items[2].qty', 'item 2: 2 > 1', 1]]);
  });

  it('compares dates written as date("…") with a column read through date()', () => {
    const table: TableDefinition = {
      hitPolicy: 'first', inputs: [{ name: 'start', expression: 'date(start)' }], outputs: ['period'],
      rows: [{ when: ['< date("2026-01-01")'], then: ['old'] }, { when: ['>= date("2026-01-01")'], then: ['new'] }],
    };
    const { validate: check } = compileRuleset([{ code: 'R', name: 'R', table, expression: 'false', message: '{{ $row.period }}' }]);
    expect(check({ start: '2025-12-31' }, 0).failures[0].message).toBe('old');
    expect(check({ start: '2026-01-01T00:00:00Z' }, 0).failures[0].message).toBe('new');
  });

  it('indexes a large table by its equality, list and range columns', () => {
    const rows = Array.from({ length: 2000 }, (_, i) => ({ when: [`"P${i % 40}"`, `in ["C${i % 7}", "C${(i + 1) % 7}"]`, `[${i}..${i + 1})`], then: [i, 0] }));
    const planned = planRule({ ...LIMIT_RULE, table: { ...LOANS, rows } }, DEFAULT_LIMITS);
    if (!planned.ok) throw new Error('the table should plan');
    expect(planned.plan.table?.strategy).toEqual({ columns: ['hash', 'hash', 'range'], hashColumns: [0, 1], rangeColumn: 2 });
    const { validate: check } = compileRuleset([{ ...LIMIT_RULE, table: { ...LOANS, rows }, expression: 'false', message: '{{ $rowIndex }}' }]);
    expect(check(loan(1, 'P17', 'C1', 1457.5), 0).failures[0].message).toBe('1457');
    expect(check(loan(1, 'P17', 'C2', 1457), 0).failures[0].message).toBe('1457');
    for (const [product, country] of [['P17', 'C3'], ['P18', 'C1']]) {
      expect(check(loan(1, product, country, 1457), 0).failures[0].message).toBe('Amount within the product\'s limit: no row of its table matches');
    }
  });

  it('keeps hostile text inside literals: cells, outputs and names reach the source only as strings', () => {
    const hostile = '*/ </script> \u2028\u2029 ${x} `; throw 1; //';
    const rows = Array.from({ length: 12 }, (_, i) => ({ when: [JSON.stringify(`${hostile}${i}`), 'in ["__proto__", "constructor"]'], then: [hostile] }));
    const table: TableDefinition = { hitPolicy: 'first', inputs: [{ name: hostile, path: 'a' }, { name: 'b', path: 'b' }], outputs: ['o'], rows };
    const compiled = compileRuleset([{ code: 'H', name: hostile, table, expression: 'false', message: '{{ $row.o }}' }]);
    expect(compiled.errors).toEqual([]);
    expect(compiled.source).not.toMatch(/[\u2028\u2029]/);
    expect(compiled.validate({ a: `${hostile}3`, b: 'constructor' }, 0).failures[0].message).toBe(hostile);
    expect(compiled.validate({ a: `${hostile}3`, b: {} }, 0).failures[0].message).toBe(`${hostile}: no row of its table matches`);
    expect(errorsOf(withTable({ outputs: ['__proto__', 'x'] })).map((e) => e.path)).toEqual(['table.outputs[0]']);
  });
});
