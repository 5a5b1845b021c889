/**
 * Differential test of decision tables: the compiled validator (indexed
 * search chosen by the columns' shape, table/table-index.ts) and the
 * reference scan (table-reference.ts, written from the contract) must
 * return the same result, key order included, for random tables under
 * every hit policy and random payloads. Small tables are scanned; larger
 * ones with equality, list and range columns exercise the index. Runs are
 * seeded: DIFF_SEED replays, DIFF_RUNS scales.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkRule, compileRuleset } from '../../compiler/index.ts';
import { DEFAULT_LIMITS } from '../../compiler/limits.ts';
import { planRule } from '../../compiler/rule-plan.ts';
import type { RuleDefinition, TableDefinition } from '../../compiler/types.ts';
import { referenceTableValidate } from './table-reference.ts';

const NOW = Date.UTC(2024, 5, 15, 12, 30);
const SEED = Number(process.env.DIFF_SEED ?? 20_261_128);
const RUNS = Number(process.env.DIFF_RUNS ?? 1);

const LITERALS = ['0', '1', '2', '3', '4', '2.5', '"a"', '"b"', '"c"', '""', 'true', 'false', 'null'];
const NUMBERS = [0, 1, 2, 2.5, 3, 4, 5];
const VALUES: unknown[] = [0, 1, 2, 2.5, 3, 4, 5, 'a', 'b', 'c', '', true, false, null, undefined, [1], { a: 1 }, Date.UTC(2021, 0, 1)];

const literalCell = fc.constantFrom(...LITERALS);
const listCell = fc.uniqueArray(literalCell, { minLength: 1, maxLength: 3 }).map((items) => `in [${items.join(', ')}]`);
const comparisonCell = fc.tuple(fc.constantFrom('<', '<=', '>', '>='), fc.constantFrom(...NUMBERS)).map(([op, n]) => `${op} ${n}`);
const rangeCell = fc.tuple(fc.constantFrom(...NUMBERS), fc.constantFrom(...NUMBERS), fc.constantFrom('[', '('), fc.constantFrom(']', ')'))
  .map(([a, b, open, close]) => {
    const [low, high] = a <= b ? [a, b] : [b, a];
    return low === high ? `[${low}..${high}]` : `${open}${low}..${high}${close}`;
  });
const hashCell = fc.oneof({ arbitrary: fc.constant('-'), weight: 1 }, { arbitrary: literalCell, weight: 4 }, { arbitrary: listCell, weight: 2 });
const rangeStyleCell = fc.oneof(
  { arbitrary: fc.constant('-'), weight: 1 },
  { arbitrary: fc.constantFrom(...NUMBERS).map(String), weight: 1 },
  { arbitrary: comparisonCell, weight: 2 },
  { arbitrary: rangeCell, weight: 4 },
);
const plainCell = fc.oneof(literalCell, listCell, comparisonCell, rangeCell,
  fc.constantFrom('!= 1', '!= "a"', '!= null', '< "b"', '>= "b"', '["a".."b")', '>= date("2020-01-01")'));
const mixedCell = fc.oneof(
  { arbitrary: fc.constant('-'), weight: 2 },
  { arbitrary: plainCell, weight: 5 },
  { arbitrary: plainCell.map((t) => `not(${t})`), weight: 1 },
  { arbitrary: fc.constantFrom('$cell % 2 == 0', 'isString($cell)', '$cell == t0', 'len($cell) > 0', '$cell > 1 && $cell < 4'), weight: 1 },
);

const styleArb = fc.constantFrom('hash', 'range', 'mixed');
const cellOf = (style: string): fc.Arbitrary<string> => (style === 'hash' ? hashCell : style === 'range' ? rangeStyleCell : mixedCell);
const outputValue = fc.constantFrom<unknown>(0, 1, 2, 'x', null, { k: 1 });

/** A random rule with a table of `rows` rows. */
function tableRuleArb(rows: { min: number; max: number }): fc.Arbitrary<RuleDefinition> {
  return fc.record({
    styles: fc.array(styleArb, { minLength: 1, maxLength: 3 }),
    outputs: fc.integer({ min: 0, max: 2 }),
    hitPolicy: fc.constantFrom('first', 'unique', 'any', 'collect'),
    noMatch: fc.constantFrom('fail', 'pass', 'then'),
    field: fc.boolean(),
    required: fc.boolean(),
    expression: fc.constantFrom(undefined, '$value <= $row.o0', '$rowIndex % 2 == 0', '$row.o0 != 1', 'true'),
    message: fc.constantFrom(undefined, 'm {{ $row.o0 }} at {{ $rowIndex }}', 'plain {{ $value }}'),
    expressionInput: fc.boolean(),
    when: fc.constantFrom(undefined, undefined, 't2 != 5'),
    expectedValue: fc.constantFrom(undefined, undefined, 7, 'limit'),
    seed: fc.integer(),
  }).chain((shape) => {
    const outputs = Array.from({ length: shape.outputs }, (_, i) => `o${i}`);
    const row = fc.record({
      when: fc.tuple(...shape.styles.map(cellOf)),
      then: fc.array(outputValue, { minLength: outputs.length, maxLength: outputs.length }),
    });
    const otherwiseArb = fc.array(outputValue, { minLength: outputs.length, maxLength: outputs.length });
    return fc.tuple(fc.array(row, { minLength: rows.min, maxLength: rows.max }), otherwiseArb)
      .map(([tableRows, otherwise]) => {
        const table: TableDefinition = {
          hitPolicy: shape.hitPolicy,
          inputs: shape.styles.map((_, i) => (shape.expressionInput && i === 0 ? { name: `in${i}`, expression: `t${i}` } : { name: `in${i}`, path: `t${i}` })),
          outputs,
          rows: tableRows.map((r) => ({ when: [...r.when], then: r.then })),
          noMatch: shape.noMatch === 'then' ? { then: otherwise } : shape.noMatch,
        };
        const usesOutput = (text: string | undefined): boolean => text?.includes('$row.o0') === true;
        const expression = usesOutput(shape.expression) && outputs.length === 0 ? '$rowIndex % 2 == 0' : shape.expression;
        const rule: RuleDefinition = {
          code: 'T', name: 'Table', table,
          ...(shape.field ? { fieldPath: 'amount', required: shape.required } : {}),
          ...(expression === undefined || (expression.includes('$value') && !shape.field) ? {} : { expression }),
          ...(shape.message === undefined || (usesOutput(shape.message) && outputs.length === 0) ? {} : { message: shape.message }),
          ...(shape.when === undefined ? {} : { when: shape.when }),
          ...(shape.expectedValue === undefined ? {} : { expectedValue: shape.expectedValue }),
        };
        return rule;
      });
  });
}

