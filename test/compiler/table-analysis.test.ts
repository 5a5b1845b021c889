/**
 * Save-time analysis of decision tables (compiler/table/table-analysis.ts),
 * as analyzeRule gives it, the channel every rule's warnings take: each
 * warning kind seen to fire and seen not to, every witness evaluated with
 * the reference scan (table-reference.ts: it shares no code with the
 * compiler) to match what the warning says, and random tables whose
 * reported gaps, overlaps and unreachable rows are checked the same way.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fencedBlocks } from '../docs/doc-examples.ts';
import { analyzeRule, compileRuleset, explainRuleset, type RuleDefinition, type RuleWarning, type TableDefinition } from '../../compiler/index.ts';
import { DEFAULT_LIMITS } from '../../compiler/limits.ts';
import { planTable } from '../../compiler/table/plan-table.ts';
import { analyzeTable } from '../../compiler/table/table-analysis.ts';
import { compilePattern } from '../../compiler/regex/index.ts';
import { referenceMatchingRows } from './table-reference.ts';

const NOW = Date.UTC(2026, 0, 1);
const SEED = Number(process.env.DIFF_SEED ?? 20_261_128);
const RUNS = Number(process.env.DIFF_RUNS ?? 1);

function ruleOf(table: TableDefinition): RuleDefinition {
  return { code: 'T', name: 'Table', table };
}

function tableWarnings(table: TableDefinition, payloadSchema?: unknown): RuleWarning[] {
  return analyzeRule(ruleOf(table), payloadSchema === undefined ? undefined : { payloadSchema });
}

function codes(warnings: RuleWarning[]): string[] {
  return warnings.map((w) => w.code);
}

/** The rows the reference scan matches for a warning's witness. */
function rowsFor(table: TableDefinition, warning: RuleWarning): number[] {
  expect(warning.witness, `${warning.code} at ${warning.path} has a witness`).toBeDefined();
  return referenceMatchingRows(table, warning.witness, NOW);
}

const SCORE: TableDefinition = {
  hitPolicy: 'unique',
  inputs: [{ name: 'product', path: 'loan.product' }, { name: 'score', path: 'applicant.score' }],
  outputs: ['max'],
  rows: [
    { when: ['"auto"', '>= 700'], then: [50000] },
    { when: ['"auto"', '[600..700)'], then: [20000] },
    { when: ['-', '< 600'], then: [0] },
    { when: ['-', '-'], then: [1] },
  ],
  noMatch: 'pass',
};

const LOAN_SCHEMA = {
  type: 'object',
  properties: {
    loan: { type: 'object', properties: { product: { type: 'string', enum: ['auto', 'home'] }, amount: { type: 'number' } } },
    applicant: { type: 'object', properties: { score: { type: 'number' }, country: { $ref: '#/$defs/country' } } },
  },
  $defs: { country: { type: 'string', enum: ['US', 'CA', 'FR'] } },
};

