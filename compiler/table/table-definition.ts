/**
 * A decision table as a rule carries it (`RuleDefinition.table`): named
 * inputs (a payload path or an expression each), named outputs, rows of
 * cells and outputs, a hit policy and what happens when no row matches.
 * Plain JSON: the compiler checks every part of it (plan-table.ts).
 */

/** Which matching rows count: the first in order, the only one, any of equal ones, or every one. */
export type HitPolicy = 'first' | 'unique' | 'any' | 'collect';

export const HIT_POLICIES: readonly HitPolicy[] = ['first', 'unique', 'any', 'collect'];

/** One column of the table: the value its cells test. */
export interface TableInput {
  name: string;
  /** A payload path (`loan.product`); exactly one of path and expression. */
  path?: string;
  /** An expression of the rule language, evaluated like the rule's own. */
  expression?: string;
}

export interface TableRow {
  /** One cell per input, each the text of a unary test (cell-test.ts). */
  when: string[];
  /** One JSON value per output. */
  then?: unknown[];
}

/** `"fail"` (the default), `"pass"`, or a default row's outputs. */
export type NoMatch = 'fail' | 'pass' | { then: unknown[] };

export interface TableDefinition {
  hitPolicy: HitPolicy;
  inputs: TableInput[];
  outputs?: string[];
  rows: TableRow[];
  noMatch?: NoMatch;
}
