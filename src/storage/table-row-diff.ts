/**
 * Which rows of a rule's decision table changed between two versions of
 * the rule, so that a reviewer of a 2,000-row table sees the three rows
 * that moved rather than two whole tables (docs/api.md, "GET
 * /api/v1/contexts/{context}/diff").
 *
 * Rows are matched in three passes, linear in the rows (Maps keyed by a
 * row's JSON), never a quadratic alignment: the common head and tail stay
 * unchanged; in between, a row whose cells and outputs are both found on
 * the other side moved, a row whose cells are found with other outputs
 * changed, and the rest were added (on the `to` side) or removed (on the
 * `from` side). Under hit policy `first` a move changes which row answers,
 * so moves are reported too.
 */

/** One row's change: its path on the `to` side (on the `from` side for a removed row). */
export interface TableRowChange {
  change: 'added' | 'removed' | 'changed' | 'moved';
  /** `table.rows[12]`. */
  path: string;
  /** For a changed or moved row: where it was on the `from` side. */
  fromPath?: string;
}

/** At most this many row changes are listed per rule; a table rewritten whole is better read as its two versions. */
export const MAX_TABLE_ROW_CHANGES = 1000;

export interface TableRowDiff {
  rows: TableRowChange[];
  /** True when more rows changed than MAX_TABLE_ROW_CHANGES and the list stops there. */
  truncated: boolean;
}

/**
 * The row changes from one table to another; undefined when either side is
 * not a table with rows (a table added or removed whole is a field change).
 *
 * @example
 * diffTableRows({ rows: [{ when: ['1'] }] }, { rows: [{ when: ['1'] }, { when: ['2'] }] });
 * // { rows: [{ change: 'added', path: 'table.rows[1]' }], truncated: false }
 */
export function diffTableRows(from: unknown, to: unknown): TableRowDiff | undefined {
  const before = rowsOf(from);
  const after = rowsOf(to);
  if (before === undefined || after === undefined) return undefined;
  const a = before.map(rowKey);
  const b = after.map(rowKey);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;

  // The unmatched middle of `from`, by whole row and by cells, each key's indexes in order.
  const byRow = new Map<string, IndexQueue>();
  const byCells = new Map<string, IndexQueue>();
  for (let i = head; i < a.length - tail; i++) {
    push(byRow, a[i], i);
    push(byCells, cellsKey(before[i]), i);
  }
  const used = new Set<number>();
  const changes: Array<TableRowChange & { order: number }> = [];
  const pending: number[] = [];
  const kept: Array<{ from: number; to: number }> = [];
  for (let j = head; j < b.length - tail; j++) {
    const same = take(byRow.get(b[j]), used);
    if (same === undefined) pending.push(j);
    else kept.push({ from: same, to: j });
  }
  // Rows found whole stay in place when they keep their order among each other (the longest such run); the others moved.
  const inOrder = longestIncreasing(kept.map((pair) => pair.from));
  kept.forEach((pair, k) => {
    if (!inOrder.has(k)) changes.push({ change: 'moved', path: rowPath(pair.to), fromPath: rowPath(pair.from), order: pair.to });
  });
  for (const j of pending) {
    const similar = take(byCells.get(cellsKey(after[j])), used);
    if (similar === undefined) changes.push({ change: 'added', path: rowPath(j), order: j });
    else changes.push({ change: 'changed', path: rowPath(j), fromPath: rowPath(similar), order: j });
  }
  for (let i = head; i < a.length - tail; i++) {
    if (!used.has(i)) changes.push({ change: 'removed', path: rowPath(i), order: i - 0.5 });
  }
  changes.sort((x, y) => x.order - y.order);
  const rows = changes.slice(0, MAX_TABLE_ROW_CHANGES).map(({ order: _order, ...change }) => change);
  return { rows, truncated: changes.length > MAX_TABLE_ROW_CHANGES };
}

function rowsOf(table: unknown): unknown[] | undefined {
  if (typeof table !== 'object' || table === null) return undefined;
  const rows = (table as { rows?: unknown }).rows;
  return Array.isArray(rows) ? rows : undefined;
}

function rowKey(row: unknown): string {
  return JSON.stringify(row) ?? 'undefined';
}

function cellsKey(row: unknown): string {
  return typeof row === 'object' && row !== null ? JSON.stringify((row as { when?: unknown }).when) ?? 'undefined' : rowKey(row);
}

function rowPath(index: number): string {
  return `table.rows[${index}]`;
}

/** Row indexes with the same key, in order, and how many of them were looked at. */
interface IndexQueue {
  indexes: number[];
  next: number;
}

function push(map: Map<string, IndexQueue>, key: string, index: number): void {
  const queue = map.get(key);
  if (queue === undefined) map.set(key, { indexes: [index], next: 0 });
  else queue.indexes.push(index);
}

/** The first index of the queue not used yet, now used; each queue is consumed from the front, once. */
function take(queue: IndexQueue | undefined, used: Set<number>): number | undefined {
  while (queue !== undefined && queue.next < queue.indexes.length) {
    const index = queue.indexes[queue.next++];
    if (!used.has(index)) {
      used.add(index);
      return index;
    }
  }
  return undefined;
}

/** The positions of one longest strictly increasing subsequence of `values` (patience sorting, n log n). */
function longestIncreasing(values: readonly number[]): Set<number> {
  const tails: number[] = []; // position of the last value of the best run of each length
  const previous: number[] = new Array<number>(values.length).fill(-1);
  values.forEach((value, position) => {
    let low = 0;
    let high = tails.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (values[tails[middle]] < value) low = middle + 1;
      else high = middle;
    }
    if (low > 0) previous[position] = tails[low - 1];
    tails[low] = position;
  });
  const run = new Set<number>();
  for (let position = tails.length > 0 ? tails[tails.length - 1] : -1; position >= 0; position = previous[position]) run.add(position);
  return run;
}
