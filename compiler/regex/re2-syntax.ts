/**
 * Rewrites a JavaScript `u`-mode pattern (regexpp AST) as an RE2 pattern with
 * the same meaning under `test` (search anywhere, no flags).
 *
 * The two syntaxes look alike but differ in places: `.` excludes U+2028 and
 * U+2029 in JavaScript, `\s` is a Unicode set in JavaScript and ASCII in RE2,
 * `\p{..}` tables may be of different Unicode versions, and escapes differ.
 * So nothing is copied through: every character atom is emitted as an
 * explicit class of code-point ranges (`[\x{41}-\x{5A}]`) computed from
 * JavaScript's semantics, every literal as `\x{..}`, groups as `(?:..)`.
 * `^` is start of text in both engines without multiline; JavaScript's `$`
 * becomes RE2's `\z`; `\b` and `\B` are ASCII-word based in both.
 *
 * One known difference is V8's, not the rewrite's: V8 also tries a
 * zero-width match between the two halves of a surrogate pair, so
 * `/\B/u.test('a😀a')` is true in V8 (index 2) and false by the
 * specification and in RE2. Patterns on the RE2 engine follow the
 * specification there; test/compiler/regex.test.ts holds the rewrite to it.
 */
import type { AST } from '@eslint-community/regexpp';
import type { CodePointSet } from './code-point-set.ts';
import { charSetOf } from './character-sets.ts';

/**
 * The RE2 source for a parsed pattern. Callers refuse backreferences and
 * lookarounds first; they have no RE2 equivalent and throw here.
 *
 * @example
 * toRe2Syntax(parse('^a.$')); // '(?:^\\x{61}[\\x{0}-\\x{9}...]\\z)'
 */
export function toRe2Syntax(pattern: AST.Pattern): string {
  return disjunction(pattern.alternatives);
}

function disjunction(alternatives: readonly AST.Alternative[]): string {
  return `(?:${alternatives.map((alternative) => alternative.elements.map(element).join('')).join('|')})`;
}

function element(node: AST.Element): string {
  switch (node.type) {
    case 'Character':
      return literal(node.value);
    case 'CharacterSet':
    case 'CharacterClass':
      return charClass(charSetOf(node));
    case 'Group':
    case 'CapturingGroup':
      return disjunction(node.alternatives);
    case 'Quantifier':
      return `(?:${element(node.element)})${quantifier(node.min, node.max)}${node.greedy ? '' : '?'}`;
    case 'Assertion':
      switch (node.kind) {
        case 'start':
          return '^';
        case 'end':
          return '\\z';
        case 'word':
          return node.negate ? '\\B' : '\\b';
        default:
          throw new Error('lookaround has no RE2 equivalent');
      }
    default:
      throw new Error(`${node.type} has no RE2 equivalent`);
  }
}

function quantifier(min: number, max: number): string {
  if (max === Infinity) return min === 0 ? '*' : min === 1 ? '+' : `{${min},}`;
  if (min === 0 && max === 1) return '?';
  return min === max ? `{${min}}` : `{${min},${max}}`;
}

function literal(codePoint: number): string {
  return isAlphanumeric(codePoint) ? String.fromCodePoint(codePoint) : `\\x{${codePoint.toString(16)}}`;
}

function charClass(set: CodePointSet): string {
  // RE2 has no `[]`; the negation of everything matches nothing.
  if (set.isEmpty) return '[^\\x{0}-\\x{10ffff}]';
  let body = '';
  for (const [lo, hi] of set.pairs()) {
    body += lo === hi ? `\\x{${lo.toString(16)}}` : `\\x{${lo.toString(16)}}-\\x{${hi.toString(16)}}`;
  }
  return `[${body}]`;
}

function isAlphanumeric(codePoint: number): boolean {
  return (
    (codePoint >= 0x30 && codePoint <= 0x39) ||
    (codePoint >= 0x41 && codePoint <= 0x5a) ||
    (codePoint >= 0x61 && codePoint <= 0x7a)
  );
}
