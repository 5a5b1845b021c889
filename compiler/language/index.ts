/**
 * The rule language's definition (functions, methods, operators) and what
 * is derived from it for more than one user: lookups by name, the sets the
 * generator and the cost model need, and "did you mean" for unknown names.
 *
 * Adding a function: one record in functions.ts, its helper in
 * compiler/runtime.ts, and their tests (docs/architecture.md says how).
 */
import { closestKey } from '../analysis/closest-path.ts';
import { BOOLEAN } from '../analysis/value-types.ts';
import { FUNCTION_RECORDS } from './functions.ts';
import { CALLBACK_METHOD_RECORDS, VALUE_METHOD_RECORDS } from './methods.ts';
import { OPERATOR_RECORDS } from './operators.ts';
import type { CallbackMethodRecord, FunctionRecord, ValueMethodRecord } from './types.ts';

export { FUNCTION_RECORDS } from './functions.ts';
export { CALLBACK_METHOD_RECORDS, VALUE_METHOD_RECORDS } from './methods.ts';
export { OPERATOR_RECORDS } from './operators.ts';
export type * from './types.ts';

/** A frozen null-prototype map of records by name, so `constructor` or `__proto__` is simply not found. */
function byName<T extends { readonly name: string }>(records: readonly T[]): Readonly<Record<string, T>> {
  const map = Object.create(null) as Record<string, T>;
  for (const record of records) {
    if (map[record.name] !== undefined) throw new Error(`the language defines ${record.name} twice`);
    map[record.name] = record;
  }
  return Object.freeze(map);
}

export const FUNCTIONS_BY_NAME: Readonly<Record<string, FunctionRecord>> = byName(FUNCTION_RECORDS);
export const VALUE_METHODS_BY_NAME: Readonly<Record<string, ValueMethodRecord>> = byName(VALUE_METHOD_RECORDS);
export const CALLBACK_METHODS_BY_NAME: Readonly<Record<string, CallbackMethodRecord>> = byName(CALLBACK_METHOD_RECORDS);

/** Functions whose result is always a boolean, so generated code need not compare it with `true`. */
export const BOOLEAN_FUNCTIONS: ReadonlySet<string> = new Set(FUNCTION_RECORDS.filter((f) => f.result === BOOLEAN).map((f) => f.name));

/** Functions whose time grows with the square of their argument's size: the cost model weighs them apart. */
export const QUADRATIC_FUNCTIONS: ReadonlySet<string> = new Set(FUNCTION_RECORDS.filter((f) => f.cost === 'quadratic').map((f) => f.name));

/** Infix operators as written, to the IR operator each becomes. */
export const INFIX_OPERATORS: ReadonlyMap<string, string> = new Map(
  OPERATOR_RECORDS.filter((o) => o.arity === 'infix' && o.family !== 'logical').map((o) => [o.token, o.op]),
);

/** IR binary operators that always give a boolean (comparisons and equality). */
export const BOOLEAN_BINARY_OPERATORS: ReadonlySet<string> = new Set(
  OPERATOR_RECORDS.filter((o) => o.arity === 'infix' && o.boolean).map((o) => o.op),
);

type Named = { readonly name: string; readonly aliases?: readonly string[] };

/** The record whose name or one of whose aliases is `name`, ignoring case. */
function byAlias(name: string, records: readonly Named[]): string | undefined {
  const lower = name.toLowerCase();
  return records.find((r) => r.name.toLowerCase() === lower || r.aliases?.some((alias) => alias.toLowerCase() === lower) === true)?.name;
}

/** The name a record lists among its aliases, or the nearest name by edit distance. */
function nearest(name: string, records: readonly Named[]): string | undefined {
  return byAlias(name, records) ?? closestKey(name, records.map((r) => r.name));
}

const METHOD_RECORDS: readonly Named[] = [...VALUE_METHOD_RECORDS, ...CALLBACK_METHOD_RECORDS];

/**
 * What an unknown function name was probably meant as, written as the
 * author would write it: a function that lists it as an alias (`today` →
 * `now()`) or is near it (`lenght` → `len()`), else a method that lists it
 * (`contains` → the method `.includes()`).
 *
 * @example
 * suggestFunction('today'); // '`now()`'
 */
export function suggestFunction(name: string): string | undefined {
  const fn = nearest(name, FUNCTION_RECORDS);
  if (fn !== undefined) return `\`${fn}()\``;
  const method = byAlias(name, METHOD_RECORDS);
  return method === undefined ? undefined : `the method \`.${method}()\``;
}

/**
 * What an unknown method name was probably meant as: a method that lists
 * it or is near it (`contains` → `.includes()`, `startWith` →
 * `.startsWith()`), else a function of that name or alias (`.isEmpty()` →
 * the function `isEmpty()`).
 */
export function suggestMethod(name: string): string | undefined {
  const method = nearest(name, METHOD_RECORDS);
  if (method !== undefined) return `\`.${method}()\``;
  const fn = byAlias(name, FUNCTION_RECORDS);
  return fn === undefined ? undefined : `the function \`${fn}()\``;
}
