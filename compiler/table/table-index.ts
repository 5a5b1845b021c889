/**
 * The run-time half of decision tables: the index of one table, built once
 * when its validator is instantiated (runtime.ts `table`), and the search
 * that generated code calls per evaluation.
 *
 * The index follows the strategy the compiler chose (table-strategy.ts): a
 * tree of Maps over the hash columns, whose leaves hold their rows in row
 * order, each leaf optionally indexing the range column by its sorted
 * boundaries. A lookup follows the value's branch and the any-value branch
 * at each level, so it reaches a few leaves whatever the table's size; in
 * a leaf it binary-searches the range column's boundaries, then checks the
 * other cells of the candidate rows in order. So the candidate sets of the
 * columns are intersected without visiting the rows that differ in an
 * indexed column.
 *
 * Like the rest of the runtime it is total: any JSON value, undefined and
 * NaN are valid inputs, and a search never throws (expression cells are
 * generated code, which does not throw either).
 *
 * Pure and self-contained (only types imported) so that standalone modules
 * bundle it with runtime.ts.
 */
import type { CellTest, PlainTest } from './cell-test.ts';
import type { HitPolicy } from './table-definition.ts';
import type { TableStrategy } from './table-strategy.ts';

/** What generated code hands to `rt.table`, as JSON. */
export interface TableSpec {
  hitPolicy: HitPolicy;
  /** The table's distinct tests; cells name them by position. */
  tests: CellTest[];
  /** Row after row, one test number per input: the cell of row r and input c is tests[cells[r * width + c]]. */
  cells: number[];
  width: number;
  outputs: string[];
  /** Per row, one value per output. */
  then: unknown[][];
  /** The outputs of `noMatch: { then }`, else null. */
  otherwise: unknown[] | null;
  strategy: TableStrategy;
}

/** The table's expression cells, generated as one function: `(id, $cell, payload, now) => boolean`. */
export type ExpressionCells = (id: number, cell: unknown, payload: unknown, now: number) => boolean;

/** Lists of rows packed in one array: list i is entries[start[i]] up to entries[start[i + 1]], ascending. */
interface PackedLists {
  start: Int32Array;
  entries: Int32Array;
}

interface RangeIndex {
  /** Distinct boundaries, ascending: segment 2i+1 is the point bounds[i], 2i the open interval before it. */
  bounds: Float64Array;
  /** Per segment, the rows whose range cell covers it. */
  segments: PackedLists;
  /** The rows whose range cell is `-`, ascending. */
  any: Int32Array;
}

interface Leaf {
  leaf: true;
  rows: Int32Array;
  range: RangeIndex | null;
}

interface Branch {
  leaf: false;
  byValue: Map<unknown, Node>;
  any: Node | null;
}

type Node = Leaf | Branch;

function pack(lists: readonly number[][]): PackedLists {
  const start = new Int32Array(lists.length + 1);
  let total = 0;
  lists.forEach((list, i) => {
    start[i] = total;
    total += list.length;
  });
  start[lists.length] = total;
  const entries = new Int32Array(total);
  lists.forEach((list, i) => entries.set(list, start[i]));
  return { start, entries };
}

const NONE = 0x7fffffff;
/** A leaf's range index may hold this many row entries per row before it is dropped for a scan (wide, overlapping ranges). */
const RANGE_ENTRIES_PER_ROW = 16;
const freeze = Object.freeze;
const isArray = Array.isArray;

/** Does `test` (not an expression) hold for a present value `v`? */
function plainMatches(test: PlainTest, v: unknown): boolean {
  switch (test.kind) {
    case 'equal':
      return v === test.value;
    case 'oneOf':
      return test.values.includes(v as string);
    case 'notEqual':
      // `!=` of the language: deep inequality, and a value is never equal to a literal unless identical.
      return v !== test.value;
    case 'compare': {
      // Two numbers or two strings compare (typed like the language's `<`); the casts only silence the union.
      const x = test.value as number;
      if (typeof v !== typeof x) return false;
      switch (test.op) {
        case '<':
          return (v as number) < x;
        case '<=':
          return (v as number) <= x;
        case '>':
          return (v as number) > x;
        case '>=':
          return (v as number) >= x;
      }
      return false;
    }
    case 'range': {
      const low = test.low as number;
      const high = test.high as number;
      if (typeof v !== typeof low) return false;
      return (test.lowIncluded ? (v as number) >= low : (v as number) > low) &&
        (test.highIncluded ? (v as number) <= high : (v as number) < high);
    }
  }
}

