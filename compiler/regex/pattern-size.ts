/**
 * How large a pattern's compiled program is: about one unit per instruction
 * of the linear-time engine's program, plus one per four code-point ranges
 * of a character class (each instruction keeps its ranges).
 *
 * Repetition counts multiply what they repeat: RE2 expands `x{1000}` into a
 * thousand copies of `x`, so the 16 characters `(\w+\s?){1000}$` become a
 * program of thousands of instructions, large in memory. A rule may hold a
 * hundred patterns and a context thousands of rules, so sizes are bounded
 * per pattern (compile-pattern.ts), and weights (below) per field
 * (rule-plan.ts, schema-policy.ts), per ruleset (compile-ruleset.ts) and
 * in the compiler's caches.
 *
 * A pattern's weight is its size on the linear-time engine, whose program
 * is built in full when the pattern is compiled and kept as long as the
 * pattern is. On the native engine V8 compiles a
 * pattern lazily into far smaller code, and it weighs a tenth of its size,
 * so that contexts of thousands of rules with a pattern each stay well
 * within the bounds.
 */
import type { AST } from '@eslint-community/regexpp';
import { charSetOf } from './character-sets.ts';

/** Most units one pattern may need. */
export const MAX_PATTERN_SIZE = 4_000;

/**
 * Most the distinct patterns of one context may weigh together: tens of
 * megabytes at most, and room for 5000 rules with a distinct ordinary
 * pattern each. A pattern shared by many rules counts once.
 */
export const MAX_CONTEXT_PATTERN_WEIGHT = 500_000;

/**
 * Most the patterns of one field (an expression, `when`, a message, a
 * schema) may weigh together: checking a field at save time compiles them
 * all, tens of milliseconds at this bound.
 */
export const MAX_FIELD_PATTERN_WEIGHT = 100_000;

/**
 * What a pattern of `size` counts for on its engine (see above).
 *
 * @example
 * patternWeight(2005, 'native'); // 201
 */
export function patternWeight(size: number, engine: 'native' | 're2'): number {
  return engine === 're2' ? size : Math.ceil(size / 10);
}

/**
 * The program size of a parsed pattern, in units (see above).
 *
 * @example
 * programSize(parse("^\\d{3}$")); // 11: the frame (2), start, \d{3} (1 + 3 classes of 2 units), end
 */
export function programSize(pattern: AST.Pattern): number {
  return 2 + alternativesSize(pattern.alternatives);
}

function alternativesSize(alternatives: readonly AST.Alternative[]): number {
  let size = alternatives.length - 1;
  for (const alternative of alternatives) {
    for (const element of alternative.elements) size += elementSize(element);
  }
  return size;
}

function elementSize(node: AST.Element): number {
  switch (node.type) {
    case 'Character':
      return 1;
    case 'CharacterSet':
    case 'CharacterClass':
      return 1 + Math.ceil(rangeCount(node) / 4);
    case 'Group':
    case 'CapturingGroup':
      return 2 + alternativesSize(node.alternatives);
    case 'Quantifier': {
      const copies = node.max === Infinity ? Math.max(node.min, 1) : Math.max(node.max, 1);
      return 1 + copies * elementSize(node.element);
    }
    default:
      // Assertions, and what the policy refuses anyway (backreferences, lookaround).
      return 1;
  }
}

function rangeCount(node: AST.CharacterSet | AST.CharacterClass): number {
  return charSetOf(node).pairs().length;
}

/** Distinct patterns with their weights, and the running total (each pattern counts once). */
export class PatternWeights {
  readonly #weights = new Map<string, number>();
  #total = 0;

  get total(): number {
    return this.#total;
  }

  has(pattern: string): boolean {
    return this.#weights.has(pattern);
  }

  /** Counts `pattern` unless it was already; returns the total. */
  add(pattern: string, weight: number): number {
    if (!this.#weights.has(pattern)) {
      this.#weights.set(pattern, weight);
      this.#total += weight;
    }
    return this.#total;
  }

  /** Counts every pattern of `patterns` not counted yet; returns the total. */
  addAll(patterns: ReadonlyMap<string, number>): number {
    for (const [pattern, weight] of patterns) this.add(pattern, weight);
    return this.#total;
  }

  /** What the total would be with `patterns` counted too (nothing is counted). */
  totalWith(patterns: ReadonlyMap<string, number>): number {
    let total = this.#total;
    for (const [pattern, weight] of patterns) if (!this.#weights.has(pattern)) total += weight;
    return total;
  }

  entries(): IterableIterator<[string, number]> {
    return this.#weights.entries();
  }
}
