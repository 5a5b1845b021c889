/**
 * Walking the IR: the nodes directly under a node, for code generation
 * (which leaves callback bodies to the callback's own scope) and for
 * passes that read every node (compiler/analysis/).
 */
import type { Expr } from './ir.ts';

/**
 * The IR nodes directly under `x`, without a callback's body: what is
 * evaluated in `x`'s own scope.
 */
export function childrenOf(x: Expr): Expr[] {
  switch (x.kind) {
    case 'array':
      return x.items;
    case 'member':
      return [x.object];
    case 'unary':
      return [x.argument];
    case 'binary':
    case 'logical':
      return [x.left, x.right];
    case 'conditional':
      return [x.test, x.consequent, x.alternate];
    case 'call':
      return x.args;
    case 'matches':
      return [x.subject];
    case 'method':
      return [x.object, ...x.args];
    case 'callback':
      return [x.object];
    default:
      return [];
  }
}

/**
 * The IR nodes directly under `e`, a callback's body included.
 *
 * @example
 * irChildren(lowered('a.every(x => x > 0)')); // [a, x > 0]
 */
export function irChildren(e: Expr): Expr[] {
  return e.kind === 'callback' ? [e.object, e.body] : childrenOf(e);
}