describe('TABLE_OVERLAP', () => {
  it('fires under unique for two rows one input matches, with that input as the witness', () => {
    const table: TableDefinition = { ...SCORE, rows: SCORE.rows.slice(0, 3).concat({ when: ['"auto"', '>= 800'], then: [9] }) };
    const warnings = tableWarnings(table);
    expect(codes(warnings)).toEqual(['TABLE_OVERLAP']);
    expect(warnings[0]).toMatchObject({ path: 'table.rows[3]', message: expect.stringMatching(/^rows\[0\] and rows\[3\] both match \{.*\}: under hit policy unique/) });
    expect(rowsFor(table, warnings[0])).toEqual([0, 3]);
  });

  it('lists each overlapping pair once, by the later row, each witness matching both', () => {
    const warnings = tableWarnings(SCORE).filter((w) => w.code === 'TABLE_OVERLAP');
    expect(warnings.map((w) => w.path)).toEqual(['table.rows[3]', 'table.rows[3]', 'table.rows[3]']);
    for (const [i, warning] of warnings.entries()) expect(rowsFor(SCORE, warning)).toEqual([i, 3]);
  });

  it('does not fire for disjoint rows, nor under first or collect', () => {
    const disjoint = { ...SCORE, rows: SCORE.rows.slice(0, 3) };
    expect(tableWarnings(disjoint)).toEqual([]);
    expect(codes(tableWarnings({ ...SCORE, hitPolicy: 'collect' }))).toEqual([]);
    expect(codes(tableWarnings({ ...SCORE, hitPolicy: 'first' }))).toEqual([]);
  });

  it('under any, fires only where the outputs of the overlapping rows differ', () => {
    const table: TableDefinition = {
      hitPolicy: 'any', inputs: [{ name: 'n', path: 'n' }], outputs: ['o'],
      rows: [{ when: ['< 10'], then: [1] }, { when: ['> 5'], then: [1] }, { when: ['> 8'], then: [2] }],
      noMatch: 'pass',
    };
    const warnings = tableWarnings(table);
    expect(warnings.map((w) => w.message.slice(0, 22))).toEqual(['rows[0] and rows[2] bo', 'rows[1] and rows[2] bo']);
    for (const warning of warnings) expect(rowsFor(table, warning)).toContain(2);
    expect(referenceMatchingRows(table, warnings[0].witness, NOW)).toEqual(expect.arrayContaining([0, 2]));
    expect(tableWarnings({ ...table, rows: table.rows.slice(0, 2) })).toEqual([]);
  });
});

describe('TABLE_UNREACHABLE', () => {
  const SHADOWED: TableDefinition = {
    hitPolicy: 'first', inputs: [{ name: 'n', path: 'n' }], outputs: ['o'],
    rows: [{ when: ['[0..5)'], then: [1] }, { when: ['[5..10]'], then: [2] }, { when: ['[2..8]'], then: [3] }, { when: ['-'], then: [4] }],
    noMatch: 'pass',
  };

  it('fires under first for a row the earlier rows cover together, naming them', () => {
    const warnings = tableWarnings(SHADOWED);
    expect(warnings).toEqual([{
      code: 'TABLE_UNREACHABLE', path: 'table.rows[2]',
      message: 'no input reaches rows[2]: under hit policy first, every input it matches is taken by an earlier row (rows[0], rows[1])',
    }]);
  });

  it('does not fire when some input reaches the row first', () => {
    const reachable = { ...SHADOWED, rows: SHADOWED.rows.map((row, r) => (r === 2 ? { ...row, when: ['[2..11]'] } : row)) };
    expect(tableWarnings(reachable)).toEqual([]);
    // 10.5 is such an input: the reference scan takes row 2 first.
    expect(referenceMatchingRows(reachable, { n: 10.5 }, NOW)[0]).toBe(2);
  });

  it('fires under any policy for a row whose literal the payload schema does not allow, and not without the schema', () => {
    const table: TableDefinition = {
      hitPolicy: 'collect', inputs: [{ name: 'product', path: 'loan.product' }],
      rows: [{ when: ['"auto"'] }, { when: ['"bike"'] }], noMatch: 'pass',
    };
    expect(tableWarnings(table, LOAN_SCHEMA)).toEqual([{
      code: 'TABLE_UNREACHABLE', path: 'table.rows[1]',
      message: 'no input matches rows[1] among the values the payload schema allows: its cells can never all hold',
    }]);
    expect(tableWarnings(table)).toEqual([]);
  });
});

