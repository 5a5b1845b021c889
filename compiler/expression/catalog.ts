/**
 * The callable allow-list of docs/rule-language.md, with arities checked
 * at compile time. Maps are null-prototype objects so that a name such as
 * `constructor` or `__proto__` is simply not found.
 */
import type { CallbackMethod, ValueMethod } from './ir.ts';

export interface FunctionSpec {
  readonly min: number;
  /** Infinity for `min(...)` / `max(...)`. */
  readonly max: number;
}

function table<T>(entries: Record<string, T>): Readonly<Record<string, T>> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, T>, entries));
}

const one: FunctionSpec = { min: 1, max: 1 };

/** Functions of 3.4. `now` and `matches` are lowered to their own IR nodes. */
export const FUNCTIONS: Readonly<Record<string, FunctionSpec>> = table({
  exists: one, isEmpty: one, len: one,
  isString: one, isNumber: one, isInteger: one, isBoolean: one, isArray: one, isObject: one,
  sum: one, avg: one, min: { min: 1, max: Infinity }, max: { min: 1, max: Infinity },
  abs: one, round: { min: 1, max: 2 }, floor: one, ceil: one,
  lower: one, upper: one, trim: one,
  matches: { min: 2, max: 2 },
  isEmail: one, isUuid: one, isUri: one, isDate: one,
  date: one, now: { min: 0, max: 0 }, daysBetween: { min: 2, max: 2 }, age: one,
  distinct: one,
});

/** Methods of 3.3 that take plain arguments. */
export const VALUE_METHODS: Readonly<Record<string, FunctionSpec & { readonly method: ValueMethod }>> = table({
  startsWith: { min: 1, max: 1, method: 'startsWith' },
  endsWith: { min: 1, max: 1, method: 'endsWith' },
  includes: { min: 1, max: 1, method: 'includes' },
  toLowerCase: { min: 0, max: 0, method: 'toLowerCase' },
  toUpperCase: { min: 0, max: 0, method: 'toUpperCase' },
  trim: { min: 0, max: 0, method: 'trim' },
});

/** Array methods of 3.3 that take one callback. */
export const CALLBACK_METHODS: Readonly<Record<string, CallbackMethod>> = table({
  every: 'every', some: 'some', filter: 'filter', map: 'map', find: 'find',
});

/** The `$`-names of 3.1. */
export const DOLLAR_NAMES: Readonly<Record<string, 'payload' | 'value' | 'item' | 'index' | 'expected'>> = table({
  $: 'payload', $value: 'value', $item: 'item', $index: 'index', $expected: 'expected',
});

/** The `$`-names of a decision table, allowed only where a table gives them a value (lower.ts). */
export const TABLE_NAMES: Readonly<Record<string, 'cell' | 'row' | 'rowIndex'>> = table({
  $cell: 'cell', $row: 'row', $rowIndex: 'rowIndex',
});

export function arityText(spec: FunctionSpec): string {
  if (spec.max === Infinity) return `at least ${spec.min} argument${spec.min === 1 ? '' : 's'}`;
  if (spec.min === spec.max) return `${spec.min} argument${spec.min === 1 ? '' : 's'}`;
  return `${spec.min} to ${spec.max} arguments`;
}
