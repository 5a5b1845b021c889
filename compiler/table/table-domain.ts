/**
 * The value space of one column of a decision table, cut into regions on
 * which every cell of the column says the same thing: the "interval
 * boundaries" of Calvanese et al., "Semantics and Analysis of DMN Decision
 * Tables" (arXiv 1603.07466), extended to this language's values.
 *
 * - Numbers (dates are numbers) and strings: each literal a cell names is a
 *   point; when some cell orders that kind (`<`, a range), the open
 *   intervals between the points, below the first and above the last are
 *   regions too; otherwise one region holds every other value of the kind.
 * - true and false are a region each; arrays and objects one (a cell only
 *   ever tells them apart from literals).
 * - A missing value (absent or null: cells treat them alike) is one region.
 *
 * Each region carries one value that stands for all of it. Which kinds the
 * column may hold comes from the payload schema when it declares the
 * input's path (its `enum`, when it has one, gives the regions outright);
 * otherwise every kind is there, and a region of a kind no literal of the
 * column has is marked `odd`: real, but a witness drawn from it (a text
 * where the cells compare numbers) says less than one from the others.
 *
 * Per distinct cell test, which regions it matches: 0 no, 1 yes, 2 unknown
 * (an expression cell, which the analysis does not evaluate).
 */
import { ARRAY, BOOLEAN, NUMBER, OBJECT, STRING, typeOfValue, type TypeSet } from '../analysis/value-types.ts';
import type { CellTest, PlainTest, Scalar } from './cell-test.ts';
import { cellMatches } from './table-index.ts';

export interface Region {
  /** The value standing for the region; undefined for a missing value. */
  value: unknown;
  /** A region of a kind the column's literals do not have, or the missing value. */
  odd: boolean;
}

export const NO = 0;
export const YES = 1;
export const UNKNOWN = 2;

export interface ColumnDomain {
  regions: Region[];
  /** Per distinct test of the column, per region: NO, YES or UNKNOWN. */
  matches: Map<CellTest, Uint8Array>;
  /** Per distinct test, the region indexes (ascending, never 0) where its answer changes. */
  changes: Map<CellTest, Int32Array>;
}

export interface DomainSource {
  /** Kinds the payload schema declares at the input's path (without undefined and null); undefined when it says nothing. */
  declaredTypes?: TypeSet;
  /** The values the payload schema's `enum` (or `const`) allows there. */
  allowed?: readonly unknown[];
}

/** The literals a plain test names. */
function literalsOf(test: PlainTest): Scalar[] {
  switch (test.kind) {
    case 'equal':
    case 'notEqual':
      return [test.value];
    case 'oneOf':
      return test.values;
    case 'compare':
      return [test.value];
    case 'range':
      return [test.low, test.high];
  }
}

function plainOf(test: CellTest): PlainTest | undefined {
  if (test.kind === 'any' || test.kind === 'expression') return undefined;
  return test.kind === 'not' ? test.test : test;
}

/** The literals and whether numbers and strings are ordered, over a column's distinct tests. */
function survey(tests: Iterable<CellTest>): { numbers: Set<number>; strings: Set<string>; kinds: TypeSet; orderedNumbers: boolean; orderedStrings: boolean } {
  const numbers = new Set<number>();
  const strings = new Set<string>();
  let kinds = 0;
  let orderedNumbers = false;
  let orderedStrings = false;
  for (const test of tests) {
    const plain = plainOf(test);
    if (plain === undefined) continue;
    const ordered = plain.kind === 'compare' || plain.kind === 'range';
    for (const value of literalsOf(plain)) {
      if (typeof value === 'number') {
        numbers.add(value);
        orderedNumbers ||= ordered;
      } else if (typeof value === 'string') {
        strings.add(value);
        orderedStrings ||= ordered;
      }
      if (value !== null) kinds |= typeOfValue(value);
    }
  }
  return { numbers, strings, kinds, orderedNumbers, orderedStrings };
}