describe('TABLE_GAP', () => {
  it('fires when noMatch is "fail", with an input that matches no row, drawn from the schema\'s enum', () => {
    const table: TableDefinition = {
      hitPolicy: 'first',
      inputs: [{ name: 'product', path: 'loan.product' }, { name: 'country', path: 'applicant.country' }],
      rows: [{ when: ['"auto"', '-'] }, { when: ['"home"', 'in ["US", "CA"]'] }],
      noMatch: 'fail',
    };
    const warnings = tableWarnings(table, LOAN_SCHEMA);
    expect(warnings).toEqual([{
      code: 'TABLE_GAP', path: 'table.rows',
      message: 'no row matches {"loan":{"product":"home"},"applicant":{"country":"FR"}}, and noMatch is "fail": such a payload fails the rule',
      witness: { loan: { product: 'home' }, applicant: { country: 'FR' } },
    }]);
    expect(rowsFor(table, warnings[0])).toEqual([]);
  });

  it('finds the hole between ranges from the cells\' boundaries', () => {
    const table: TableDefinition = {
      hitPolicy: 'unique', inputs: [{ name: 'score', path: 'score' }],
      rows: [{ when: ['< 600'] }, { when: ['(600..700)'] }, { when: ['>= 700'] }],
    };
    const warnings = tableWarnings(table, { type: 'object', properties: { score: { type: 'number' } } });
    expect(warnings.map((w) => [w.code, w.witness])).toEqual([['TABLE_GAP', { score: 600 }]]);
    expect(rowsFor(table, warnings[0])).toEqual([]);
  });

  it('reports a missing value when that is the only hole, and nothing once a row takes any value', () => {
    const table: TableDefinition = {
      hitPolicy: 'first', inputs: [{ name: 'score', path: 'score' }],
      rows: [{ when: ['< 600'] }, { when: ['>= 600'] }],
    };
    const schema = { type: 'object', properties: { score: { type: 'number' } } };
    const [gap] = tableWarnings(table, schema);
    expect(gap).toMatchObject({ code: 'TABLE_GAP', message: 'no row matches {} with score missing, and noMatch is "fail": such a payload fails the rule', witness: {} });
    expect(rowsFor(table, gap)).toEqual([]);
    expect(tableWarnings({ ...table, rows: [...table.rows, { when: ['-'] }] }, schema)).toEqual([]);
    expect(tableWarnings({ ...table, noMatch: 'pass' }, schema)).toEqual([]);
    expect(tableWarnings({ ...table, noMatch: { then: [] } }, schema)).toEqual([]);
  });

  it('fires for a table without rows', () => {
    expect(codes(tableWarnings({ hitPolicy: 'first', inputs: [{ name: 'a', path: 'a' }], rows: [] }))).toEqual(['TABLE_GAP']);
  });
});

describe('TYPE_MISMATCH and UNKNOWN_FIELD in a table', () => {
  const table: TableDefinition = {
    hitPolicy: 'collect',
    inputs: [{ name: 'score', path: 'applicant.score' }, { name: 'nickname', path: 'applicant.nick' }],
    rows: [{ when: ['"700"', '-'] }, { when: ['in [1, "x"]', '-'] }, { when: ['"700"', '-'] }, { when: ['>= 5', '-'] }],
    noMatch: 'pass',
  };

  it('fires for a literal of a kind the payload schema does not allow at the input\'s path, once per cell text', () => {
    const warnings = tableWarnings(table, LOAN_SCHEMA);
    expect(warnings.filter((w) => w.code !== 'TABLE_UNREACHABLE')).toEqual([
      { code: 'UNKNOWN_FIELD', path: 'table.inputs[1].path', message: '`applicant.nick` is not in the payload schema: the column "nickname" is always missing, so only - and null cells match it' },
      { code: 'TYPE_MISMATCH', path: 'table.rows[0].when[0]', message: '"700" is a string but `applicant.score` is declared a number: it never matches (the same cell is in 1 more rows)' },
      { code: 'TYPE_MISMATCH', path: 'table.rows[1].when[0]', message: '"x" is a string but `applicant.score` is declared a number: it never matches' },
    ]);
  });

  it('does not fire without a payload schema, or where the kinds agree', () => {
    expect(codes(tableWarnings(table)).filter((c) => c === 'TYPE_MISMATCH' || c === 'UNKNOWN_FIELD')).toEqual([]);
    const agreeing = { ...table, inputs: [table.inputs[0]], rows: [{ when: ['700'] }, { when: ['>= 5'] }, { when: ['null'] }] };
    expect(tableWarnings(agreeing, LOAN_SCHEMA)).toEqual([]);
  });
});

