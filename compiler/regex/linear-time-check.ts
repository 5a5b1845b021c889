/**
 * A sound proof that V8's backtracking RegExp runs a pattern in linear time.
 *
 * How it works. The pattern is turned into its Glushkov (position)
 * automaton: one position per character atom, with bounded repeats expanded
 * into copies. The pattern is admitted only when all of the following hold:
 *
 * 1. Deterministic: from the start, and after every position, the candidate
 *    next positions have pairwise disjoint character sets (computed exactly).
 * 2. Unambiguous: every path through the automaton has exactly one
 *    derivation. Concretely: no subexpression matches the empty string in two
 *    ways (`(a?)?`, `(a?|b?)`), no quantifier with max > 1 repeats a body
 *    that can match empty (`(a*)*`, `(a|b?)+`), and no unbounded loop adds an
 *    edge its body already has (star normal form: `(a+)+`, `^(\d+)*$`).
 * 3. Assertions only as a leading `^` and a trailing `$` of a top-level
 *    alternative (`\b` and a middle `^` go to RE2).
 * 4. Search stays linear: each top-level alternative either starts with `^`
 *    or matches at most MAX_UNANCHORED_LENGTH characters.
 *
 * Why that makes backtracking linear. A backtracker explores derivations
 * depth first. By (2), after consuming a prefix of the input there is at
 * most one derivation per automaton state, and by (1) at most one state
 * survives each character: of the branches tried at a choice point, every
 * branch but one fails at its very first character test, because the sets
 * are disjoint. Loop bodies cannot match empty, so every iteration consumes
 * a character. So the search tree is one path of length at most n with
 * O(m) dead branches of O(m) steps hanging off each node: O(n m^2) for one
 * start position. `^` fails at once at any other start, and an unanchored
 * alternative of bounded length costs O(L m^2) per start: linear overall.
 *
 * The expansion is bounded (POSITION_BUDGET, EDGE_BUDGET); beyond it the
 * pattern simply goes to RE2, as does anything the proof cannot cover.
 */
import type { AST } from '@eslint-community/regexpp';
import { CodePointSet, pairwiseDisjoint } from './code-point-set.ts';
import { charSetOf } from './character-sets.ts';

/** Positions of the expanded automaton; more goes to RE2. */
export const POSITION_BUDGET = 1000;
/** Edges of the expanded automaton; more goes to RE2. */
export const EDGE_BUDGET = 100_000;
/**
 * Longest match of an alternative without `^`: V8 retries it at every start
 * position, so its cost per start must be a small constant.
 */
export const MAX_UNANCHORED_LENGTH = 64;

/** Verdict of the checker: admitted to native RegExp or not, and why. */
export type LinearityVerdict = { linear: true } | { linear: false; reason: string };

/** A subexpression's contribution to the automaton. */
interface Fragment {
  nullable: boolean;
  first: number[];
  last: number[];
  /** Longest match in code points; Infinity when unbounded. */
  maxLength: number;
}

const EMPTY: Fragment = { nullable: true, first: [], last: [], maxLength: 0 };

class NotProven extends Error {}

/**
 * Decides whether `pattern` (parsed with the `u` flag, free of
 * backreferences and lookarounds) may run on native RegExp.
 *
 * @example
 * proveLinear(parse('^[a-z]+@[a-z]+\\.[a-z]{2,}$')); // { linear: true }
 * proveLinear(parse('^(a|a)*$')); // { linear: false, reason: '...' }
 */
export function proveLinear(pattern: AST.Pattern): LinearityVerdict {
  try {
    new Automaton().build(pattern);
    return { linear: true };
  } catch (error) {
    if (error instanceof NotProven) return { linear: false, reason: error.message };
    throw error;
  }
}

class Automaton {
  readonly #sets: CodePointSet[] = [];
  readonly #follow: Set<number>[] = [];
  #edges = 0;

  build(pattern: AST.Pattern): void {
    const first: number[] = [];
    let nullableAlternatives = 0;
    for (const alternative of pattern.alternatives) {
      const elements = [...alternative.elements];
      const anchored = isAssertion(elements[0], 'start');
      if (anchored) elements.shift();
      if (isAssertion(elements.at(-1), 'end')) elements.pop();
      const fragment = this.#sequence(elements);
      if (!anchored && fragment.maxLength > MAX_UNANCHORED_LENGTH) {
        throw new NotProven(
          `an alternative without a leading ^ may match more than ${MAX_UNANCHORED_LENGTH} characters`,
        );
      }
      if (fragment.nullable) nullableAlternatives++;
      first.push(...fragment.first);
    }
    if (nullableAlternatives > 1) throw new NotProven('two alternatives match the empty string');
    this.#checkDeterministic(first, 'at the start');
    for (let position = 0; position < this.#sets.length; position++) {
      this.#checkDeterministic([...this.#follow[position]], 'after a character');
    }
  }