/** A number region per point, and the open intervals around them when ordered. */
function numberRegions(points: number[], ordered: boolean, odd: boolean): Region[] {
  points.sort((a, b) => a - b);
  if (points.length === 0) return [{ value: 0, odd }];
  if (!ordered) {
    let other = Math.max(...points) + 1;
    if (!Number.isFinite(other)) other = Math.min(...points) - 1;
    return [...points.map((value) => ({ value, odd })), { value: other, odd }];
  }
  const regions: Region[] = [];
  const below = points[0] - 1;
  if (below < points[0]) regions.push({ value: below, odd });
  points.forEach((point, i) => {
    regions.push({ value: point, odd });
    const next = points[i + 1];
    const between = next === undefined ? point + 1 : point / 2 + next / 2;
    if (between > point && (next === undefined || between < next)) regions.push({ value: between, odd });
  });
  return regions;
}

/** A string strictly between `low` and `high` (undefined: above `low`), preferring a readable one. */
function stringAfter(low: string, high: string | undefined): string | undefined {
  for (const candidate of [`${low} `, `${low}\u0000`]) {
    if (candidate > low && (high === undefined || candidate < high)) return candidate;
  }
  return undefined;
}

function stringRegions(points: string[], ordered: boolean, odd: boolean): Region[] {
  points.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (points.length === 0) return [{ value: '', odd }];
  if (!ordered) {
    let other = 'other';
    while (points.includes(other)) other += '_';
    return [...points.map((value) => ({ value, odd })), { value: other, odd }];
  }
  const regions: Region[] = [];
  if (points[0] !== '') regions.push({ value: '', odd });
  points.forEach((point, i) => {
    regions.push({ value: point, odd });
    const between = stringAfter(point, points[i + 1]);
    if (between !== undefined) regions.push({ value: between, odd });
  });
  return regions;
}

/**
 * The regions of one column and what each of its distinct tests says of them.
 *
 * @example
 * columnDomain([{ kind: 'compare', op: '>=', value: 700 }], {}).regions.map((r) => r.value);
 * // [699, 700, 701, '', true, false, {}, undefined]
 */
export function columnDomain(tests: readonly CellTest[], source: DomainSource): ColumnDomain {
  const distinct = [...new Set(tests)];
  const { numbers, strings, kinds, orderedNumbers, orderedStrings } = survey(distinct);
  let regions: Region[];
  if (source.allowed !== undefined) {
    regions = source.allowed.filter((value) => value !== null).map((value) => ({ value, odd: false }));
  } else {
    const present = source.declaredTypes ?? (NUMBER | STRING | BOOLEAN | ARRAY | OBJECT);
    // The kinds a witness should have: those the schema declares, else those the column's literals have.
    const expected = source.declaredTypes !== undefined || kinds === 0 ? present : kinds;
    const oddKind = (kind: TypeSet): boolean => (expected & kind) === 0;
    regions = [];
    const kindsInOrder: TypeSet[] = [...[NUMBER, STRING, BOOLEAN].filter((k) => !oddKind(k)), ...[NUMBER, STRING, BOOLEAN].filter(oddKind)];
    for (const kind of kindsInOrder) {
      if ((present & kind) === 0) continue;
      if (kind === NUMBER) regions.push(...numberRegions([...numbers], orderedNumbers, oddKind(NUMBER)));
      else if (kind === STRING) regions.push(...stringRegions([...strings], orderedStrings, oddKind(STRING)));
      else regions.push({ value: true, odd: oddKind(BOOLEAN) }, { value: false, odd: oddKind(BOOLEAN) });
    }
    if ((present & (ARRAY | OBJECT)) !== 0) regions.push({ value: {}, odd: oddKind(ARRAY | OBJECT) });
  }
  regions.push({ value: undefined, odd: true });

  const matches = new Map<CellTest, Uint8Array>();
  const changes = new Map<CellTest, Int32Array>();
  for (const test of distinct) {
    const answers = new Uint8Array(regions.length);
    const cut: number[] = [];
    regions.forEach((region, g) => {
      answers[g] = test.kind === 'expression' ? UNKNOWN : cellMatches(test, region.value, null, undefined, 0) ? YES : NO;
      if (g > 0 && answers[g] !== answers[g - 1]) cut.push(g);
    });
    matches.set(test, answers);
    changes.set(test, Int32Array.from(cut));
  }
  return { regions, matches, changes };
}

/** How many region answers a column's domain takes to build: the analysis counts it against its budget. */
export function domainCost(tests: readonly CellTest[], source: DomainSource): number {
  const distinct = new Set(tests);
  const { numbers, strings } = survey(distinct);
  const regions = source.allowed?.length ?? 2 * (numbers.size + strings.size) + 8;
  return distinct.size * regions;
}
