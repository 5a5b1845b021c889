/**
 * Walking the IR: the nodes directly under a node, callback bodies
 * included, for passes that read every node (compiler/analysis/).
 */
import type { Expr } from './ir.ts';

/**
 * The IR nodes directly under `e`, a callback's body included.
 *
 * @example
 * irChildren(lowered('a.every(x => x > 0)')); // [a, x > 0]
 */
export function irChildren(e: Expr): Expr[] {
  switch (e.kind) {
    case 'array':
      return e.items;
    case 'member':
      return [e.object];
    case 'unary':
      return [e.argument];
    case 'binary':
    case 'logical':
      return [e.left, e.right];
    case 'conditional':
      return [e.test, e.consequent, e.alternate];
    case 'call':
      return e.args;
    case 'matches':
      return [e.subject];
    case 'method':
      return [e.object, ...e.args];
    case 'callback':
      return [e.object, e.body];
    default:
      return [];
  }
}
