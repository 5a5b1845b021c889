/**
 * Exact sets of Unicode code points, as sorted, disjoint, non-adjacent
 * inclusive ranges. The linearity checker needs exact intersections (an
 * over-approximation would only cost native admission, never soundness) and
 * the RE2 translator needs exact sets so that RE2 matches what JavaScript's
 * `u`-mode RegExp matches.
 */

/** The largest code point; sets range over `[0, MAX_CODE_POINT]`. */
export const MAX_CODE_POINT = 0x10ffff;

/** An immutable set of code points. */
export class CodePointSet {
  /** Flattened `[lo0, hi0, lo1, hi1, ...]`, sorted, disjoint, never adjacent. */
  readonly ranges: readonly number[];

  private constructor(ranges: readonly number[]) {
    this.ranges = ranges;
  }

  /** The empty set. */
  static readonly EMPTY = new CodePointSet([]);
  /** Every code point, lone surrogates included (they are code points in `u` mode). */
  static readonly ALL = new CodePointSet([0, MAX_CODE_POINT]);

  /**
   * A set from arbitrary inclusive ranges, in any order, overlapping or not.
   *
   * @example
   * CodePointSet.of([0x61, 0x7a], [0x30, 0x39]); // [0-9a-z]
   */
  static of(...pairs: (readonly [number, number])[]): CodePointSet {
    const sorted = pairs.filter(([lo, hi]) => lo <= hi).sort((a, b) => a[0] - b[0]);
    const out: number[] = [];
    for (const [lo, hi] of sorted) {
      const last = out.length - 1;
      if (last > 0 && lo <= out[last] + 1) {
        if (hi > out[last]) out[last] = hi;
      } else {
        out.push(lo, hi);
      }
    }
    return new CodePointSet(out);
  }

  /** A set of one code point. */
  static single(codePoint: number): CodePointSet {
    return new CodePointSet([codePoint, codePoint]);
  }

  /** True when the set has no code point. */
  get isEmpty(): boolean {
    return this.ranges.length === 0;
  }

  /** The code points in this set or in `other`. */
  union(other: CodePointSet): CodePointSet {
    if (other.isEmpty) return this;
    if (this.isEmpty) return other;
    return CodePointSet.of(...this.pairs(), ...other.pairs());
  }

  /** The code points not in this set. */
  complement(): CodePointSet {
    const out: number[] = [];
    let next = 0;
    for (let i = 0; i < this.ranges.length; i += 2) {
      if (this.ranges[i] > next) out.push(next, this.ranges[i] - 1);
      next = this.ranges[i + 1] + 1;
    }
    if (next <= MAX_CODE_POINT) out.push(next, MAX_CODE_POINT);
    return new CodePointSet(out);
  }

  /** True when the code point is in the set. */
  has(codePoint: number): boolean {
    for (let i = 0; i < this.ranges.length; i += 2) {
      if (codePoint < this.ranges[i]) return false;
      if (codePoint <= this.ranges[i + 1]) return true;
    }
    return false;
  }

  /** The ranges as `[lo, hi]` pairs. */
  pairs(): [number, number][] {
    const out: [number, number][] = [];
    for (let i = 0; i < this.ranges.length; i += 2) out.push([this.ranges[i], this.ranges[i + 1]]);
    return out;
  }
}

/**
 * True when no two of the sets share a code point. One sweep over all ranges
 * sorted by their start: the ranges of one set never overlap each other, so
 * any overlap found is between two different sets.
 */
export function pairwiseDisjoint(sets: readonly CodePointSet[]): boolean {
  if (sets.length < 2) return true;
  const all: [number, number][] = [];
  for (const set of sets) all.push(...set.pairs());
  all.sort((a, b) => a[0] - b[0]);
  let reach = -1;
  for (const [lo, hi] of all) {
    if (lo <= reach) return false;
    reach = hi;
  }
  return true;
}
