/**
 * What the analysis knows about each function and method of the language:
 * the kinds of argument each one works on, what it gives otherwise, the
 * kinds of its result, and how to compute it when every argument is a
 * constant. Results are computed by the run-time helpers themselves, so a
 * folded constant is exactly what a validator would compute.
 */
import { runtime } from '../runtime.ts';
import {
  ANY, ARRAY, BOOLEAN, FIELD_VALUE, INVALID, NUMBER, OBJECT, STRING, UNDEFINED, type TypeSet,
} from './value-types.ts';

/** What a call gives when an argument is of none of the kinds it works on. */
export type Otherwise = 'undefined' | 'the invalid number' | 'false';

export interface Signature {
  /** Kinds each argument must have for the call to mean anything; `undefined` means any kind. */
  accepts(index: number, count: number): TypeSet | undefined;
  otherwise: Otherwise;
  result: TypeSet;
  /** The call on constant arguments; absent for calls that read the clock. */
  fold?: (args: unknown[]) => unknown;
  /** A type test: its argument may legitimately be of any kind. */
  typeTest?: true;
  /** Reads the request's clock (`now()`, `age()`): never constant. */
  clock?: true;
}

const anything = (): undefined => undefined;
const all = (kinds: TypeSet) => (): TypeSet => kinds;

function unary(kinds: TypeSet, otherwise: Otherwise, result: TypeSet, fold: (x: unknown) => unknown): Signature {
  return { accepts: all(kinds), otherwise, result, fold: (args) => fold(args[0]) };
}

function test(fold: (x: unknown) => boolean): Signature {
  return { accepts: anything, otherwise: 'false', result: BOOLEAN, fold: (args) => fold(args[0]), typeTest: true };
}

const NUMERIC = NUMBER | INVALID;

/** `min(list)` or `min(a, b, ...)`: several arguments fold pairwise, as generated code does. */
function extreme(one: (x: unknown) => number, pair: (a: unknown, b: unknown) => number): Signature {
  return {
    accepts: (_index, count) => (count === 1 ? NUMBER | ARRAY : NUMBER),
    otherwise: 'the invalid number',
    result: NUMERIC,
    fold: (args) => (args.length === 1 ? one(args[0]) : args.slice(1).reduce<unknown>((acc, x) => pair(acc, x), args[0])),
  };
}

/** Functions of the language other than `matches` (its pattern is a literal, handled by the walk). */
export const FUNCTION_SIGNATURES: Readonly<Record<string, Signature>> = Object.freeze(Object.assign(Object.create(null) as Record<string, Signature>, {
  exists: { accepts: anything, otherwise: 'false', result: BOOLEAN, fold: (args: unknown[]) => runtime.exists(args[0]) },
  isEmpty: { accepts: anything, otherwise: 'false', result: BOOLEAN, fold: (args: unknown[]) => runtime.isEmpty(args[0]) },
  isString: test(runtime.isString),
  isNumber: test(runtime.isNumber),
  isInteger: test(runtime.isInteger),
  isBoolean: test(runtime.isBoolean),
  isArray: test(runtime.isArray),
  isObject: test(runtime.isObject),
  len: unary(STRING | ARRAY | OBJECT, 'undefined', NUMBER | UNDEFINED, runtime.len),
  sum: unary(ARRAY, 'undefined', NUMERIC | UNDEFINED, runtime.sum),
  avg: unary(ARRAY, 'undefined', NUMERIC | UNDEFINED, runtime.avg),
  min: extreme(runtime.min, runtime.min2),
  max: extreme(runtime.max, runtime.max2),
  abs: unary(NUMBER, 'the invalid number', NUMERIC, runtime.abs),
  floor: unary(NUMBER, 'the invalid number', NUMERIC, runtime.floor),
  ceil: unary(NUMBER, 'the invalid number', NUMERIC, runtime.ceil),
  round: { accepts: all(NUMBER), otherwise: 'the invalid number', result: NUMERIC, fold: (args: unknown[]) => runtime.round(args[0], args[1]) },
  lower: unary(STRING, 'undefined', STRING | UNDEFINED, runtime.lower),
  upper: unary(STRING, 'undefined', STRING | UNDEFINED, runtime.upper),
  trim: unary(STRING, 'undefined', STRING | UNDEFINED, runtime.trim),
  isEmail: unary(STRING, 'false', BOOLEAN, runtime.isEmail),
  isUuid: unary(STRING, 'false', BOOLEAN, runtime.isUuid),
  isUri: unary(STRING, 'false', BOOLEAN, runtime.isUri),
  isDate: unary(STRING, 'false', BOOLEAN, runtime.isDate),
  date: unary(STRING, 'undefined', NUMBER | UNDEFINED, runtime.date),
  daysBetween: {
    accepts: all(STRING | NUMBER),
    otherwise: 'undefined',
    result: NUMBER | UNDEFINED,
    fold: (args: unknown[]) => runtime.daysBetween(args[0], args[1]),
  },
  age: { accepts: all(STRING | NUMBER), otherwise: 'undefined', result: NUMBER | UNDEFINED, clock: true },
  now: { accepts: anything, otherwise: 'undefined', result: NUMBER, clock: true },
  distinct: unary(ARRAY, 'undefined', BOOLEAN | UNDEFINED, runtime.distinct),
} satisfies Record<string, Signature>));

/** Methods of 3.3 that take plain arguments; index 0 is the receiver. */
export const METHOD_SIGNATURES: Readonly<Record<string, Signature>> = Object.freeze(Object.assign(Object.create(null) as Record<string, Signature>, {
  startsWith: { accepts: all(STRING), otherwise: 'undefined', result: BOOLEAN | UNDEFINED, fold: (args: unknown[]) => runtime.startsWith(args[0], args[1]) },
  endsWith: { accepts: all(STRING), otherwise: 'undefined', result: BOOLEAN | UNDEFINED, fold: (args: unknown[]) => runtime.endsWith(args[0], args[1]) },
  // A string's `.includes` takes a string; an array's takes anything (the walk checks the pair).
  includes: {
    accepts: (index: number) => (index === 0 ? STRING | ARRAY : undefined),
    otherwise: 'undefined',
    result: BOOLEAN | UNDEFINED,
    fold: (args: unknown[]) => runtime.includes(args[0], args[1]),
  },
  toLowerCase: unary(STRING, 'undefined', STRING | UNDEFINED, runtime.lower),
  toUpperCase: unary(STRING, 'undefined', STRING | UNDEFINED, runtime.upper),
  trim: unary(STRING, 'undefined', STRING | UNDEFINED, runtime.trim),
} satisfies Record<string, Signature>));

/** Callback methods: what each gives for an array receiver (`find` gives an element, typed by the walk). */
export const CALLBACK_RESULTS: Readonly<Record<string, TypeSet>> = Object.freeze(Object.assign(Object.create(null) as Record<string, TypeSet>, {
  every: BOOLEAN | UNDEFINED,
  some: BOOLEAN | UNDEFINED,
  filter: ARRAY | UNDEFINED,
  map: ARRAY | UNDEFINED,
  find: FIELD_VALUE | INVALID,
}));

/** The kinds `x.length` may give: a length for strings and arrays, a field named `length` of an object. */
export function lengthTypes(receiver: TypeSet): TypeSet {
  const length = (receiver & (STRING | ARRAY)) !== 0 ? NUMBER : 0;
  const field = (receiver & OBJECT) !== 0 ? ANY : 0;
  return length | field | ((receiver & ~(STRING | ARRAY)) !== 0 ? UNDEFINED : 0);
}