const payloadArb = fc.record({
  t0: fc.constantFrom(...VALUES),
  t1: fc.constantFrom(...VALUES),
  t2: fc.constantFrom(...VALUES, 5),
  amount: fc.constantFrom(undefined, 0, 1, 2, 3, 'a'),
}).map((p) => JSON.stringify(p));

function agree(rule: RuleDefinition, payloads: string[]): void {
  const compiled = compileRuleset([rule]);
  expect(compiled.errors, 'a well-formed table was refused').toEqual([]);
  expect(checkRule(rule)).toEqual([]);
  for (const text of payloads) {
    const expected = referenceTableValidate(rule, JSON.parse(text), NOW);
    const actual = compiled.validate(JSON.parse(text), NOW);
    expect(JSON.stringify(actual), `payload ${text}`).toBe(JSON.stringify(expected));
  }
}

describe('decision tables against the reference scan', () => {
  it('on small tables (scanned in row order), every hit policy and noMatch', () => {
    fc.assert(fc.property(tableRuleArb({ min: 0, max: 8 }), fc.array(payloadArb, { minLength: 1, maxLength: 8 }), agree),
      { seed: SEED, numRuns: 300 * RUNS });
  });

  it('on larger tables (indexed by Maps and boundaries), every hit policy and noMatch', () => {
    let indexed = 0;
    fc.assert(fc.property(tableRuleArb({ min: 9, max: 120 }), fc.array(payloadArb, { minLength: 4, maxLength: 12 }), (rule, payloads) => {
      const planned = planRule(rule, DEFAULT_LIMITS);
      if (planned.ok && planned.plan.table !== undefined) {
        const { hashColumns, rangeColumn } = planned.plan.table.strategy;
        if (hashColumns.length > 0 || rangeColumn >= 0) indexed++;
      }
      agree(rule, payloads);
    }), { seed: SEED, numRuns: 200 * RUNS });
    // The property is about the index: most of the tables must have used one.
    expect(indexed).toBeGreaterThan(100 * RUNS);
  });

  it('on payloads that hit the table, drawn from its own cells', () => {
    // Values taken from the rows' literals match far more often than random ones.
    const picksArb = fc.array(fc.tuple(fc.nat(), fc.nat(), fc.nat()), { minLength: 4, maxLength: 10 });
    fc.assert(fc.property(tableRuleArb({ min: 20, max: 60 }), picksArb, (rule, picks) => {
      const table = rule.table as TableDefinition;
      const payloads = picks.map(([a, b, c]) => {
        const row = table.rows[a % table.rows.length];
        const valueOf = (cell: string | undefined, k: number): unknown => {
          const number = /-?\d+(\.\d+)?/.exec(cell ?? '');
          const text = /"([a-c]?)"/.exec(cell ?? '');
          if ((k + b) % 3 === 0 && text !== null) return text[1];
          return number === null ? VALUES[(b + k) % VALUES.length] : Number(number[0]) + ((c + k) % 2 === 0 ? 0 : 0.5);
        };
        return JSON.stringify({ t0: valueOf(row.when[0], 0), t1: valueOf(row.when[1], 1), t2: valueOf(row.when[2], 2), amount: c % 4 });
      });
      agree(rule, payloads);
    }), { seed: SEED, numRuns: 150 * RUNS });
  });
});
