/**
 * The callable allow-list of docs/rule-language.md, with arities checked
 * at compile time, derived from the language's records (compiler/language/).
 * Maps are null-prototype objects so that a name such as `constructor` or
 * `__proto__` is simply not found.
 */
import { CALLBACK_METHOD_RECORDS, FUNCTION_RECORDS, VALUE_METHOD_RECORDS } from '../language/index.ts';
import type { CallbackMethod, ValueMethod } from './ir.ts';

export interface FunctionSpec {
  readonly min: number;
  /** Infinity for `min(...)` / `max(...)`. */
  readonly max: number;
}

function table<T>(entries: Record<string, T>): Readonly<Record<string, T>> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, T>, entries));
}

/** Functions of 3.4. `now` and `matches` are lowered to their own IR nodes. */
export const FUNCTIONS: Readonly<Record<string, FunctionSpec>> = table(Object.fromEntries(
  FUNCTION_RECORDS.map((f) => [f.name, { min: f.minArgs, max: f.maxArgs }]),
));

/** Methods of 3.3 that take plain arguments. */
export const VALUE_METHODS: Readonly<Record<string, FunctionSpec & { readonly method: ValueMethod }>> = table(Object.fromEntries(
  VALUE_METHOD_RECORDS.map((m) => [m.name, { min: m.minArgs, max: m.maxArgs, method: m.name as ValueMethod }]),
));

/** Array methods of 3.3 that take one callback. */
export const CALLBACK_METHODS: Readonly<Record<string, CallbackMethod>> = table(Object.fromEntries(
  CALLBACK_METHOD_RECORDS.map((m) => [m.name, m.name as CallbackMethod]),
));

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
