/**
 * What the analysis knows about each function and method of the language,
 * derived from its records (compiler/language/): the kinds of argument each
 * one works on, what it gives otherwise, the kinds of its result, and how
 * to compute it when every argument is a constant. Results are computed by
 * the run-time helpers the records name, so a folded constant is exactly
 * what a validator would compute.
 */
import { runtime } from '../runtime.ts';
import {
  CALLBACK_METHOD_RECORDS, FUNCTION_RECORDS, VALUE_METHOD_RECORDS, type FunctionRecord, type Otherwise, type ValueMethodRecord,
} from '../language/index.ts';
import { ANY, ARRAY, NUMBER, OBJECT, STRING, UNDEFINED, type TypeSet } from './value-types.ts';

export type { Otherwise } from '../language/index.ts';

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

type Helper = (...args: unknown[]) => unknown;

/** The run-time helper a record names; a record naming no helper fails at load, not in a validator. */
function helper(name: string): Helper {
  const found = (runtime as unknown as Record<string, Helper | undefined>)[name];
  if (typeof found !== 'function') throw new Error(`the language names a run-time helper that does not exist: ${name}`);
  return found;
}

function functionSignature(record: FunctionRecord): Signature {
  const signature: { -readonly [K in keyof Signature]: Signature[K] } = { accepts: record.accepts, otherwise: record.otherwise, result: record.result };
  if (record.typeTest === true) signature.typeTest = true;
  if (record.clock === true) signature.clock = true;
  if (record.fold === 'call') {
    const one = helper(record.helper);
    if (record.pairHelper === undefined) {
      signature.fold = (args) => one(...args);
    } else {
      // Several arguments fold pairwise, left to right, as generated code does.
      const pair = helper(record.pairHelper);
      signature.fold = (args) => (args.length === 1 ? one(args[0]) : args.slice(1).reduce<unknown>((acc, x) => pair(acc, x), args[0]));
    }
  }
  return signature;
}

function methodSignature(record: ValueMethodRecord): Signature {
  const call = helper(record.helper);
  return { accepts: record.accepts, otherwise: record.otherwise, result: record.result, fold: (args) => call(...args) };
}

function table<T>(entries: [string, T][]): Readonly<Record<string, T>> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, T>, Object.fromEntries(entries)));
}

/** Functions of the language other than `matches` (its pattern is a literal, handled by the walk). */
export const FUNCTION_SIGNATURES: Readonly<Record<string, Signature>> = table(
  FUNCTION_RECORDS.filter((f) => f.name !== 'matches').map((f) => [f.name, functionSignature(f)]),
);

/** Methods of 3.3 that take plain arguments; index 0 is the receiver. */
export const METHOD_SIGNATURES: Readonly<Record<string, Signature>> = table(
  VALUE_METHOD_RECORDS.map((m) => [m.name, methodSignature(m)]),
);

/** Callback methods: what each gives for an array receiver (`find` gives an element, typed by the walk). */
export const CALLBACK_RESULTS: Readonly<Record<string, TypeSet>> = table(CALLBACK_METHOD_RECORDS.map((m) => [m.name, m.result]));

/** The kinds `x.length` may give: a length for strings and arrays, a field named `length` of an object. */
export function lengthTypes(receiver: TypeSet): TypeSet {
  const length = (receiver & (STRING | ARRAY)) !== 0 ? NUMBER : 0;
  const field = (receiver & OBJECT) !== 0 ? ANY : 0;
  return length | field | ((receiver & ~(STRING | ARRAY)) !== 0 ? UNDEFINED : 0);
}
