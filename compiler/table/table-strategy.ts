/**
 * How a table is searched, chosen at compile time by the shape of its
 * columns (table-index.ts builds and runs it):
 *
 * - `hash`: every cell is `-`, a literal or a list, and no value leaves
 *   more than half of the rows as candidates. Up to MAX_HASH_COLUMNS
 *   of them, the ones with the most distinct values first, become the
 *   levels of a tree of `Map`s from value to rows, with one branch for the
 *   rows that take any value: a lookup follows at most two branches a level.
 * - `range`: every cell is `-`, a number, a comparison or a range of
 *   numbers. The one with the most distinct boundaries is indexed in each
 *   leaf of the tree by its sorted boundaries, found by binary search.
 * - `scan`: anything else (expressions, `not(…)`, `!=`, strings in ranges),
 *   checked on each candidate row.
 *
 * A table of at most SMALL_TABLE_ROWS rows, or without a column to index,
 * is a plain scan in row order: for it an index costs more than it saves.
 */
import type { CellTest } from './cell-test.ts';

export type ColumnIndex = 'hash' | 'range' | 'scan';

export interface TableStrategy {
  /** One kind per input column. */
  columns: ColumnIndex[];
  /** The columns of the tree of Maps, top level first; empty for a plain scan. */
  hashColumns: number[];
  /** The column indexed by boundaries in each leaf, or -1. */
  rangeColumn: number;
}

export const SMALL_TABLE_ROWS = 8;
/** A lookup follows at most 2^levels branches (a value's and the any-value rows'). */
export const MAX_HASH_COLUMNS = 4;

/**
 * The strategy of a table's cells (rows of tests, one per input).
 *
 * @example
 * chooseStrategy(cells); // { columns: ['hash', 'hash', 'range'], hashColumns: [1, 0], rangeColumn: 2 }
 */
export function chooseStrategy(cells: readonly CellTest[][], forceScan = false): TableStrategy {
  const width = cells[0]?.length ?? 0;
  const columns: ColumnIndex[] = [];
  const keys: number[] = [];
  const boundaries: number[] = [];
  for (let c = 0; c < width; c++) {
    let kind = columnKind(cells, c);
    const distinct = new Set<unknown>();
    const rowsPerKey = new Map<unknown, number>();
    let anyRows = 0;
    for (const row of cells) {
      const test = row[c];
      if (test.kind === 'equal') distinct.add(test.value);
      else if (test.kind === 'oneOf') for (const v of test.values) distinct.add(v);
      else if (test.kind === 'compare') distinct.add(test.value);
      else if (test.kind === 'range') distinct.add(test.low).add(test.high);
      else if (test.kind === 'any') anyRows++;
      if (test.kind === 'equal') rowsPerKey.set(test.value, (rowsPerKey.get(test.value) ?? 0) + 1);
      if (test.kind === 'oneOf') for (const v of test.values) rowsPerKey.set(v, (rowsPerKey.get(v) ?? 0) + 1);
    }
    // A value that leaves more than half of the rows as candidates does not narrow the search enough to pay for a level.
    let largest = 0;
    for (const count of rowsPerKey.values()) largest = Math.max(largest, count);
    if (kind === 'hash' && anyRows + largest > cells.length / 2) kind = 'scan';
    columns.push(kind);
    keys.push(kind === 'hash' ? distinct.size : 0);
    boundaries.push(kind === 'range' ? distinct.size : 0);
  }
  if (forceScan || cells.length <= SMALL_TABLE_ROWS) return { columns: columns.map(() => 'scan'), hashColumns: [], rangeColumn: -1 };
  const hashColumns = columns
    .map((kind, c) => c)
    .filter((c) => columns[c] === 'hash')
    .sort((a, b) => keys[b] - keys[a] || a - b)
    .slice(0, MAX_HASH_COLUMNS);
  let rangeColumn = -1;
  columns.forEach((kind, c) => {
    if (kind === 'range' && (rangeColumn < 0 || boundaries[c] > boundaries[rangeColumn])) rangeColumn = c;
  });
  return { columns, hashColumns, rangeColumn };
}

function columnKind(cells: readonly CellTest[][], c: number): ColumnIndex {
  let hash = true;
  let range = true;
  let constrained = false;
  for (const row of cells) {
    const test = row[c];
    if (test.kind === 'any') continue;
    constrained = true;
    const isNumberEqual = test.kind === 'equal' && typeof test.value === 'number';
    if (test.kind !== 'equal' && test.kind !== 'oneOf') hash = false;
    const numericRange = (test.kind === 'compare' && typeof test.value === 'number') ||
      (test.kind === 'range' && typeof test.low === 'number');
    if (!numericRange && !isNumberEqual) range = false;
    if (!hash && !range) return 'scan';
  }
  if (!constrained) return 'scan';
  return hash ? 'hash' : 'range';
}
