/**
 * A decision table's weight in the cost model (compiler/analysis/cost-pass.ts,
 * behind src/validators/evaluation-cost.ts): what a search of it costs by the
 * strategy the compiler picks, so a 10,000-row table of indexed columns
 * weighs about as much as a short expression, and one scanned row by row
 * (or with expression cells) weighs in proportion to its rows.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, rulesetCostProfile, type RuleDefinition, type TableDefinition } from '../../compiler/index.ts';
import { planRule } from '../../compiler/rule-plan.ts';

function ruleWeight(rule: RuleDefinition): number {
  const planned = planRule(rule, DEFAULT_LIMITS);
  if (!planned.ok) throw new Error(planned.errors[0].message);
  return planned.plan.cost.weight;
}

/** The weight of a rule with only the table: one search of it. */
function tableWeight(t: TableDefinition, expression?: string): number {
  return ruleWeight({ code: 'T', name: 'T', fieldPath: 'amount', table: t, ...(expression === undefined ? {} : { expression }) });
}

const inputs = [{ name: 'product', path: 'product' }, { name: 'score', path: 'score' }];

function table(rows: number, cell: (i: number) => [string, string], hitPolicy: TableDefinition['hitPolicy'] = 'first'): TableDefinition {
  return { hitPolicy, inputs, outputs: ['max'], rows: Array.from({ length: rows }, (_, i) => ({ when: cell(i), then: [i] })) };
}

describe('tableWeight', () => {
  it('an indexed table weighs about the same at 100 and at 10,000 rows', () => {
    const indexed = (rows: number) => table(rows, (i) => [JSON.stringify(`p${i}`), `[${i}..${i + 1})`]);
    const small = tableWeight(indexed(100));
    const large = tableWeight(indexed(10_000));
    expect(large).toBeLessThan(40);
    expect(large - small).toBeLessThanOrEqual(8);
  });

  it('a scanned column weighs one step a row, an expression cell its expression', () => {
    // `!=` cells cannot be indexed: the column is scanned.
    const scanned = table(1000, (i) => [`!= "p${i}"`, '-']);
    expect(tableWeight(scanned)).toBeGreaterThanOrEqual(2000);
    const expressions = table(1000, (i) => [`len($cell) > ${i} && len($cell) < ${i + 5}`, '-']);
    expect(tableWeight(expressions)).toBeGreaterThan(tableWeight(scanned));
  });

  it('under collect the rule\'s expression counts once a row', () => {
    const rows = (policy: TableDefinition['hitPolicy']) => table(500, (i) => [JSON.stringify(`p${i}`), '-'], policy);
    expect(tableWeight(rows('collect'), '$value <= $row.max') - tableWeight(rows('first'), '$value <= $row.max')).toBe(500);
  });

  it('counts in the rule\'s weight and the ruleset\'s profile', () => {
    const rule = { code: 'T', name: 'T', fieldPath: 'amount', expression: '$value <= $row.max', table: table(1000, (i) => [`!= "p${i}"`, '-']) };
    expect(ruleWeight(rule)).toBeGreaterThan(2000);
    expect(rulesetCostProfile([rule])[1]).toBe(ruleWeight(rule));
  });

  it('an expression cell that walks an array inside another walk of it makes the rule quadratic, as in an expression', () => {
    const cell = '$cell.every(x => $cell.every(y => y >= x || y < x))';
    const inCell = planRule({
      code: 'T', name: 'T', fieldPath: 'amount',
      table: { hitPolicy: 'first', inputs: [{ name: 'items', path: 'items' }], outputs: ['max'], rows: [{ when: [cell], then: [1] }] },
    }, DEFAULT_LIMITS);
    const inExpression = planRule({ code: 'E', name: 'E', fieldPath: 'items', expression: cell.replaceAll('$cell', '$value') }, DEFAULT_LIMITS);
    const linear = planRule({ code: 'L', name: 'L', fieldPath: 'items', expression: '$value.every(y => y >= 0)' }, DEFAULT_LIMITS);
    if (!inCell.ok || !inExpression.ok || !linear.ok) throw new Error('the rules should compile');
    expect(inExpression.plan.cost.degree).toBeGreaterThan(linear.plan.cost.degree);
    expect(inCell.plan.cost.degree).toBe(inExpression.plan.cost.degree);
  });
});
