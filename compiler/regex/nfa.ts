/**
 * A Thompson NFA of a parsed pattern, the input of the DFA construction
 * (build-dfa.ts). Instructions are built back to front: each node is
 * compiled with the instruction that follows it already known, so no
 * patching is needed.
 *
 * What `RegExp#test` needs differs from what `exec` needs: no captures, and
 * greedy and lazy quantifiers accept the same strings. JavaScript's rule
 * that an optional iteration matching the empty string fails changes no
 * answer either: such an iteration returns to the same instruction at the
 * same position, where the automaton already is.
 */
import type { AST } from '@eslint-community/regexpp';
import { charSetOf, type CharacterNode } from './character-sets.ts';
import type { CodePointSet } from './code-point-set.ts';

/** Consumes one code point of `sets[arg]`, then goes to `next[0]`. */
export const CHAR = 0;
/** Goes to every instruction of `next` without consuming anything. */
export const SPLIT = 1;
/** Goes to `next[0]` when the assertion `arg` (below) holds here. */
export const ASSERT = 2;
/** The pattern has matched. */
export const MATCH = 3;

/** Assertion kinds: `^`, `$`, `\b`, `\B` (no `m` flag: `^` and `$` are the ends of the input). */
export const AT_START = 0;
export const AT_END = 1;
export const WORD_BOUNDARY = 2;
export const NOT_WORD_BOUNDARY = 3;

export interface Instruction {
  op: typeof CHAR | typeof SPLIT | typeof ASSERT | typeof MATCH;
  /** The set index of CHAR, the assertion kind of ASSERT. */
  arg: number;
  next: number[];
}

/** An NFA: instructions, the distinct sets its CHAR instructions consume, and where it starts. */
export interface Nfa {
  instructions: Instruction[];
  sets: CodePointSet[];
  start: number;
  /** True when some instruction asserts `\b` or `\B`: states must then know the previous character. */
  usesWordBoundary: boolean;
}

/** Thrown when the pattern holds what no automaton here runs (backreferences, lookaround) or grows past the bound. */
export class NfaUnsupported extends Error {}

/**
 * The NFA of `pattern`, of at most `maxInstructions` instructions.
 *
 * @example
 * buildNfa(parse('a|b'), 100).instructions.length; // 4: SPLIT, two CHARs, MATCH
 */
export function buildNfa(pattern: AST.Pattern, maxInstructions: number): Nfa {
  return new NfaBuilder(maxInstructions).build(pattern);
}

class NfaBuilder {
  readonly #instructions: Instruction[] = [];
  readonly #sets: CodePointSet[] = [];
  readonly #setIndex = new Map<string, number>();
  readonly #nodeSet = new Map<CharacterNode, number>();
  readonly #maxInstructions: number;
  #usesWordBoundary = false;

  constructor(maxInstructions: number) {
    this.#maxInstructions = maxInstructions;
  }

  build(pattern: AST.Pattern): Nfa {
    const match = this.#emit(MATCH, 0, []);
    const start = this.#disjunction(pattern.alternatives, match);
    return { instructions: this.#instructions, sets: this.#sets, start, usesWordBoundary: this.#usesWordBoundary };
  }

  #emit(op: Instruction['op'], arg: number, next: number[]): number {
    if (this.#instructions.length >= this.#maxInstructions) {
      throw new NfaUnsupported(`the automaton needs more than ${this.#maxInstructions} instructions`);
    }
    this.#instructions.push({ op, arg, next });
    return this.#instructions.length - 1;
  }

  #disjunction(alternatives: readonly AST.Alternative[], next: number): number {
    const entries = alternatives.map((alternative) => this.#sequence(alternative.elements, next));
    return entries.length === 1 ? entries[0] : this.#emit(SPLIT, 0, entries);
  }

  #sequence(elements: readonly AST.Element[], next: number): number {
    let entry = next;
    for (let i = elements.length - 1; i >= 0; i--) entry = this.#element(elements[i], entry);
    return entry;
  }

  #element(node: AST.Element, next: number): number {
    switch (node.type) {
      case 'Character':
      case 'CharacterSet':
      case 'CharacterClass':
        return this.#emit(CHAR, this.#setOf(node), [next]);
      case 'Group':
      case 'CapturingGroup':
        return this.#disjunction(node.alternatives, next);
      case 'Quantifier':
        return this.#quantifier(node, next);
      case 'Assertion':
        return this.#assertion(node, next);
      default:
        throw new NfaUnsupported(`${node.raw} has no automaton`);
    }
  }

  #assertion(node: AST.Assertion, next: number): number {
    switch (node.kind) {
      case 'start':
        return this.#emit(ASSERT, AT_START, [next]);
      case 'end':
        return this.#emit(ASSERT, AT_END, [next]);
      case 'word':
        this.#usesWordBoundary = true;
        return this.#emit(ASSERT, node.negate ? NOT_WORD_BOUNDARY : WORD_BOUNDARY, [next]);
      default:
        throw new NfaUnsupported(`${node.raw} has no automaton`);
    }
  }

  /** `x{min,max}` as min copies of x, then a loop or max - min nested optional copies. */
  #quantifier(node: AST.Quantifier, next: number): number {
    let entry = next;
    if (node.max === Infinity) {
      const loop = this.#emit(SPLIT, 0, []);
      this.#instructions[loop].next.push(this.#element(node.element, loop), next);
      entry = loop;
    } else {
      for (let i = node.min; i < node.max; i++) entry = this.#emit(SPLIT, 0, [this.#element(node.element, entry), next]);
    }
    for (let i = 0; i < node.min; i++) entry = this.#element(node.element, entry);
    return entry;
  }

  /** The set index of a character node; a repeated node (`x{30}`) is looked up once. */
  #setOf(node: CharacterNode): number {
    const known = this.#nodeSet.get(node);
    if (known !== undefined) return known;
    const set = charSetOf(node);
    const key = set.ranges.join(',');
    let index = this.#setIndex.get(key);
    if (index === undefined) {
      index = this.#sets.length;
      this.#sets.push(set);
      this.#setIndex.set(key, index);
    }
    this.#nodeSet.set(node, index);
    return index;
  }
}
