/**
 * The allow-list checker: walks acorn's AST and lowers what docs/rule-language.md
 * 3.1-3.4 names to the IR; everything else is refused with NOT_ALLOWED (or
 * a more precise code) and the construct's line and column.
 *
 * Names are checked on the source text as well as on acorn's decoded name,
 * so `\u0063onstructor` cannot pass as `constructor` (Caja#1865). Payload
 * fields, function names and callback parameters live in separate
 * namespaces: a listed function used as a value is refused, and a payload
 * field with a function's name is read as `$.min`.
 */
import type * as acorn from 'acorn';
import type { CompileErrorCode, CompilerLimits } from '../types.ts';
import type { Matcher } from '../runtime.ts';
import { CALLBACK_METHODS, DOLLAR_NAMES, FUNCTIONS, TABLE_NAMES, VALUE_METHODS, arityText } from './catalog.ts';
import { ExpressionFailure, type Position, type PositionMap } from './errors.ts';
import type { BinaryOp, CallbackMethod, Expr, TableRootName } from './ir.ts';
import { INFIX_OPERATORS, suggestFunction, suggestMethod } from '../language/index.ts';
import { withSpan } from './source-span.ts';

/** What `compilePattern` of compiler/regex returns, as the checker needs it. */
export type PatternResult =
  | { ok: true; matcher: Matcher; weight: number }
  | { ok: false; code: 'UNSAFE_PATTERN' | 'INVALID_PATTERN' | 'TOO_LONG'; message: string; offset?: number };

export interface LowerOptions {
  limits: Pick<CompilerLimits, 'maxNestingDepth' | 'maxCallbackDepth' | 'maxPatternLength'>;
  /** The regex policy of 3.4; called once per `matches()` at compile time. */
  compilePattern: (pattern: string) => PatternResult;
  /** From positions inside `source` to positions inside the rule field. */
  map: PositionMap;
  /**
   * The decision-table names this expression may use: `$cell` in a table's
   * cell, `$row` and `$rowIndex` in the expression and message of a rule
   * with a table. Anywhere else they are refused.
   */
  tableNames?: ReadonlySet<TableRootName>;
  /** Where `source` starts inside its field (a placeholder inside its message), for the offsets of the IR's spans; 0 if absent. */
  offset?: number;
}

const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PROPERTY_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** The infix operators of the language's records, as acorn names them, to their IR operator. */
const BINARY = INFIX_OPERATORS as ReadonlyMap<string, BinaryOp>;

const REFUSED_NODES: ReadonlyMap<string, string> = new Map([
  ['AssignmentExpression', 'assignment'],
  ['UpdateExpression', 'the update operator (`++`/`--`)'],
  ['NewExpression', '`new`'],
  ['ThisExpression', '`this`'],
  ['Super', '`super`'],
  ['FunctionExpression', '`function`'],
  ['ClassExpression', 'a class'],
  ['SequenceExpression', 'the comma operator'],
  ['ObjectExpression', 'an object literal'],
  ['TemplateLiteral', 'a template literal'],
  ['TaggedTemplateExpression', 'a tagged template'],
  ['ChainExpression', 'optional chaining (`?.`)'],
  ['AwaitExpression', '`await`'],
  ['YieldExpression', '`yield`'],
  ['ImportExpression', '`import()`'],
  ['MetaProperty', '`new.target` / `import.meta`'],
  ['SpreadElement', 'spread (`...`)'],
  ['PrivateIdentifier', 'a private name'],
  ['ArrowFunctionExpression', 'an arrow function outside a callback of every/some/filter/map/find'],
]);

/** "; did you mean `now()`?" for a suggestion of the language's records, or nothing. */
function didYouMean(suggestion: string | undefined): string {
  return suggestion === undefined ? '' : `; did you mean ${suggestion}?`;
}

/**
 * Lowers a parsed expression to IR, or throws ExpressionFailure.
 *
 * @example
 * lowerExpression(parsed, source, options); // { kind: 'binary', op: '<=', ... }
 */
