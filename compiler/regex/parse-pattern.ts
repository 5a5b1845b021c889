/**
 * Parsing of tenant patterns: JavaScript syntax with the `u` flag, which both
 * `matches()` and ajv (`unicodeRegExp`) use.
 */
import { AST, RegExpParser, RegExpSyntaxError, visitRegExpAST } from '@eslint-community/regexpp';

// ES2024 is what Node 20 parses: ES2025 modifiers `(?i:...)` and duplicate
// named groups would pass regexpp and then fail in `new RegExp`.
const parser = new RegExpParser({ ecmaVersion: 2024 });

/** A parse failure; `offset` is 0-based in the pattern text when known. */
export interface PatternSyntaxError {
  message: string;
  offset?: number;
}

/**
 * Parses `pattern` as `new RegExp(pattern, 'u')` would, and confirms with the
 * native parser (which never runs the pattern), so that both agree.
 *
 * @example
 * parsePattern('a(b'); // { ok: false, error: { message: 'Unterminated group', offset: 3 } }
 */
export function parsePattern(
  pattern: string,
): { ok: true; ast: AST.Pattern } | { ok: false; error: PatternSyntaxError } {
  let ast: AST.Pattern;
  try {
    ast = parser.parsePattern(pattern, 0, pattern.length, { unicode: true });
  } catch (error) {
    if (!(error instanceof RegExpSyntaxError)) throw error;
    const prefix = `Invalid regular expression: /${pattern}/u: `;
    const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    return { ok: false, error: { message, offset: error.index } };
  }
  try {
    new RegExp(pattern, 'u');
  } catch (error) {
    return { ok: false, error: { message: (error as Error).message } };
  }
  return { ok: true, ast };
}

/**
 * The first backreference or lookaround of the pattern, if any: no
 * linear-time engine runs them, so they are refused outright.
 */
export function findUnsupported(ast: AST.Pattern): AST.Node | undefined {
  let found: AST.Node | undefined;
  visitRegExpAST(ast, {
    onBackreferenceEnter(node) {
      found ??= node;
    },
    onAssertionEnter(node) {
      if (node.kind === 'lookahead' || node.kind === 'lookbehind') found ??= node;
    },
  });
  return found;
}
