/**
 * When a pattern may run on native RegExp without the `u` flag (which V8
 * runs faster) and still answer `test` exactly as it does with `u`, and
 * the source it then runs as.
 *
 * Without `u` a RegExp reads UTF-16 code units and tries a match at every
 * unit; with `u` it reads code points (a surrogate pair is one) and tries a
 * match at code point boundaries. The two agree, by construction, when
 * every character atom of the pattern matches only code points that are
 * single code units: U+0000-U+D7FF and U+E000-U+FFFF (no surrogate, nothing
 * astral). Then
 * - an atom consumes the same thing in both modes: such a code point is one
 *   unit, and a unit that is half of a pair (or a lone surrogate) matches
 *   no atom in either mode;
 * - so every match that consumes something starts and ends on units
 *   outside surrogate pairs, which are code point boundaries, and is a
 *   match in both modes;
 * - the only assertions allowed are `^` and `$`, which look at the ends of
 *   the input only; an empty match between the halves of a pair would need
 *   `\B` (true there in both modes' V8, false by the specification), which
 *   is why `\b` and `\B` are not allowed.
 *
 * That is an allow-list: alternatives, groups, quantifiers, `^`, `$`, and
 * character atoms whose exact code-point set (character-sets.ts) lies in
 * those ranges. `.`, `\S`, `\W`, `\D`, negated classes and `\p{..}` all hold
 * surrogates or astral code points, so they are refused by the set test,
 * not by name. Anything else (backreferences, lookaround) is refused.
 *
 * The source is rewritten, never copied: syntax means different things
 * without `u` (`\u{1F600}`, `\p{L}`, `[\d-z]`), so it is built from the
 * parsed pattern with every atom written as `\uXXXX` escapes and every
 * group as `(?:..)`. It is made of fixed syntax and hex digits only.
 */
import type { AST } from '@eslint-community/regexpp';
import { charSetOf } from './character-sets.ts';
import type { CodePointSet } from './code-point-set.ts';

const SURROGATE_MIN = 0xd800;
const SURROGATE_MAX = 0xdfff;
const BMP_MAX = 0xffff;

class NotSingleUnit extends Error {}

/**
 * The source for `new RegExp(source)` (no flags) that answers `test` as
 * `new RegExp(pattern, 'u')` does, or undefined when the pattern is not in
 * the allow-list above.
 *
 * @example
 * codeUnitSource(parse('^[A-Z]{3}$')); // '^[\\u0041-\\u005a]{3}$'
 * codeUnitSource(parse('^.$')); // undefined: `.` matches astral code points
 */
export function codeUnitSource(pattern: AST.Pattern): string | undefined {
  try {
    return disjunction(pattern.alternatives);
  } catch (error) {
    if (error instanceof NotSingleUnit) return undefined;
    throw error;
  }
}

function disjunction(alternatives: readonly AST.Alternative[]): string {
  return alternatives.map((alternative) => alternative.elements.map(element).join('')).join('|');
}

function element(node: AST.Element): string {
  switch (node.type) {
    case 'Character':
    case 'CharacterSet':
    case 'CharacterClass':
      return characterClass(charSetOf(node));
    case 'Group':
    case 'CapturingGroup':
      return `(?:${disjunction(node.alternatives)})`;
    case 'Quantifier':
      // What a quantifier repeats is an atom or a group: written as `[..]` or `(?:..)`, one term.
      return `${element(node.element)}${quantifier(node.min, node.max)}`;
    case 'Assertion':
      if (node.kind === 'start') return '^';
      if (node.kind === 'end') return '$';
      throw new NotSingleUnit();
    default:
      throw new NotSingleUnit();
  }
}

function quantifier(min: number, max: number): string {
  if (max === Infinity) return `{${min},}`;
  return min === max ? `{${min}}` : `{${min},${max}}`;
}

function characterClass(set: CodePointSet): string {
  let body = '';
  for (const [lo, hi] of set.pairs()) {
    if (hi > BMP_MAX || (lo <= SURROGATE_MAX && hi >= SURROGATE_MIN)) throw new NotSingleUnit();
    body += lo === hi ? unit(lo) : `${unit(lo)}-${unit(hi)}`;
  }
  return `[${body}]`;
}

function unit(codeUnit: number): string {
  return `\\u${codeUnit.toString(16).padStart(4, '0')}`;
}