export function lowerExpression(node: acorn.Expression, source: string, options: LowerOptions): Expr {
  // The root is level 0: 64 nested operators are allowed, as 64 nested parentheses are.
  return new Lowering(source, options).expr(node, 0);
}

class Lowering {
  readonly #source: string;
  readonly #options: LowerOptions;
  /** Callback parameter names, outermost first. */
  readonly #params: string[] = [];
  /**
   * Nesting including flat chains (`a + b + c ...`, `a.b.c ...`): generated
   * code nests that deep, and V8 refuses to compile calls nested about a
   * thousand deep, so chains are bounded too, at four times the limit.
   */
  #chain = 0;

  constructor(source: string, options: LowerOptions) {
    this.#source = source;
    this.#options = options;
  }

  expr(node: acorn.Node, depth: number): Expr {
    const max = this.#options.limits.maxNestingDepth;
    if (depth > max) this.fail('TOO_DEEP', `expression is nested more than ${max} levels deep`, node);
    if (++this.#chain > max * 4) {
      this.fail('TOO_DEEP', `expression chains more than ${max * 4} operations or fields into one another`, node);
    }
    const result = this.node(node, depth);
    this.#chain--;
    return this.located(result, node);
  }

  /** The IR node with the span of the acorn node it was lowered from (source-span.ts). */
  located(result: Expr, node: acorn.Node): Expr {
    const offset = this.#options.offset ?? 0;
    return withSpan(result, { start: offset + node.start, end: offset + node.end, ...this.position(node) });
  }

  node(node: acorn.Node, depth: number): Expr {
    const n = node as acorn.Expression;
    switch (n.type) {
      case 'Literal':
        return this.literal(n);
      case 'Identifier':
        return this.identifier(n);
      case 'ArrayExpression':
        return this.array(n, depth);
      case 'MemberExpression':
        return this.member(n, depth);
      case 'UnaryExpression':
        return this.unary(n, depth);
      case 'BinaryExpression':
        return this.binary(n, depth);
      case 'LogicalExpression':
        return this.logical(n, depth);
      case 'ConditionalExpression':
        return {
          kind: 'conditional',
          test: this.expr(n.test, depth + 1),
          consequent: this.expr(n.consequent, depth + 1),
          // `a ? b : c ? d : e` is a flat else-if chain, not nesting.
          alternate: this.expr(n.alternate, n.alternate.type === 'ConditionalExpression' ? depth : depth + 1),
        };
      case 'CallExpression':
        return this.call(n, depth);
      default:
        return this.refuse(node);
    }
  }

  refuse(node: acorn.Node): never {
    const what = REFUSED_NODES.get(node.type) ?? `\`${node.type}\``;
    return this.fail('NOT_ALLOWED', `${what} is not allowed`, node);
  }

  fail(code: CompileErrorCode, message: string, node: acorn.Node): never {
    throw new ExpressionFailure({ code, message, ...this.position(node) });
  }

  position(node: acorn.Node): Position {
    const loc = node.loc?.start;
    return this.#options.map(loc === undefined ? { line: 1, column: node.start + 1 } : { line: loc.line, column: loc.column + 1 });
  }

  /** The name as written; differs from acorn's `name` when escapes were used. */
  written(node: acorn.Node): string {
    return this.#source.slice(node.start, node.end);
  }

