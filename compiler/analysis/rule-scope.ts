/**
 * What the analysis knows of a value, and what the names of one rule
 * (`$`, `$value`, `$item`, `$index`, `$expected`) stand for.
 */
import { formatPath, type PathSegment } from '../paths.ts';
import { closestKey, closestPath } from './closest-path.ts';
import type { PathLookup, PayloadSchema } from './payload-schema-paths.ts';
import { ANY, FIELD_VALUE, JSON_VALUE, typeOfValue, type TypeSet } from './value-types.ts';
import type { UsageEvidence } from './usage-evidence.ts';

/** A payload path with what the payload schema says of it. */
export interface Place {
  segments: PathSegment[];
  /** The path as text (`items[].qty`): the key of its uses. */
  key: string;
  lookup: PathLookup;
}

/** What the analysis knows of one value. */
export interface Value {
  types: TypeSet;
  /** False when the value is the same for every payload (no payload, element or clock is read). */
  depends: boolean;
  /** The value itself, when it is a constant. */
  known?: { value: unknown };
  /** The value is the payload's value at this place (or undefined, when absent). */
  place?: Place;
  /** The value is an array of the payload's values at this place (`items.filter(...)`). */
  elements?: Place;
  /** The kinds of the elements, when the value is an array and they are known. */
  elementTypes?: TypeSet;
}

/** Nothing known; also what follows a reported problem, so that one mistake gives one warning. */
export const UNKNOWN: Value = Object.freeze({ types: ANY, depends: true });

export function constant(value: unknown): Value {
  return { types: typeOfValue(value), depends: false, known: { value } };
}

/** True when the value is the same for every payload. */
export function isConstant(v: Value): boolean {
  return v.known !== undefined || !v.depends;
}

/**
 * Suggestions one rule may have: each scans the keys declared where its
 * path went wrong, so a rule of many unknown paths against a schema of
 * many keys stays cheap to check.
 */
const MAX_SUGGESTIONS = 16;

/** Paths looked up once per rule: a path written in several fields costs one lookup. */
export class PlaceTable {
  readonly schema: PayloadSchema | undefined;
  readonly #places = new Map<string, Place>();
  #suggestionsLeft = MAX_SUGGESTIONS;

  constructor(schema: PayloadSchema | undefined) {
    this.schema = schema;
  }

  at(segments: PathSegment[]): Place {
    const key = formatPath(segments);
    let place = this.#places.get(key);
    if (place === undefined) {
      const lookup: PathLookup = this.schema?.lookup(segments)
        ?? { status: 'open', types: segments.length === 0 ? JSON_VALUE : FIELD_VALUE };
      place = { segments, key, lookup };
      this.#places.set(key, place);
    }
    return place;
  }

  /** The nearest declared path (closest-path.ts), while the rule's suggestions last. */
  closestPath(segments: readonly PathSegment[], from: number): PathSegment[] | undefined {
    if (this.schema === undefined || this.#suggestionsLeft <= 0) return undefined;
    this.#suggestionsLeft--;
    return closestPath(this.schema, segments, from);
  }

  /** The nearest declared top-level key, while the rule's suggestions last. */
  closestTopLevelKey(name: string): string | undefined {
    if (this.schema === undefined || this.#suggestionsLeft <= 0) return undefined;
    this.#suggestionsLeft--;
    return closestKey(name, this.schema.keysAt([]));
  }

  /** The value read at a place: undefined when the schema does not declare it. */
  valueAt(segments: PathSegment[]): Value | undefined {
    const place = this.at(segments);
    return place.lookup.status === 'undeclared' ? undefined : { types: place.lookup.types, depends: true, place };
  }
}

/** The names of one rule, as one field of it sees them. */
export interface RuleScope {
  places: PlaceTable;
  evidence: UsageEvidence;
  payload: Value;
  /** `$value`. */
  value: Value;
  /** `$item` and `$index`; undefined without forEach. */
  item?: Value;
  index?: Value;
  /** `$expected`: the same for every payload, known when the rule gives it. */
  expected: Value;
}
