/**
 * The shape of the rule language's definition: one record per function,
 * method and operator. Everything else that knows about a function (the
 * checker's catalogue, the type checker's signatures, the cost model, the
 * console's completion and the documentation's tables) is derived from
 * these records (index.ts), so adding a function is one record and one
 * run-time helper.
 *
 * This folder imports nothing with effects (only the type lattice), so the
 * console's bundle can import it as it is.
 */
import type { TypeSet } from '../analysis/value-types.ts';

/** What a call gives when an argument is of none of the kinds it works on. */
export type Otherwise = 'undefined' | 'the invalid number' | 'false';

/**
 * How the time of a call grows with its arguments' size: `constant`,
 * `linear` (one pass over a string or array), `quadratic` (every element
 * against every other). The cost model gives a quadratic call its own
 * weight so that the evaluation deadline is set for it.
 */
export type CostDegree = 'constant' | 'linear' | 'quadratic';

/** What the documentation says about a callable: its table row and the completion's text. */
export interface Documentation {
  /** How it is written, as the docs' table shows it: `round(x)`, `round(x, digits)`. */
  readonly forms: readonly string[];
  /** What it gives: the table's "gives" cell, one line of Markdown. */
  readonly doc: string;
  /** Expressions using it, as a rule would; the first is the one the console shows. */
  readonly examples: readonly string[];
  /**
   * Names an author coming from another language may write for it (`today`
   * for `now`, `contains` for `includes`): an unknown name equal to one of
   * them gets this callable as its "did you mean".
   */
  readonly aliases?: readonly string[];
}

/** The kinds each argument must have for the call to mean anything; `undefined` means any kind. */
export type Accepts = (index: number, count: number) => TypeSet | undefined;

/** What a function and a method with plain arguments have in common: how they are called and typed. */
export interface CallableSemantics {
  readonly name: string;
  readonly minArgs: number;
  /** Infinity for `min(...)` / `max(...)`. */
  readonly maxArgs: number;
  readonly accepts: Accepts;
  readonly otherwise: Otherwise;
  readonly result: TypeSet;
  /**
   * The key of compiler/runtime.ts's `runtime` that computes it (a method's
   * receiver is its first argument). Constant arguments are folded at save
   * time by calling this same helper, so a folded constant is what a
   * validator would compute.
   */
  readonly helper: string;
  readonly cost: CostDegree;
}

/** A function of docs/rule-language.md section 7. */
export interface FunctionRecord extends CallableSemantics, Documentation {
  /** For `min(a, b, ...)`: the two-argument helper several arguments fold through, left to right. */
  readonly pairHelper?: string;
  /** How constant arguments are folded: `call` (the helper on them), `never` (reads the clock, or checked by the walk). */
  readonly fold: 'call' | 'never';
  /** A type test: its argument may legitimately be of any kind. */
  readonly typeTest?: true;
  /** Reads the request's clock (`now()`, `age()`): never constant. */
  readonly clock?: true;
}

/** One line of the methods' table: what a method does on one kind of receiver. */
export interface MethodUse {
  readonly on: 'string' | 'array';
  /** What it gives on that receiver: the table's "gives" cell. */
  readonly doc: string;
  readonly example: string;
}

/** What the documentation says about a method: one row per receiver kind. */
export interface MethodDocumentation {
  /** How it is written, as the docs' table shows it: `.startsWith(s)`. */
  readonly form: string;
  readonly uses: readonly MethodUse[];
  /** As for functions: names that get this method as their "did you mean". */
  readonly aliases?: readonly string[];
}

/** A method of section 6 that takes plain arguments; argument index 0 is the receiver. */
export type ValueMethodRecord = CallableSemantics & MethodDocumentation;

/** An array method of section 6 that takes one callback (`x => ...`). */
export interface CallbackMethodRecord extends MethodDocumentation {
  readonly name: string;
  /** What it gives for an array receiver (`find` gives an element, typed by the walk). */
  readonly result: TypeSet;
  /** Of the callback's calls: one per element. */
  readonly cost: CostDegree;
}

/** An operator of section 5, as acorn names it, and the IR operator it becomes. */
export interface OperatorRecord {
  /** As written; `===` and `==` are two records of one IR operator. */
  readonly token: string;
  readonly arity: 'prefix' | 'infix';
  /** The IR's operator (compiler/expression/ir.ts). */
  readonly op: string;
  readonly family: 'equality' | 'comparison' | 'arithmetic' | 'logical' | 'negation';
  /** Always gives a boolean, so generated code need not compare it with `true`. */
  readonly boolean: boolean;
  readonly doc: string;
}
