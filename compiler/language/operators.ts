/**
 * The operators of docs/rule-language.md section 5, one record per token
 * as written. The checker (compiler/expression/lower.ts) takes exactly
 * these; the docs' operators table is checked against the compiler.
 */
import type { OperatorRecord } from './types.ts';

function op(token: string, irOp: string, family: OperatorRecord['family'], boolean: boolean, doc: string, arity: OperatorRecord['arity'] = 'infix'): OperatorRecord {
  return { token, arity, op: irOp, family, boolean, doc };
}

export const OPERATOR_RECORDS: readonly OperatorRecord[] = [
  op('==', '==', 'equality', true, 'strict deep equality'),
  op('===', '==', 'equality', true, 'the same as `==`'),
  op('!=', '!=', 'equality', true, 'the negation of `==`'),
  op('!==', '!=', 'equality', true, 'the same as `!=`'),
  op('<', '<', 'comparison', true, 'less than, for two numbers or two strings'),
  op('<=', '<=', 'comparison', true, 'less than or equal, typed like `<`'),
  op('>', '>', 'comparison', true, 'greater than, typed like `<`'),
  op('>=', '>=', 'comparison', true, 'greater than or equal, typed like `<`'),
  op('+', '+', 'arithmetic', false, 'add numbers, or join two strings'),
  op('-', '-', 'arithmetic', false, 'subtraction'),
  op('*', '*', 'arithmetic', false, 'multiplication'),
  op('/', '/', 'arithmetic', false, 'division'),
  op('%', '%', 'arithmetic', false, 'remainder (with the sign of the left operand)'),
  op('**', '**', 'arithmetic', false, 'power (right to left)'),
  op('&&', '&&', 'logical', false, 'and'),
  op('||', '||', 'logical', false, 'or'),
  op('??', '??', 'logical', false, 'null coalescing'),
  op('!', '!', 'negation', true, 'not', 'prefix'),
  op('-', '-', 'arithmetic', false, 'negation, numbers only', 'prefix'),
  op('+', '+', 'arithmetic', false, 'plus, numbers only', 'prefix'),
];