/** Does a cell match `v`? A missing value (undefined or null) matches only `-` and null. */
export function cellMatches(test: CellTest, v: unknown, cells: ExpressionCells | null, payload: unknown, now: number): boolean {
  if (test.kind === 'any') return true;
  if (v === undefined || v === null) {
    return (test.kind === 'equal' && test.value === null) || (test.kind === 'oneOf' && test.values.includes(null));
  }
  if (test.kind === 'not') return !plainMatches(test.test, v);
  if (test.kind === 'expression') return cells !== null && cells(test.id, v, payload, now);
  return plainMatches(test, v);
}

function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object' || Object.isFrozen(v)) continue;
    freeze(v);
    for (const key of Object.keys(v)) stack.push((v as Record<string, unknown>)[key]);
  }
  return value;
}

/** One table's index. `values` is filled by generated code, one input a slot, before each search. */
export class TableIndex {
  /** The inputs of the search being made; cleared after it, so that no payload is kept. */
  readonly values: unknown[];
  /** `$row` of each row: its outputs by name, frozen. */
  readonly rows: readonly Readonly<Record<string, unknown>>[];
  /** `$row` of `noMatch: { then }`, else null. */
  readonly otherwise: Readonly<Record<string, unknown>> | null;
  readonly #tests: CellTest[];
  readonly #cells: Int32Array;
  readonly #width: number;
  readonly #expressions: ExpressionCells | null;
  readonly #hashColumns: number[];
  readonly #rangeColumn: number;
  /** Per row, the columns a candidate still has to be checked on (not `-`, not indexed). */
  readonly #residual: PackedLists;
  /** Per row, a key its outputs share with every row of equal outputs (hit policy `any`). */
  readonly #outputKey: Int32Array;
  readonly #root: Node;

