/**
 * MISSING_VALUE_MESSAGE: a `required` rule fails when its field is missing,
 * and its message is then rendered with `$value` undefined, which a
 * placeholder renders as nothing: `{{ $value }} is not an e-mail address`
 * reads " is not an e-mail address". A placeholder that tests `$value`
 * itself (`{{ $value ?? 'nothing' }}`, `{{ $value ? $value : 'no e-mail' }}`)
 * says what it shows for a missing field and is left alone.
 *
 * A pass over the placeholder's IR; where it points is the span lower.ts
 * put on the `$value` node (expression/source-span.ts).
 */
import type { Expr } from '../expression/ir.ts';
import { irChildren } from '../expression/ir-walk.ts';
import { spanOf, type SourceSpan } from '../expression/source-span.ts';

/**
 * Where the first `$value` of a placeholder's IR shows as nothing for a
 * missing field, or undefined when the expression reads no `$value` or
 * decides itself what to show without one.
 *
 * @example
 * bareValueIn(lowered('$value')); // { start: 0, end: 6, line: 1, column: 1 }
 * bareValueIn(lowered("$value ?? 'nothing'")); // undefined
 */
export function bareValueIn(expression: Expr): SourceSpan | undefined {
  let first: SourceSpan | undefined;
  // Iterative: expressions are bounded in depth, but no walk here needs to trust that.
  const stack: Expr[] = [expression];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (testsValue(node)) return undefined;
    const span = isValue(node) ? spanOf(node) : undefined;
    if (span !== undefined && (first === undefined || span.start < first.start)) first = span;
    for (const child of irChildren(node)) stack.push(child);
  }
  return first;
}

/** `$value ?? x`, `$value || x`, `cond($value) ? a : b`: the expression chooses what to show for a missing value. */
function testsValue(node: Expr): boolean {
  if (node.kind === 'logical') return (node.op === '??' || node.op === '||') && readsValue(node.left);
  if (node.kind === 'conditional') return readsValue(node.test);
  return false;
}

function readsValue(expression: Expr): boolean {
  const stack: Expr[] = [expression];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (isValue(node)) return true;
    for (const child of irChildren(node)) stack.push(child);
  }
  return false;
}

function isValue(node: Expr): boolean {
  return node.kind === 'root' && node.name === 'value';
}