describe('TABLE_INCOMPLETE', () => {
  it('says where an expression cell kept a question open, and claims nothing about it', () => {
    const table: TableDefinition = {
      hitPolicy: 'unique', inputs: [{ name: 'n', path: 'n' }],
      rows: [{ when: ['< 10'] }, { when: ['$cell % 2 == 0'] }], noMatch: 'pass',
    };
    expect(tableWarnings(table)).toEqual([{
      code: 'TABLE_INCOMPLETE', path: 'table.rows[1].when[0]',
      message: 'expression cells are not analyzed: whether rows overlap depends on cells such as this one, so it was not decided',
    }]);
    // An expression cell in a row that another column keeps apart from the others leaves nothing open.
    const apart: TableDefinition = {
      ...table, inputs: [{ name: 'k', path: 'k' }, { name: 'n', path: 'n' }],
      rows: [{ when: ['"a"', '< 10'] }, { when: ['"b"', '$cell % 2 == 0'] }],
    };
    expect(tableWarnings(apart)).toEqual([]);
  });

  it('stops at its budget, says where, and reports no unreachable rows it could not prove', () => {
    const rows = Array.from({ length: 300 }, (_, i) => ({ when: [`[${i}..${i + 150}]`, `[${i}..${i + 200}]`] }));
    const table: TableDefinition = { hitPolicy: 'first', inputs: [{ name: 'a', path: 'a' }, { name: 'b', path: 'b' }], rows, noMatch: 'pass' };
    const planned = planTable(table, { ruleCode: 'T', limits: DEFAULT_LIMITS, compilePattern: () => (p) => compilePattern(p, DEFAULT_LIMITS) });
    if (!planned.ok) throw new Error('the table plans');
    expect(analyzeTable(planned.plan, { budget: 700_000 })).toEqual([{
      code: 'TABLE_INCOMPLETE', path: 'table',
      message: expect.stringMatching(/^the analysis stopped after 700,000 steps, at a = [0-9.]+, b = [0-9.]+: the findings above are real, but inputs past that point were not checked, and unreachable rows are not reported$/),
    }]);
    expect(analyzeTable(planned.plan, { budget: 1000 })).toEqual([{
      code: 'TABLE_INCOMPLETE', path: 'table',
      message: expect.stringMatching(/^the analysis stopped after 1,000 steps, while reading the cells of the column "a": /),
    }]);
    // A caller of analyzeRule may set the budget, and the finding comes through its warnings.
    expect(codes(analyzeRule({ ...ruleOf(table) }, { tableAnalysisBudget: 1000 }))).toEqual(['TABLE_INCOMPLETE']);
    // Its first 20 rows are analyzed in full: each reaches some input first, nothing is said.
    const small = planTable({ ...table, rows: rows.slice(0, 20) }, { ruleCode: 'T', limits: DEFAULT_LIMITS, compilePattern: () => (p) => compilePattern(p, DEFAULT_LIMITS) });
    if (!small.ok) throw new Error('the table plans');
    expect(analyzeTable(small.plan)).toEqual([]);
  });
});