  constructor(spec: TableSpec, expressions: ExpressionCells | null) {
    const { strategy, width } = spec;
    this.#tests = spec.tests;
    this.#cells = Int32Array.from(spec.cells);
    this.#width = width;
    this.#expressions = expressions;
    this.#hashColumns = strategy.hashColumns;
    this.#rangeColumn = strategy.rangeColumn;
    this.values = new Array<unknown>(width).fill(undefined);
    const rowCount = spec.then.length;
    const indexed = new Set([...strategy.hashColumns, strategy.rangeColumn]);
    const residual: number[][] = [];
    for (let r = 0; r < rowCount; r++) {
      const columns: number[] = [];
      for (let c = 0; c < width; c++) if (!indexed.has(c) && this.#test(r, c).kind !== 'any') columns.push(c);
      residual.push(columns);
    }
    this.#residual = pack(residual);
    const outputsOf = (then: unknown[]): Record<string, unknown> => {
      const row: Record<string, unknown> = {};
      spec.outputs.forEach((name, i) => {
        row[name] = then[i];
      });
      return deepFreeze(row);
    };
    this.rows = freeze(spec.then.map(outputsOf));
    this.otherwise = spec.otherwise === null ? null : outputsOf(spec.otherwise);
    const keys = new Map<string, number>();
    this.#outputKey = Int32Array.from(spec.then.map((then) => {
      // Equal outputs are equal values: objects whatever the order of their keys.
      const json = JSON.stringify(then, sortedKeys);
      let key = keys.get(json);
      if (key === undefined) keys.set(json, (key = keys.size));
      return key;
    }));
    const all: number[] = [];
    for (let r = 0; r < rowCount; r++) all.push(r);
    this.#root = this.#build(all, 0);
  }

  #test(r: number, c: number): CellTest {
    return this.#tests[this.#cells[r * this.#width + c]];
  }

  #build(rows: number[], level: number): Node {
    if (level === this.#hashColumns.length) {
      return { leaf: true, rows: Int32Array.from(rows), range: this.#rangeIndex(rows) };
    }
    const c = this.#hashColumns[level];
    const byKey = new Map<unknown, number[]>();
    const any: number[] = [];
    const add = (key: unknown, r: number): void => {
      const list = byKey.get(key);
      if (list === undefined) byKey.set(key, [r]);
      else list.push(r);
    };
    for (const r of rows) {
      const test = this.#test(r, c);
      if (test.kind === 'equal') add(test.value, r);
      else if (test.kind === 'oneOf') for (const v of test.values) add(v, r);
      else any.push(r);
    }
    const byValue = new Map<unknown, Node>();
    for (const [key, list] of byKey) byValue.set(key, this.#build(list, level + 1));
    return { leaf: false, byValue, any: any.length === 0 ? null : this.#build(any, level + 1) };
  }

  /** The range column's index of one leaf, or null where a scan of the leaf is as good (few rows, wide ranges). */
  #rangeIndex(rows: number[]): RangeIndex | null {
    const c = this.#rangeColumn;
    if (c < 0 || rows.length <= 8) return null;
    const distinct = new Set<number>();
    for (const r of rows) {
      const test = this.#test(r, c);
      if (test.kind === 'compare' || test.kind === 'equal') distinct.add(test.value as number);
      else if (test.kind === 'range') distinct.add(test.low as number).add(test.high as number);
    }
    const bounds = Float64Array.from([...distinct].sort((a, b) => a - b));
    const at = (x: unknown): number => boundAt(bounds, x as number);
    const last = 2 * bounds.length;
    const segments: number[][] = [];
    for (let s = 0; s <= last; s++) segments.push([]);
    const any: number[] = [];
    let budget = rows.length * RANGE_ENTRIES_PER_ROW;
    for (const r of rows) {
      const test = this.#test(r, c);
      let from: number;
      let to: number;
      switch (test.kind) {
        case 'equal':
          from = to = 2 * at(test.value) + 1;
          break;
        case 'compare': {
          const i = at(test.value);
          if (test.op === '<') [from, to] = [0, 2 * i];
          else if (test.op === '<=') [from, to] = [0, 2 * i + 1];
          else if (test.op === '>') [from, to] = [2 * i + 2, last];
          else [from, to] = [2 * i + 1, last];
          break;
        }
        case 'range':
          from = test.lowIncluded ? 2 * at(test.low) + 1 : 2 * at(test.low) + 2;
          to = test.highIncluded ? 2 * at(test.high) + 1 : 2 * at(test.high);
          break;
        default:
          any.push(r);
          continue;
      }
      budget -= to - from + 1;
      if (budget < 0) return null;
      for (let s = from; s <= to; s++) segments[s].push(r);
    }
    return { bounds, segments: pack(segments), any: Int32Array.from(any) };
  }

  /** Do row r's cells outside the index (and the range cell, where the leaf does not index it) match? */
  #check(r: number, rangeChecked: boolean, payload: unknown, now: number): boolean {
    const { start, entries } = this.#residual;
    const values = this.values;
    for (let k = start[r], end = start[r + 1]; k < end; k++) {
      const c = entries[k];
      if (!cellMatches(this.#test(r, c), values[c], this.#expressions, payload, now)) return false;
    }
    const c = this.#rangeColumn;
    return rangeChecked || c < 0 || cellMatches(this.#test(r, c), values[c], null, payload, now);
  }

  /** The first row of list[from..to) below `best` that matches, else `best`. */
  #firstIn(list: Int32Array, from: number, to: number, rangeChecked: boolean, best: number, payload: unknown, now: number): number {
    for (let i = from; i < to; i++) {
      const r = list[i];
      if (r >= best) return best;
      if (this.#check(r, rangeChecked, payload, now)) return r;
    }
    return best;
  }

  /** The segment of the range column's value in a leaf, or -1 when only its `-` rows can match (not a number). */
  #segment(range: RangeIndex): number {
    const v = this.values[this.#rangeColumn];
    if (typeof v !== 'number' || v !== v) return -1;
    const i = boundAt(range.bounds, v);
    return i < range.bounds.length && range.bounds[i] === v ? 2 * i + 1 : 2 * i;
  }

  #first(node: Node, level: number, best: number, payload: unknown, now: number): number {
    if (!node.leaf) {
      const v = this.values[this.#hashColumns[level]];
      const child = node.byValue.get(v === undefined ? null : v);
      if (child !== undefined) best = this.#first(child, level + 1, best, payload, now);
      return node.any === null ? best : this.#first(node.any, level + 1, best, payload, now);
    }
    const range = node.range;
    if (range === null) return this.#firstIn(node.rows, 0, node.rows.length, false, best, payload, now);
    best = this.#firstIn(range.any, 0, range.any.length, true, best, payload, now);
    const segment = this.#segment(range);
    if (segment < 0) return best;
    const { start, entries } = range.segments;
    return this.#firstIn(entries, start[segment], start[segment + 1], true, best, payload, now);
  }

  #all(node: Node, level: number, found: number[], payload: unknown, now: number): void {
    if (!node.leaf) {
      const v = this.values[this.#hashColumns[level]];
      const child = node.byValue.get(v === undefined ? null : v);
      if (child !== undefined) this.#all(child, level + 1, found, payload, now);
      if (node.any !== null) this.#all(node.any, level + 1, found, payload, now);
      return;
    }
    const collect = (list: Int32Array, from: number, to: number, rangeChecked: boolean): void => {
      for (let i = from; i < to; i++) if (this.#check(list[i], rangeChecked, payload, now)) found.push(list[i]);
    };
    const range = node.range;
    if (range === null) {
      collect(node.rows, 0, node.rows.length, false);
      return;
    }
    collect(range.any, 0, range.any.length, true);
    const segment = this.#segment(range);
    if (segment >= 0) collect(range.segments.entries, range.segments.start[segment], range.segments.start[segment + 1], true);
  }

  /**
   * The first matching row in row order for the current `values`, or -1.
   *
   * @example
   * t.values[0] = 'auto'; t.values[1] = 'US'; t.first(payload, now); // 0
   */
  first(payload: unknown, now: number): number {
    const best = this.#first(this.#root, 0, NONE, payload, now);
    this.values.fill(undefined);
    return best === NONE ? -1 : best;
  }

  /** Every matching row for the current `values`, in row order. */
  all(payload: unknown, now: number): number[] {
    const found: number[] = [];
    this.#all(this.#root, 0, found, payload, now);
    this.values.fill(undefined);
    // A row sits in one leaf and one list of it: sorting merges the lists, there are no duplicates to remove.
    if (found.length > 1) found.sort((a, b) => a - b);
    return found;
  }

  /**
   * For an explanation when no row matches: the first row that matches the
   * most cells of the current `values`, or -1 for a table without rows. A
   * scan of every cell; the explaining variant calls it, validations never
   * do. Leaves `values` as they are, for the search that follows.
   */
  closest(payload: unknown, now: number): number {
    let best = -1;
    let bestCount = -1;
    const rowCount = this.rows.length;
    for (let r = 0; r < rowCount; r++) {
      let count = 0;
      for (let c = 0; c < this.#width; c++) if (cellMatches(this.#test(r, c), this.values[c], this.#expressions, payload, now)) count++;
      if (count > bestCount) {
        best = r;
        bestCount = count;
      }
    }
    return best;
  }

  /** The first of `matches` whose outputs differ from the first's, or -1 (hit policy `any`). */
  differing(matches: readonly number[]): number {
    const key = this.#outputKey[matches[0]];
    for (let i = 1; i < matches.length; i++) if (this.#outputKey[matches[i]] !== key) return matches[i];
    return -1;
  }
}

/** A JSON.stringify replacer that writes an object's keys in sorted order. */
function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || isArray(value)) return value;
  const record = value as Record<string, unknown>;
  return Object.fromEntries(Object.keys(record).sort().map((key) => [key, record[key]]));
}

/** How many of the ascending `bounds` are below `x`. */
function boundAt(bounds: Float64Array, x: number): number {
  let lo = 0;
  let hi = bounds.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (bounds[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The index of one table, from its spec's JSON (a string literal in the
 * generated code) and its expression cells.
 */
export function table(json: string, expressions: ExpressionCells | null): TableIndex {
  const spec = JSON.parse(json) as TableSpec;
  if (!isArray(spec.cells) || !isArray(spec.tests)) throw new TypeError('table: a spec has tests and cells');
  return new TableIndex(spec, expressions);
}