  literal(n: acorn.Literal): Expr {
    if (n.regex !== undefined) return this.fail('NOT_ALLOWED', 'a regular-expression literal is not allowed; use matches()', n);
    if (n.bigint !== undefined) return this.fail('NOT_ALLOWED', 'a BigInt literal is not allowed', n);
    const value = n.value;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return this.fail('NOT_ALLOWED', 'a number literal must be finite', n);
      if (/^0[0-9]/.test(this.written(n))) return this.fail('NOT_ALLOWED', 'a legacy octal literal is not allowed', n);
      return { kind: 'literal', value };
    }
    if (typeof value === 'string' || typeof value === 'boolean' || value === null) return { kind: 'literal', value };
    return this.refuse(n);
  }

  identifier(n: acorn.Identifier): Expr {
    const name = this.checkedName(n);
    const root = DOLLAR_NAMES[name] ?? TABLE_NAMES[name];
    if (root !== undefined) return { kind: 'root', name: root };
    for (let i = this.#params.length - 1; i >= 0; i--) {
      if (this.#params[i] === name) return { kind: 'param', depth: i + 1 };
    }
    if (FUNCTIONS[name] !== undefined) {
      return this.fail(
        'NOT_ALLOWED',
        `\`${name}\` is a function and can only be called; to read a payload field of that name write $.${name}`,
        n,
      );
    }
    return { kind: 'member', object: { kind: 'root', name: 'payload' }, key: name };
  }

  /** A name of the language: written without escapes, plain ASCII or a `$`-name of 3.1. */
  checkedName(n: acorn.Identifier): string {
    const name = n.name;
    if (this.written(n) !== name) {
      return this.fail('NOT_ALLOWED', `an escape sequence in the name \`${name}\` is not allowed`, n);
    }
    if (name.startsWith('$')) {
      const tableName = TABLE_NAMES[name];
      if (tableName !== undefined && this.#options.tableNames?.has(tableName) !== true) {
        const where = tableName === 'cell' ? 'in a cell of a decision table' : 'in the expression and message of a rule with a table';
        return this.fail('NOT_ALLOWED', `\`${name}\` is only allowed ${where}`, n);
      }
      if (tableName !== undefined) return name;
      if (DOLLAR_NAMES[name] === undefined) {
        return this.fail('NOT_ALLOWED', `\`${name}\` is not allowed: the only $-names are $, $value, $item, $index and $expected`, n);
      }
      return name;
    }
    if (!PLAIN_NAME.test(name)) {
      return this.fail('NOT_ALLOWED', `the name \`${name}\` is not plain ASCII; write $[${JSON.stringify(name)}]`, n);
    }
    return name;
  }

  array(n: acorn.ArrayExpression, depth: number): Expr {
    const items: Expr[] = [];
    let constant = true;
    for (const element of n.elements) {
      if (element === null) return this.fail('NOT_ALLOWED', 'an array hole is not allowed', n);
      if (element.type === 'SpreadElement') return this.refuse(element);
      const item = this.expr(element, depth + 1);
      if (item.kind !== 'literal' && !(item.kind === 'array' && item.constant)) constant = false;
      items.push(item);
    }
    return { kind: 'array', items, constant };
  }

  /** The key of `a.b` / `a["b"]` / `a[0]`. */
  memberKey(n: acorn.MemberExpression): string | number {
    const property = n.property;
    if (n.computed) {
      if (property.type === 'Literal' && property.regex === undefined && property.bigint === undefined) {
        const value = property.value;
        if (typeof value === 'string') return value;
        if (typeof value === 'number' && Number.isFinite(value)) {
          return Number.isSafeInteger(value) && value >= 0 ? value : String(value);
        }
      }
      return this.fail('NOT_ALLOWED', 'a computed member key must be a string or number literal', property);
    }
    if (property.type !== 'Identifier') return this.refuse(property);
    const name = property.name;
    if (this.written(property) !== name) {
      return this.fail('NOT_ALLOWED', `an escape sequence in the name \`${name}\` is not allowed`, property);
    }
    if (!PROPERTY_NAME.test(name)) {
      return this.fail('NOT_ALLOWED', `the field name \`${name}\` is not plain ASCII; write [${JSON.stringify(name)}]`, property);
    }
    return name;
  }

  member(n: acorn.MemberExpression, depth: number): Expr {
    if (n.optional) return this.fail('NOT_ALLOWED', 'optional chaining (`?.`) is not allowed', n);
    if (n.object.type === 'Super') return this.refuse(n.object);
    const key = this.memberKey(n);
    // Member chains (`a.b.c`) are paths, not nesting.
    return { kind: 'member', object: this.expr(n.object, depth), key };
  }

  unary(n: acorn.UnaryExpression, depth: number): Expr {
    const op = n.operator;
    if (op !== '!' && op !== '-' && op !== '+') return this.fail('NOT_ALLOWED', `\`${op}\` is not allowed`, n);
    const argument = this.expr(n.argument, depth + 1);
    // `-5` is a literal for fast paths and for expected-value inference.
    if (op === '-' && argument.kind === 'literal' && typeof argument.value === 'number') {
      return { kind: 'literal', value: -argument.value };
    }
    return { kind: 'unary', op, argument };
  }

  binary(n: acorn.BinaryExpression, depth: number): Expr {
    const op = BINARY.get(n.operator);
    if (op === undefined) return this.fail('NOT_ALLOWED', `the operator \`${n.operator}\` is not allowed`, n);
    if (n.left.type === 'PrivateIdentifier') return this.refuse(n.left);
    // Left-associative chains (`a + b + c`) stay at one level.
    const sameLevel = n.left.type === 'BinaryExpression' || n.left.type === 'LogicalExpression';
    return {
      kind: 'binary',
      op,
      left: this.expr(n.left, sameLevel ? depth : depth + 1),
      right: this.expr(n.right, depth + 1),
    };
  }

  logical(n: acorn.LogicalExpression, depth: number): Expr {
    const sameLevel = n.left.type === 'BinaryExpression' || n.left.type === 'LogicalExpression';
    return {
      kind: 'logical',
      op: n.operator,
      left: this.expr(n.left, sameLevel ? depth : depth + 1),
      right: this.expr(n.right, depth + 1),
    };
  }

  args(n: acorn.CallExpression, depth: number): Expr[] {
    return n.arguments.map((a) => (a.type === 'SpreadElement' ? this.refuse(a) : this.expr(a, depth + 1)));
  }

  call(n: acorn.CallExpression, depth: number): Expr {
    if (n.optional) return this.fail('NOT_ALLOWED', 'optional chaining (`?.`) is not allowed', n);
    const callee = n.callee;
    if (callee.type === 'Identifier') return this.functionCall(n, callee, depth);
    if (callee.type === 'MemberExpression') return this.methodCall(n, callee, depth);
    if (callee.type === 'Super' || REFUSED_NODES.has(callee.type)) return this.refuse(callee);
    return this.fail('NOT_ALLOWED', 'only the listed functions and methods can be called', callee);
  }

  functionCall(n: acorn.CallExpression, callee: acorn.Identifier, depth: number): Expr {
    const name = callee.name;
    if (this.written(callee) !== name) {
      return this.fail('NOT_ALLOWED', `an escape sequence in the name \`${name}\` is not allowed`, callee);
    }
    const spec = FUNCTIONS[name];
    if (spec === undefined) return this.fail('UNKNOWN_FUNCTION', `unknown function \`${name}\`${didYouMean(suggestFunction(name))}`, callee);
    const count = n.arguments.length;
    if (count < spec.min || count > spec.max) {
      return this.fail('BAD_ARGUMENTS', `\`${name}\` takes ${arityText(spec)}, got ${count}`, n);
    }
    if (name === 'now') return { kind: 'now' };
    if (name === 'matches') return this.matches(n, depth);
    return { kind: 'call', fn: name, args: this.args(n, depth) };
  }

  matches(n: acorn.CallExpression, depth: number): Expr {
    const [subjectNode, patternNode] = n.arguments;
    if (patternNode.type !== 'Literal' || typeof patternNode.value !== 'string') {
      return this.fail('BAD_ARGUMENTS', 'the pattern of `matches` must be a string literal', patternNode);
    }
    const pattern = patternNode.value;
    const max = this.#options.limits.maxPatternLength;
    if (pattern.length > max) return this.fail('TOO_LONG', `the pattern is longer than ${max} characters`, patternNode);
    const subject = subjectNode.type === 'SpreadElement' ? this.refuse(subjectNode) : this.expr(subjectNode, depth + 1);
    const compiled = this.#options.compilePattern(pattern);
    if (!compiled.ok) return this.fail(compiled.code, compiled.message, patternNode);
    return { kind: 'matches', subject, pattern, matcher: compiled.matcher, weight: compiled.weight };
  }

  methodCall(n: acorn.CallExpression, callee: acorn.MemberExpression, depth: number): Expr {
    if (callee.optional) return this.fail('NOT_ALLOWED', 'optional chaining (`?.`) is not allowed', callee);
    if (callee.computed) return this.fail('NOT_ALLOWED', 'a method must be called as `.name(...)`', callee.property);
    if (callee.object.type === 'Super') return this.refuse(callee.object);
    const name = this.memberKey(callee) as string;
    // The receiver first: in `/a/.test(x)` the regex literal is the problem, not `.test`.
    const object = this.expr(callee.object, depth);
    const callback = CALLBACK_METHODS[name];
    if (callback !== undefined) {
      const arg = n.arguments[0];
      if (n.arguments.length === 1 && REFUSED_NODES.has(arg.type) && arg.type !== 'ArrowFunctionExpression') {
        return this.refuse(arg);
      }
      if (n.arguments.length !== 1 || arg.type !== 'ArrowFunctionExpression') {
        return this.fail('BAD_ARGUMENTS', `\`.${name}\` takes one callback such as \`x => x > 0\``, n);
      }
      return this.callback(callback, object, arg, depth);
    }
    const spec = VALUE_METHODS[name];
    if (spec === undefined) {
      return this.fail('UNKNOWN_FUNCTION', `unknown method \`.${name}()\`${didYouMean(suggestMethod(name))}`, callee.property);
    }
    const count = n.arguments.length;
    if (count < spec.min || count > spec.max) {
      return this.fail('BAD_ARGUMENTS', `\`.${name}\` takes ${arityText(spec)}, got ${count}`, n);
    }
    return { kind: 'method', method: spec.method, object, args: this.args(n, depth) };
  }

  callback(method: CallbackMethod, object: Expr, arrow: acorn.ArrowFunctionExpression, depth: number): Expr {
    const level = this.#params.length + 1;
    const max = this.#options.limits.maxCallbackDepth;
    if (level > max) return this.fail('TOO_DEEP', `callbacks are nested more than ${max} levels deep`, arrow);
    if (arrow.async) return this.fail('NOT_ALLOWED', '`async` is not allowed', arrow);
    if (arrow.params.length !== 1) return this.fail('NOT_ALLOWED', 'a callback takes exactly one parameter', arrow);
    const param = arrow.params[0];
    if (param.type !== 'Identifier') {
      return this.fail('NOT_ALLOWED', 'a callback parameter must be a plain name (no default, no destructuring)', param);
    }
    const name = this.checkedName(param);
    if (DOLLAR_NAMES[name] !== undefined || TABLE_NAMES[name] !== undefined) {
      return this.fail('NOT_ALLOWED', `\`${name}\` cannot be a callback parameter`, param);
    }
    if (FUNCTIONS[name] !== undefined) {
      return this.fail('NOT_ALLOWED', `the callback parameter \`${name}\` would hide the function of that name`, param);
    }
    if (arrow.body.type === 'BlockStatement') {
      return this.fail('NOT_ALLOWED', 'a callback body must be an expression, not a block', arrow.body);
    }
    this.#params.push(name);
    try {
      return { kind: 'callback', method, object, depth: level, body: this.expr(arrow.body, depth + 1) };
    } finally {
      this.#params.pop();
    }
  }
}
