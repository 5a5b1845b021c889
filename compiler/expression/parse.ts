/**
 * Source to acorn AST, with every limit checked before acorn runs.
 *
 * Length first, then nesting measured on the source text (a bracket
 * pre-scan that skips strings and comments), so that 2000 parentheses are
 * refused as TOO_DEEP instead of recursing in the parser. The program must
 * be exactly one expression statement: acorn's parseExpressionAt would
 * accept `a > 1; evil()` as `a > 1`.
 */
import * as acorn from 'acorn';
import type { CompilerLimits } from '../types.ts';
import { identity, type ExpressionError, type PositionMap } from './errors.ts';

export type ParseResult =
  | { ok: true; expression: acorn.Expression }
  | { ok: false; error: ExpressionError };

const ACORN_OPTIONS: acorn.Options = Object.freeze({
  ecmaVersion: 2022,
  sourceType: 'script',
  locations: true,
  allowHashBang: false,
  allowReturnOutsideFunction: false,
  allowAwaitOutsideFunction: false,
  allowImportExportEverywhere: false,
  allowReserved: true,
});

/**
 * Parses one expression of the rule language.
 *
 * @example
 * parseSource('loan.amount <= 10000', DEFAULT_LIMITS); // { ok: true, expression: BinaryExpression }
 */
export function parseSource(
  source: string,
  limits: Pick<CompilerLimits, 'maxExpressionLength' | 'maxNestingDepth'>,
  map: PositionMap = identity,
  what = 'expression',
): ParseResult {
  if (typeof source !== 'string') {
    return { ok: false, error: { code: 'SYNTAX_ERROR', message: `${what} must be a string` } };
  }
  if (source.length > limits.maxExpressionLength) {
    return {
      ok: false,
      error: {
        code: 'TOO_LONG',
        message: `${what} is longer than ${limits.maxExpressionLength} characters`,
        ...map(positionOf(source, limits.maxExpressionLength)),
      },
    };
  }
  const tooDeep = scanNesting(source, limits.maxNestingDepth);
  if (tooDeep !== undefined) {
    return {
      ok: false,
      error: {
        code: 'TOO_DEEP',
        message: `${what} is nested more than ${limits.maxNestingDepth} levels deep`,
        ...map(tooDeep),
      },
    };
  }
  let program: acorn.Program;
  try {
    program = acorn.parse(source, ACORN_OPTIONS);
  } catch (err) {
    return { ok: false, error: parserError(err, what, map) };
  }
  if (program.body.length === 0) {
    return { ok: false, error: { code: 'SYNTAX_ERROR', message: `${what} is empty`, ...map({ line: 1, column: 1 }) } };
  }
  const first = program.body[0];
  if (first.type !== 'ExpressionStatement') {
    return {
      ok: false,
      error: {
        code: 'NOT_ALLOWED',
        message: `${statementName(first.type)} is not allowed: ${what} must be a single expression`,
        ...map(start(first)),
      },
    };
  }
  if (program.body.length > 1) {
    return {
      ok: false,
      error: {
        code: 'SYNTAX_ERROR',
        message: `unexpected text after the ${what}: it must be a single expression`,
        ...map(start(program.body[1])),
      },
    };
  }
  return { ok: true, expression: first.expression };
}

/**
 * The 1-based line and column of a character offset.
 *
 * @example
 * positionOf('a &&\n  b', 7); // { line: 2, column: 3 }
 */
export function positionOf(source: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < source.length; i++) {
    const ch = source[i];
    if (ch === '\n' || ch === '\u2028' || ch === '\u2029' || (ch === '\r' && source[i + 1] !== '\n')) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

function start(node: acorn.Node): { line: number; column: number } {
  const loc = node.loc?.start;
  return loc === undefined ? { line: 1, column: node.start + 1 } : { line: loc.line, column: loc.column + 1 };
}

function parserError(err: unknown, what: string, map: PositionMap): ExpressionError {
  if (err instanceof RangeError) {
    return { code: 'TOO_DEEP', message: `${what} is nested too deeply to parse`, ...map({ line: 1, column: 1 }) };
  }
  if (err instanceof SyntaxError) {
    const loc = (err as SyntaxError & { loc?: { line: number; column: number } }).loc;
    // acorn appends "(line:column)"; the position travels in its own fields.
    const message = err.message.replace(/ \(\d+:\d+\)$/, '');
    return loc === undefined
      ? { code: 'SYNTAX_ERROR', message }
      : { code: 'SYNTAX_ERROR', message, ...map({ line: loc.line, column: loc.column + 1 }) };
  }
  return { code: 'SYNTAX_ERROR', message: `${what} could not be parsed` };
}

const STATEMENT_NAMES: ReadonlyMap<string, string> = new Map([
  ['VariableDeclaration', 'a variable declaration'],
  ['FunctionDeclaration', '`function`'],
  ['ClassDeclaration', 'a class'],
  ['IfStatement', '`if`'],
  ['ForStatement', '`for`'],
  ['ForInStatement', '`for`'],
  ['ForOfStatement', '`for`'],
  ['WhileStatement', '`while`'],
  ['DoWhileStatement', '`do`'],
  ['ReturnStatement', '`return`'],
  ['ThrowStatement', '`throw`'],
  ['TryStatement', '`try`'],
  ['BlockStatement', 'a block'],
  ['EmptyStatement', 'an empty statement'],
  ['LabeledStatement', 'a label'],
  ['WithStatement', '`with`'],
  ['SwitchStatement', '`switch`'],
  ['DebuggerStatement', '`debugger`'],
  ['BreakStatement', '`break`'],
  ['ContinueStatement', '`continue`'],
]);

function statementName(type: string): string {
  return STATEMENT_NAMES.get(type) ?? 'a statement';
}

/**
 * The 1-based position of the first bracket that opens level `max + 1`, or
 * undefined. Strings, template text and comments are skipped; brackets in a
 * regular-expression literal are counted, which can only refuse a construct
 * that is refused anyway.
 */
function scanNesting(source: string, max: number): { line: number; column: number } | undefined {
  let depth = 0;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === '\n' || ch === '\u2028' || ch === '\u2029' || (ch === '\r' && source[i + 1] !== '\n')) {
      line++;
      lineStart = i + 1;
    } else if (ch === '(' || ch === '[' || ch === '{') {
      if (++depth > max) return { line, column: i - lineStart + 1 };
    } else if (ch === ')' || ch === ']' || ch === '}') {
      if (depth > 0) depth--;
    } else if (ch === '"' || ch === "'" || ch === '`') {
      for (i++; i < source.length && source[i] !== ch; i++) {
        if (source[i] === '\\') i++;
        else if (source[i] === '\n') {
          line++;
          lineStart = i + 1;
        }
      }
    } else if (ch === '/' && source[i + 1] === '/') {
      while (i + 1 < source.length && source[i + 1] !== '\n' && source[i + 1] !== '\r') i++;
    } else if (ch === '/' && source[i + 1] === '*') {
      for (i += 2; i < source.length && !(source[i] === '*' && source[i + 1] === '/'); i++) {
        if (source[i] === '\n') {
          line++;
          lineStart = i + 1;
        }
      }
      i++;
    }
  }
  return undefined;
}