describe('random tables: what the analysis reports is real', () => {
  const LITERALS = ['0', '1', '2', '3', '2.5', '"a"', '"b"', '""', 'true', 'null'];
  const NUMBERS = [0, 1, 2, 2.5, 3, 4];
  const cell = fc.oneof(
    { arbitrary: fc.constant('-'), weight: 3 },
    { arbitrary: fc.constantFrom(...LITERALS), weight: 4 },
    { arbitrary: fc.uniqueArray(fc.constantFrom(...LITERALS), { minLength: 1, maxLength: 3 }).map((items) => `in [${items.join(', ')}]`), weight: 2 },
    { arbitrary: fc.tuple(fc.constantFrom('<', '<=', '>', '>='), fc.constantFrom(...NUMBERS)).map(([op, n]) => `${op} ${n}`), weight: 2 },
    { arbitrary: fc.tuple(fc.constantFrom(...NUMBERS), fc.constantFrom(...NUMBERS)).map(([a, b]) => `[${Math.min(a, b)}..${Math.max(a, b)}]`), weight: 2 },
    { arbitrary: fc.constantFrom('!= 1', '!= "a"', 'not(in [1, 2])', '< "b"', '["a".."b")', 'not(null)'), weight: 1 },
    { arbitrary: fc.constantFrom('$cell % 2 == 0', 'isString($cell)'), weight: 1 },
  );
  const tableArb = fc.record({
    width: fc.integer({ min: 1, max: 3 }),
    hitPolicy: fc.constantFrom('first' as const, 'unique' as const, 'any' as const, 'collect' as const),
    noMatch: fc.constantFrom('fail' as const, 'pass' as const),
    height: fc.integer({ min: 0, max: 12 }),
  }).chain(({ width, hitPolicy, noMatch, height }) => fc.array(
    fc.record({ when: fc.array(cell, { minLength: width, maxLength: width }), then: fc.tuple(fc.constantFrom(0, 1)) }),
    { minLength: height, maxLength: height },
  ).map((rows): TableDefinition => ({
    hitPolicy, noMatch, outputs: ['o'], rows,
    inputs: Array.from({ length: width }, (_, i) => ({ name: `in${i}`, path: i === 2 ? 'x.y' : `t${i}` })),
  })));
  const VALUES: unknown[] = [0, 1, 2, 2.5, 3, 4, 5, -1, 'a', 'b', 'ab', '', 'c', true, false, null, undefined, [1], { a: 1 }];
  const payloadArb = fc.tuple(fc.constantFrom(...VALUES), fc.constantFrom(...VALUES), fc.constantFrom(...VALUES))
    .map(([t0, t1, y]) => JSON.parse(JSON.stringify({ t0, t1, x: { y } })) as unknown);

  it('gaps match no row, overlaps match both rows (outputs differing under any), unreachable rows are never first; silence is kept on sampled inputs', () => {
    const seen = { gaps: 0, overlaps: 0, unreachable: 0, silentTables: 0 };
    fc.assert(fc.property(tableArb, fc.array(payloadArb, { minLength: 20, maxLength: 40 }), (table, payloads) => {
      const warnings = tableWarnings(table);
      const expressions = table.rows.some((row) => row.when.some((c) => c.includes('$cell')));
      const byCode = (code: string): RuleWarning[] => warnings.filter((w) => w.code === code && w.witness !== undefined);
      for (const gap of byCode('TABLE_GAP')) {
        seen.gaps++;
        expect(table.noMatch).toBe('fail');
        expect(rowsFor(table, gap), gap.message).toEqual([]);
      }
      for (const overlap of byCode('TABLE_OVERLAP')) {
        seen.overlaps++;
        const [a, b] = [...overlap.message.matchAll(/rows\[(\d+)\]/g)].map((m) => Number(m[1]));
        const rows = rowsFor(table, overlap);
        expect(rows, overlap.message).toEqual(expect.arrayContaining([a, b]));
        if (table.hitPolicy === 'any') expect(table.rows[a].then).not.toEqual(table.rows[b].then);
      }
      const unreachable = warnings.filter((w) => w.code === 'TABLE_UNREACHABLE' && /^table\.rows\[\d+\]$/.test(w.path))
        .map((w) => Number(/\d+/.exec(w.path)?.[0]));
      seen.unreachable += unreachable.length;
      const gapless = !warnings.some((w) => w.code === 'TABLE_GAP' || w.code === 'TABLE_INCOMPLETE');
      const overlapless = !warnings.some((w) => w.code === 'TABLE_OVERLAP' || w.code === 'TABLE_INCOMPLETE');
      if (warnings.length === 0) seen.silentTables++;
      for (const payload of payloads) {
        const rows = referenceMatchingRows(table, payload, NOW);
        const taken = table.hitPolicy === 'first' ? rows.slice(0, 1) : rows;
        for (const r of unreachable) expect(taken, `rows[${r}] reported unreachable, reached by ${JSON.stringify(payload)}`).not.toContain(r);
        if (expressions) continue;
        if (table.noMatch === 'fail' && gapless) expect(rows.length, `no gap reported, but ${JSON.stringify(payload)} matches no row`).toBeGreaterThan(0);
        if (overlapless && table.hitPolicy === 'unique') expect(rows.length, `no overlap reported, but ${JSON.stringify(payload)} matches ${JSON.stringify(rows)}`).toBeLessThan(2);
        if (overlapless && table.hitPolicy === 'any') expect(new Set(rows.map((r) => JSON.stringify(table.rows[r].then))).size).toBeLessThan(2);
      }
    }), { seed: SEED, numRuns: 400 * RUNS });
    // The property must have met each kind of finding, and tables with none.
    expect(seen.gaps).toBeGreaterThan(20);
    expect(seen.overlaps).toBeGreaterThan(20);
    expect(seen.unreachable).toBeGreaterThan(20);
    expect(seen.silentTables).toBeGreaterThan(5);
  });
});

