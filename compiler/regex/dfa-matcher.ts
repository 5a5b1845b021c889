/**
 * The matcher of a DFA built by build-dfa.ts: one loop over the input, one
 * table lookup per code point, so its work is linear in the input whatever
 * the pattern. No imports and no Node built-ins: standalone validator
 * modules bundle this very file, with the tables written as numbers.
 *
 * The input is read as JavaScript reads it under the `u` flag: a lead
 * surrogate followed by a trail surrogate is one code point, any other
 * surrogate is a code point of its own. Only whole code points are
 * consumed, so a match is never tried between the halves of a pair.
 */

/** A DFA as plain numbers (what standalone modules carry). */
export interface DfaTables {
  /** Columns per state: one per character class, then one for the end of the input. */
  columns: number;
  /** Class of each code unit below 128. */
  directClasses: ArrayLike<number>;
  /** From 128 up: ranges as their first code point, ascending (the first is 128), and each range's class. */
  rangeStarts: ArrayLike<number>;
  rangeClasses: ArrayLike<number>;
  /**
   * Row-major, `columns` cells a state: the row offset of the next state,
   * or DEAD or MATCH. The end-of-input column holds only DEAD or MATCH.
   */
  transitions: ArrayLike<number>;
  /** Row offset of the state before the first character, or DEAD or MATCH. */
  start: number;
}

/** No match can follow: the answer is false. */
export const DEAD = -1;
/** A match was found: the answer is true. */
export const MATCH = -2;

/** Work done by one search, for tests: a transition or a range probe is one step. */
export interface StepCounter {
  steps: number;
}

/** What generated code and Ajv call: search semantics, like `RegExp#test`. */
export interface DfaMatcher {
  test(s: string): boolean;
}

interface Compact {
  columns: number;
  endColumn: number;
  directClasses: Uint16Array;
  rangeStarts: Int32Array;
  rangeClasses: Uint16Array;
  transitions: Int32Array;
  start: number;
}

/**
 * A matcher over `tables`; `describe` is what its `toString` returns (Ajv
 * keys its pattern cache by it).
 *
 * @example
 * dfaMatcher(tablesOf('a|b'), '/a|b/u').test('xb'); // true
 */
export function dfaMatcher(tables: DfaTables, describe: string): DfaMatcher {
  const compact = compactTables(tables);
  return Object.freeze({
    test: (s: string): boolean => search(compact, typeof s === 'string' ? s : String(s), undefined),
    toString: (): string => describe,
  });
}

/**
 * Runs the DFA over `s` as `test` does and adds its steps to `counter`.
 *
 * @example
 * const counter = { steps: 0 };
 * dfaSearch(tablesOf('(a|a)*b'), 'aaa', counter); // false; counter.steps === 4 (three characters, then the end)
 */
export function dfaSearch(tables: DfaTables, s: string, counter: StepCounter): boolean {
  return search(compactTables(tables), s, counter);
}

/** Typed arrays as given, copies of anything else. */
function compactTables(tables: DfaTables): Compact {
  return {
    columns: tables.columns,
    endColumn: tables.columns - 1,
    directClasses: tables.directClasses instanceof Uint16Array ? tables.directClasses : Uint16Array.from(tables.directClasses),
    rangeStarts: tables.rangeStarts instanceof Int32Array ? tables.rangeStarts : Int32Array.from(tables.rangeStarts),
    rangeClasses: tables.rangeClasses instanceof Uint16Array ? tables.rangeClasses : Uint16Array.from(tables.rangeClasses),
    transitions: tables.transitions instanceof Int32Array ? tables.transitions : Int32Array.from(tables.transitions),
    start: tables.start,
  };
}

function search(tables: Compact, s: string, counter: StepCounter | undefined): boolean {
  const { directClasses, transitions } = tables;
  const n = s.length;
  let row = tables.start;
  let steps = 0;
  for (let i = 0; i < n && row >= 0; i++) {
    let c = s.charCodeAt(i);
    if (c < 128) {
      row = transitions[row + directClasses[c]];
      steps++;
      continue;
    }
    if (c <= 0xdbff && c >= 0xd800 && i + 1 < n) {
      const trail = s.charCodeAt(i + 1);
      if (trail >= 0xdc00 && trail <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (trail - 0xdc00);
        i++;
      }
    }
    // The class of the last range starting at or below c.
    const { rangeStarts } = tables;
    let lo = 0;
    let hi = rangeStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (rangeStarts[mid] <= c) lo = mid;
      else hi = mid - 1;
      steps++;
    }
    row = transitions[row + tables.rangeClasses[lo]];
    steps++;
  }
  if (row >= 0) {
    row = transitions[row + tables.endColumn];
    steps++;
  }
  if (counter !== undefined) counter.steps += steps;
  return row === MATCH;
}
