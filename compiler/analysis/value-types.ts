/**
 * The type lattice of the save-time analysis: what a value of the rule
 * language may be, as a set of kinds in one bit mask. JSON gives six kinds;
 * the language adds `undefined` (anything absent) and the invalid number
 * (bad arithmetic). A set with every bit says nothing; an empty set means
 * the analysis found no possible value, which callers treat as "nothing
 * known" rather than as a certainty.
 */

export type TypeSet = number;

export const UNDEFINED: TypeSet = 1;
export const NULL: TypeSet = 2;
export const BOOLEAN: TypeSet = 4;
export const NUMBER: TypeSet = 8;
export const STRING: TypeSet = 16;
export const ARRAY: TypeSet = 32;
export const OBJECT: TypeSet = 64;
export const INVALID: TypeSet = 128;

/** What a JSON value may be. */
export const JSON_VALUE: TypeSet = NULL | BOOLEAN | NUMBER | STRING | ARRAY | OBJECT;
/** What reading a payload field may give: a JSON value, or undefined when it is absent. */
export const FIELD_VALUE: TypeSet = JSON_VALUE | UNDEFINED;
/** Anything an expression may produce. */
export const ANY: TypeSet = FIELD_VALUE | INVALID;

/**
 * The kind of one value, as the language sees it (NaN is the invalid number).
 *
 * @example
 * typeOfValue([1]); // ARRAY
 */
export function typeOfValue(value: unknown): TypeSet {
  if (value === undefined) return UNDEFINED;
  if (value === null) return NULL;
  switch (typeof value) {
    case 'boolean':
      return BOOLEAN;
    case 'number':
      return Number.isFinite(value) ? NUMBER : INVALID;
    case 'string':
      return STRING;
    default:
      return Array.isArray(value) ? ARRAY : OBJECT;
  }
}

/** The kinds a JSON Schema `type` keyword allows (`integer` is a number); JSON_VALUE for anything else. */
export function typesOfSchemaType(type: unknown): TypeSet {
  const names = Array.isArray(type) ? type : [type];
  let set = 0;
  for (const name of names) {
    const kind = typeof name === 'string' ? SCHEMA_TYPES.get(name) : undefined;
    if (kind === undefined) return JSON_VALUE;
    set |= kind;
  }
  return set === 0 ? JSON_VALUE : set;
}

const SCHEMA_TYPES: ReadonlyMap<string, TypeSet> = new Map([
  ['null', NULL], ['boolean', BOOLEAN], ['number', NUMBER], ['integer', NUMBER],
  ['string', STRING], ['array', ARRAY], ['object', OBJECT],
]);

/** True when `==` can hold: some kind both sides share (the invalid number equals nothing, itself included). */
export function canBeEqual(a: TypeSet, b: TypeSet): boolean {
  return (a & b & ~INVALID) !== 0;
}

/** True when `<`, `<=`, `>` or `>=` can hold: both sides numbers, or both strings. */
export function canBeOrdered(a: TypeSet, b: TypeSet): boolean {
  return (a & b & (NUMBER | STRING)) !== 0;
}

/** True when `+` can give something other than the invalid number: two numbers, or two strings. */
export function canBeAdded(a: TypeSet, b: TypeSet): boolean {
  return canBeOrdered(a, b);
}

/** True when every value of the set is `true` or `false`. */
export function onlyBooleans(set: TypeSet): boolean {
  return set !== 0 && (set & ~BOOLEAN) === 0;
}

const NAMES: readonly [TypeSet, string][] = [
  [STRING, 'a string'], [NUMBER, 'a number'], [BOOLEAN, 'a boolean'], [ARRAY, 'an array'],
  [OBJECT, 'an object'], [NULL, 'null'], [UNDEFINED, 'undefined'], [INVALID, 'the invalid number'],
];

/**
 * The set in words, for messages.
 *
 * @example
 * describeTypes(NUMBER | UNDEFINED); // 'a number or undefined'
 */
export function describeTypes(set: TypeSet): string {
  const words = NAMES.filter(([kind]) => (set & kind) !== 0).map(([, word]) => word);
  if (words.length === 0) return 'nothing';
  if (words.length === 1) return words[0];
  return `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}