describe('random tables under a payload schema: what the analysis reports holds for the payloads it allows', () => {
  const cell = fc.oneof(
    { arbitrary: fc.constant('-'), weight: 2 },
    { arbitrary: fc.constantFrom('0', '1', '2', '"a"', '"b"', '"z"', 'null'), weight: 4 },
    { arbitrary: fc.constantFrom('in ["a", "b"]', 'in [0, 1]', '< 1', '>= 1', '[0..2)', '!= "a"', 'not(in [0, "b"])'), weight: 3 },
  );
  const SCHEMA = { type: 'object', properties: { e: { enum: ['a', 'b', 'c', 0, 1] }, n: { type: 'number' } } };
  const tableArb = fc.record({
    hitPolicy: fc.constantFrom('first' as const, 'unique' as const, 'collect' as const),
    rows: fc.array(fc.record({ when: fc.tuple(cell, cell) }), { minLength: 1, maxLength: 10 }),
  }).map(({ hitPolicy, rows }): TableDefinition => ({
    hitPolicy, noMatch: 'fail', rows: rows.map((row) => ({ when: [...row.when] })),
    inputs: [{ name: 'e', path: 'e' }, { name: 'n', path: 'n' }],
  }));
  const payloadArb = fc.record({
    e: fc.constantFrom<unknown>('a', 'b', 'c', 0, 1, undefined, null),
    n: fc.constantFrom<unknown>(-1, 0, 0.5, 1, 1.5, 2, 3, undefined, null),
  }).map((p) => JSON.parse(JSON.stringify(p)) as unknown);

  it('gaps, overlaps and unreachable rows are real; silence is kept', () => {
    let findings = 0;
    fc.assert(fc.property(tableArb, fc.array(payloadArb, { minLength: 20, maxLength: 30 }), (table, payloads) => {
      const warnings = tableWarnings(table, SCHEMA);
      findings += warnings.length;
      for (const w of warnings.filter((x) => x.witness !== undefined)) {
        const rows = rowsFor(table, w);
        if (w.code === 'TABLE_GAP') expect(rows, w.message).toEqual([]);
        else expect(rows.length, w.message).toBeGreaterThanOrEqual(2);
      }
      const unreachable = warnings.filter((w) => w.code === 'TABLE_UNREACHABLE' && /\d/.test(w.path)).map((w) => Number(/\d+/.exec(w.path)?.[0]));
      const gapless = !warnings.some((w) => w.code === 'TABLE_GAP');
      const overlapless = !warnings.some((w) => w.code === 'TABLE_OVERLAP');
      for (const payload of payloads) {
        const rows = referenceMatchingRows(table, payload, NOW);
        const taken = table.hitPolicy === 'first' ? rows.slice(0, 1) : rows;
        for (const r of unreachable) expect(taken, `rows[${r}] reached by ${JSON.stringify(payload)}`).not.toContain(r);
        if (gapless) expect(rows.length, `${JSON.stringify(payload)} matches no row`).toBeGreaterThan(0);
        if (overlapless && table.hitPolicy === 'unique') expect(rows.length).toBeLessThan(2);
      }
    }), { seed: SEED, numRuns: 200 * RUNS });
    expect(findings).toBeGreaterThan(100);
  });
});

