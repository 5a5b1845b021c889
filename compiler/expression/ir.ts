/**
 * The small typed IR between the checked AST and generated code. Every
 * node is something the language allows; generators switch on `kind` and
 * never see acorn nodes or source text.
 */
import { BOOLEAN_BINARY_OPERATORS, BOOLEAN_FUNCTIONS } from '../language/index.ts';
import type { Matcher } from '../runtime.ts';

/**
 * The names of 3.1 that are not payload fields, and the names of a
 * decision table (`$cell` in a cell, `$row` and `$rowIndex` in the rule
 * of a table), which the checker allows only there (LowerOptions.tableNames).
 */
export type RootName = 'payload' | 'value' | 'item' | 'index' | 'expected' | TableRootName;

/** The names a decision table adds (compiler/table/). */
export type TableRootName = 'cell' | 'row' | 'rowIndex';

export type BinaryOp = '==' | '!=' | '<' | '<=' | '>' | '>=' | '+' | '-' | '*' | '/' | '%' | '**';
export type LogicalOp = '&&' | '||' | '??';
export type UnaryOp = '!' | '-' | '+';
export type CallbackMethod = 'every' | 'some' | 'filter' | 'map' | 'find';
export type ValueMethod = 'startsWith' | 'endsWith' | 'includes' | 'toLowerCase' | 'toUpperCase' | 'trim';

/** A literal of 3.2 other than arrays (finite numbers only). */
export type Primitive = string | number | boolean | null;

export type Expr =
  | { kind: 'literal'; value: Primitive }
  /** An array literal; `constant` when every element is a literal (then it is hoisted). */
  | { kind: 'array'; items: Expr[]; constant: boolean }
  | { kind: 'root'; name: RootName }
  /** A callback parameter; `depth` 1 is the outer callback, 2 the inner one. */
  | { kind: 'param'; depth: number }
  /** Own-property read; `key` "length" reads a string's length as well. */
  | { kind: 'member'; object: Expr; key: string | number }
  | { kind: 'unary'; op: UnaryOp; argument: Expr }
  | { kind: 'binary'; op: BinaryOp; left: Expr; right: Expr }
  | { kind: 'logical'; op: LogicalOp; left: Expr; right: Expr }
  | { kind: 'conditional'; test: Expr; consequent: Expr; alternate: Expr }
  | { kind: 'now' }
  /** A function of 3.4 other than `now` and `matches`. */
  | { kind: 'call'; fn: string; args: Expr[] }
  | { kind: 'matches'; subject: Expr; pattern: string; matcher: Matcher; weight: number }
  | { kind: 'method'; method: ValueMethod; object: Expr; args: Expr[] }
  /** `object.method(param => body)`; `depth` is this callback's level (1 or 2). */
  | { kind: 'callback'; method: CallbackMethod; object: Expr; depth: number; body: Expr };

/** True when a node always evaluates to a boolean, so `=== true` can be left out. */
export function isBoolean(e: Expr): boolean {
  switch (e.kind) {
    case 'literal':
      return typeof e.value === 'boolean';
    case 'unary':
      return e.op === '!';
    case 'binary':
      return BOOLEAN_BINARY_OPERATORS.has(e.op);
    case 'logical':
      return e.op !== '??' && isBoolean(e.left) && isBoolean(e.right);
    case 'conditional':
      return isBoolean(e.consequent) && isBoolean(e.alternate);
    case 'matches':
      return true;
    case 'call':
      return BOOLEAN_FUNCTIONS.has(e.fn);
    case 'method':
      // An array literal is always an array, so its `.includes` is always a boolean.
      return e.method === 'includes' && e.object.kind === 'array';
    default:
      return false;
  }
}

/** The value of a literal or of an array of literals, for hoisting and inference. */
export function constantValue(e: Expr): { ok: true; value: unknown } | { ok: false } {
  if (e.kind === 'literal') return { ok: true, value: e.value };
  if (e.kind === 'array' && e.constant) {
    const values: unknown[] = [];
    for (const item of e.items) {
      const v = constantValue(item);
      if (!v.ok) return v;
      values.push(v.value);
    }
    return { ok: true, value: values };
  }
  return { ok: false };
}
