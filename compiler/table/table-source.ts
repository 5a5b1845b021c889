/**
 * The generated code's view of a decision table: its spec as the JSON that
 * `rt.table` builds the index from (table-index.ts), a one-line summary
 * for the comment above it, and the function of its expression cells. The
 * rule's own block, which fills the inputs and acts on the matched rows,
 * is written by ruleset-source.ts.
 */
import { _, CodeWriter, join, type Name } from '../codegen/index.ts';
import { generateIsTrue, type Env, type FixedNames, type Hoist } from '../expression/generate.ts';
import { isBoolean } from '../expression/ir.ts';
import type { CellTest } from './cell-test.ts';
import type { TablePlan } from './plan-table.ts';
import type { TableSpec } from './table-index.ts';

/** What `rt.table` is given, as JSON text (a string literal in the source). */
export function tableSpecJson(plan: TablePlan): string {
  // Cells read from the same text share one test object (plan-table.ts); each distinct test is written once.
  const ids = new Map<CellTest, number>();
  const tests: CellTest[] = [];
  const cells: number[] = [];
  for (const row of plan.cells) {
    for (const test of row) {
      let id = ids.get(test);
      if (id === undefined) {
        ids.set(test, (id = tests.length));
        tests.push(test);
      }
      cells.push(id);
    }
  }
  const spec: TableSpec = {
    hitPolicy: plan.hitPolicy,
    tests,
    cells,
    width: plan.inputs.length,
    outputs: plan.outputs,
    then: plan.then,
    otherwise: typeof plan.noMatch === 'object' ? plan.noMatch.then : null,
    strategy: plan.strategy,
  };
  return JSON.stringify(spec);
}

/**
 * The comment's summary: rows, hit policy and how the table is searched,
 * naming inputs by position (their names are tenant text).
 *
 * @example
 * tableSummary(plan); // '10000 rows, hit policy first; Maps over inputs 0, 1, 2; boundaries of input 3'
 */
export function tableSummary(plan: TablePlan): string {
  const { hashColumns, rangeColumn } = plan.strategy;
  const parts = [`${plan.cells.length} rows, hit policy ${plan.hitPolicy}`];
  if (hashColumns.length === 0 && rangeColumn < 0) parts.push('scanned in row order');
  if (hashColumns.length > 0) parts.push(`Maps over inputs ${hashColumns.join(', ')}`);
  if (rangeColumn >= 0) parts.push(`boundaries of input ${rangeColumn}`);
  if (plan.expressionCells.length > 0) parts.push(`${plan.expressionCells.length} expression cells`);
  return parts.join('; ');
}

/**
 * Declares `function cellsN(i, cell, payload, now)`, the table's
 * expression cells by id, each true when its expression is exactly true
 * for `$cell`; undefined when the table has none.
 */
export function declareExpressionCells(plan: TablePlan, hoist: Hoist, names: FixedNames & { readonly i: Name }, onNow: () => void): Name | undefined {
  if (plan.expressionCells.length === 0) return undefined;
  const fn = hoist.scope.name('cells');
  const temps: Name[] = [];
  const none = _`undefined`;
  const env: Env = {
    payload: names.payload,
    get now() {
      onNow();
      return names.now;
    },
    value: none,
    item: none,
    index: none,
    expected: none,
    cell: names.cell,
    params: [],
    temp: () => {
      const t = hoist.scope.name('t');
      temps.push(t);
      return t;
    },
  };
  const cases = plan.expressionCells.map((e) => generateIsTrue(e, env, hoist, names, isBoolean(e)));
  const w = new CodeWriter();
  w.block(_`function ${fn}(${names.i}, ${names.cell}, ${names.payload}, ${names.now})`, () => {
    if (temps.length > 0) w.line(_`let ${join(temps)};`);
    w.block(_`switch (${names.i})`, () => {
      cases.forEach((code, id) => w.line(_`case ${id}: return ${code};`));
    });
    w.line(_`return false;`);
  });
  hoist.declare(w.toCode());
  return fn;
}
