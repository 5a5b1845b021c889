/**
 * The alphabet of a DFA: code points grouped into classes that no set of
 * the pattern tells apart (two code points share a class when every set
 * holds both or neither). A pattern of ASCII classes has a handful of
 * classes, whatever the size of Unicode, so transition rows stay short.
 */
import type { CodePointSet } from './code-point-set.ts';
import { MAX_CODE_POINT } from './code-point-set.ts';

/** Code points below this are looked up in a direct table by the matcher. */
export const DIRECT_LIMIT = 128;

export interface Alphabet {
  /** Number of classes. */
  classCount: number;
  /** For each input set, the classes it holds, ascending. */
  classesOf: number[][];
  /** Class of each code point below DIRECT_LIMIT. */
  directClasses: number[];
  /** From DIRECT_LIMIT up: ranges as their first code point, ascending, and each range's class. */
  rangeStarts: number[];
  rangeClasses: number[];
}

/**
 * Partitions all code points by membership in `sets`.
 *
 * @example
 * const { classCount, classesOf } = partitionAlphabet([CodePointSet.of([0x61, 0x7a]), CodePointSet.single(0x61)]);
 * // classCount 3, numbered by first code point: everything else 0, {a} 1, [b-z] 2; classesOf [[1, 2], [1]]
 */
export function partitionAlphabet(sets: readonly CodePointSet[]): Alphabet {
  // Elementary intervals: cut wherever some set starts or stops.
  const cuts = new Set<number>([0, DIRECT_LIMIT]);
  for (const set of sets) {
    for (let i = 0; i < set.ranges.length; i += 2) {
      cuts.add(set.ranges[i]);
      if (set.ranges[i + 1] < MAX_CODE_POINT) cuts.add(set.ranges[i + 1] + 1);
    }
  }
  const starts = [...cuts].sort((a, b) => a - b);
  const members: number[][] = starts.map(() => []);
  sets.forEach((set, setIndex) => {
    for (let i = 0; i < set.ranges.length; i += 2) {
      for (let k = lastStartAtOrBelow(starts, set.ranges[i]); k < starts.length && starts[k] <= set.ranges[i + 1]; k++) {
        members[k].push(setIndex);
      }
    }
  });

  const classOfSignature = new Map<string, number>();
  const intervalClass = members.map((m) => {
    const signature = m.join(',');
    let id = classOfSignature.get(signature);
    if (id === undefined) classOfSignature.set(signature, (id = classOfSignature.size));
    return id;
  });

  const classesOf: number[][] = sets.map(() => []);
  members.forEach((m, k) => {
    for (const setIndex of m) classesOf[setIndex].push(intervalClass[k]);
  });

  const directClasses: number[] = [];
  for (let cp = 0; cp < DIRECT_LIMIT; cp++) directClasses.push(intervalClass[lastStartAtOrBelow(starts, cp)]);
  const rangeStarts: number[] = [];
  const rangeClasses: number[] = [];
  for (let k = starts.indexOf(DIRECT_LIMIT); k < starts.length; k++) {
    if (rangeClasses.length > 0 && rangeClasses[rangeClasses.length - 1] === intervalClass[k]) continue;
    rangeStarts.push(starts[k]);
    rangeClasses.push(intervalClass[k]);
  }
  return {
    classCount: classOfSignature.size,
    classesOf: classesOf.map((list) => [...new Set(list)].sort((a, b) => a - b)),
    directClasses,
    rangeStarts,
    rangeClasses,
  };
}

function lastStartAtOrBelow(starts: readonly number[], codePoint: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= codePoint) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