describe('explain names the table row', () => {
  const table: TableDefinition = {
    hitPolicy: 'first',
    inputs: [{ name: 'product', path: 'product' }, { name: 'country', path: 'country' }, { name: 'score', path: 'score' }],
    outputs: ['max'],
    rows: [
      { when: ['"auto"', '"US"', '>= 700'], then: [100] },
      { when: ['"home"', '"FR"', '>= 600'], then: [50] },
      { when: ['"auto"', '"FR"', '< 600'], then: [10] },
    ],
    noMatch: 'fail',
  };
  const rule: RuleDefinition = { code: 'LIMIT', name: 'Limit', fieldPath: 'amount', table, expression: '$value <= $row.max' };

  it('names the matched row of a passing and of a failing payload', () => {
    const { explain } = explainRuleset([rule]);
    expect(explain({ amount: 5, product: 'auto', country: 'FR', score: 500 }, NOW).trace).toEqual([
      { ruleCode: 'LIMIT', outcome: 'passed', fieldPath: 'amount', value: 5, rows: [2] },
    ]);
    expect(explain({ amount: 500, product: 'home', country: 'FR', score: 650 }, NOW).trace[0]).toMatchObject({ outcome: 'failed', rows: [1] });
  });

  it('on no match, names the first of the rows that satisfy the most cells', () => {
    const { explain } = explainRuleset([rule]);
    // Rows 0 and 2 both satisfy two cells of three; row 0 comes first.
    expect(explain({ amount: 5, product: 'auto', country: 'FR', score: 800 }, NOW).trace[0]).toEqual({
      ruleCode: 'LIMIT', outcome: 'failed', fieldPath: 'amount', value: 5, rows: [], closestRow: 0,
    });
    // Row 1 satisfies two (country, score), the others one at most.
    expect(explain({ amount: 5, product: 'bike', country: 'FR', score: 650 }, NOW).trace[0]).toMatchObject({ rows: [], closestRow: 1 });
  });
});

describe('docs/rule-language.md, "Decision tables"', () => {
  // The section's examples are checked here with the compiler (test/docs/ saves its rules and runs its payloads over HTTP):
  // a rule compiles; a payload gets the result shown with the last rule above it; an analyzed rule gets the warnings shown.
  const markdown = readFileSync(new URL('../../docs/rule-language.md', import.meta.url), 'utf8');
  const start = markdown.indexOf('\n## 16. Decision tables\n');
  const blocks = fencedBlocks(markdown.slice(start)).filter((b) => b.info.startsWith('json') || b.info === 'text');
  const ruleOfBlock = (body: string): RuleDefinition => {
    const { context: _context, ...rule } = JSON.parse(body) as RuleDefinition & { context: string };
    return rule;
  };

  it('has its examples: four hit policies, each kind of warning', () => {
    expect(start).toBeGreaterThan(0);
    expect(blocks.filter((b) => b.info === 'json payload')).toHaveLength(4);
    expect(blocks.filter((b) => b.info === 'json analyzed')).toHaveLength(5);
  });

  it('shows what the compiler does', () => {
    let rule: RuleDefinition | undefined;
    let schema: unknown;
    const checked: string[] = [];
    for (let i = 0; i < blocks.length; i++) {
      const block = blocks[i];
      if (block.info === 'json' || block.info === 'json analyzed') {
        rule = ruleOfBlock(block.body);
        expect(compileRuleset([rule]).errors, `line ${block.line}`).toEqual([]);
      }
      if (block.info === 'json schema') schema = JSON.parse(block.body);
      if (block.info === 'json payload') {
        if (rule === undefined) throw new Error(`line ${block.line}: a payload without a rule above it`);
        const result = blocks[i + 1];
        expect(result.info, `line ${block.line}: a payload is followed by its result`).toBe('json result');
        const answer = compileRuleset([rule]).validate(JSON.parse(block.body), NOW);
        expect(answer, `line ${block.line}`).toEqual(JSON.parse(result.body));
        checked.push('payload');
      }
      if (block.info === 'json analyzed') {
        const shown = blocks[i + 1];
        expect(shown.info, `line ${block.line}: an analyzed rule is followed by its warnings`).toBe('text');
        const warnings = analyzeRule(ruleOfBlock(block.body), { payloadSchema: schema }).map((w) => `${w.code} ${w.path}: ${w.message}`);
        expect(warnings, `line ${block.line}`).toEqual(shown.body.split('\n'));
        checked.push('analyzed');
      }
    }
    expect(checked).toHaveLength(9);
  });
});