  #checkDeterministic(candidates: number[], where: string): void {
    if (!pairwiseDisjoint(candidates.map((position) => this.#sets[position]))) {
      throw new NotProven(`two branches can match the same character ${where}`);
    }
  }

  #disjunction(alternatives: readonly AST.Alternative[]): Fragment {
    const result: Fragment = { nullable: false, first: [], last: [], maxLength: 0 };
    for (const alternative of alternatives) {
      const fragment = this.#sequence(alternative.elements);
      if (fragment.nullable && result.nullable) {
        throw new NotProven('two alternatives match the empty string');
      }
      result.nullable ||= fragment.nullable;
      result.first.push(...fragment.first);
      result.last.push(...fragment.last);
      result.maxLength = Math.max(result.maxLength, fragment.maxLength);
    }
    return result;
  }

  #sequence(elements: readonly AST.Element[]): Fragment {
    let result = EMPTY;
    for (const element of elements) result = this.#concat(result, this.#element(element));
    return result;
  }

  #concat(a: Fragment, b: Fragment): Fragment {
    for (const p of a.last) for (const q of b.first) this.#edge(p, q);
    return {
      nullable: a.nullable && b.nullable,
      first: a.nullable ? [...a.first, ...b.first] : a.first,
      last: b.nullable ? [...a.last, ...b.last] : b.last,
      maxLength: a.maxLength + b.maxLength,
    };
  }

  #element(element: AST.Element): Fragment {
    switch (element.type) {
      case 'Character':
      case 'CharacterSet':
      case 'CharacterClass':
        return this.#position(charSetOf(element));
      case 'Group':
      case 'CapturingGroup':
        return this.#disjunction(element.alternatives);
      case 'Quantifier':
        return this.#quantifier(element);
      case 'Assertion':
        throw new NotProven(`the assertion ${element.raw} is only proven safe as a leading ^ or trailing $`);
      default:
        throw new NotProven(`${element.raw} is not supported by the checker`);
    }
  }

  #position(set: CodePointSet): Fragment {
    if (this.#sets.length >= POSITION_BUDGET) {
      throw new NotProven(`the pattern expands to more than ${POSITION_BUDGET} positions`);
    }
    const position = this.#sets.length;
    this.#sets.push(set);
    this.#follow.push(new Set());
    return { nullable: false, first: [position], last: [position], maxLength: 1 };
  }

  #edge(from: number, to: number): void {
    const follow = this.#follow[from];
    // Edges are only ever duplicated by a loop whose body already leads from
    // its end back to its start: two derivations for one path.
    if (follow.has(to)) throw new NotProven('a repeated group can be iterated in two ways');
    if (++this.#edges > EDGE_BUDGET) throw new NotProven(`the pattern expands to more than ${EDGE_BUDGET} edges`);
    follow.add(to);
  }

  #quantifier(node: AST.Quantifier): Fragment {
    const { min, max } = node;
    if (max === 0) return EMPTY;
    // The body is built once per copy: each copy has its own positions.
    const copy = (): Fragment => this.#element(node.element);
    if (max === 1) {
      const body = copy();
      if (min === 1) return body;
      if (body.nullable) throw new NotProven(`${node.raw} makes optional what already matches empty`);
      return { ...body, nullable: true };
    }
    let result = EMPTY;
    for (let i = 0; i < min; i++) {
      const body = copy();
      if (body.nullable) throw new NotProven(`${node.raw} repeats a group that can match empty`);
      result = this.#concat(result, body);
    }
    if (max === Infinity) {
      const body = copy();
      if (body.nullable) throw new NotProven(`${node.raw} repeats a group that can match empty`);
      for (const p of body.last) for (const q of body.first) this.#edge(p, q);
      const star: Fragment = {
        nullable: true,
        first: body.first,
        last: body.last,
        maxLength: body.maxLength > 0 ? Infinity : 0,
      };
      return this.#concat(result, star);
    }
    // {min,max}: the optional copies nest, (B(B(B)?)?)?, which is how a
    // counted loop's continue-or-exit choices unfold.
    let tail = EMPTY;
    for (let i = min; i < max; i++) {
      const body = copy();
      if (body.nullable) throw new NotProven(`${node.raw} repeats a group that can match empty`);
      tail = { ...this.#concat(body, tail), nullable: true };
    }
    return this.#concat(result, tail);
  }
}

function isAssertion(element: AST.Element | undefined, kind: 'start' | 'end'): boolean {
  return element?.type === 'Assertion' && element.kind === kind;
}
