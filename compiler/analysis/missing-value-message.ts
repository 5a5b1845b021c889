/**
 * MISSING_VALUE_MESSAGE: a `required` rule fails when its field is missing,
 * and its message is then rendered with `$value` undefined, which a
 * placeholder renders as nothing: `{{ $value }} is not an e-mail address`
 * reads " is not an e-mail address". A placeholder that tests `$value`
 * itself (`{{ $value ?? 'nothing' }}`, `{{ $value ? $value : 'no e-mail' }}`)
 * says what it shows for a missing field and is left alone.
 */
import type * as acorn from 'acorn';

/**
 * The first `$value` in a placeholder's expression that shows as nothing
 * for a missing field, or undefined when the expression reads no `$value`
 * or decides itself what to show without one.
 *
 * @example
 * bareValueIn(parseExpression('$value')); // the Identifier node
 * bareValueIn(parseExpression("$value ?? 'nothing'")); // undefined
 */
export function bareValueIn(expression: acorn.Node): acorn.Node | undefined {
  let first: acorn.Node | undefined;
  // Iterative: expressions are bounded in depth, but no walk here needs to trust that.
  const stack: acorn.Node[] = [expression];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (testsValue(node)) return undefined;
    if (isValue(node) && (first === undefined || node.start < first.start)) first = node;
    for (const child of childNodes(node)) stack.push(child);
  }
  return first;
}

/** `$value ?? x`, `$value || x`, `cond($value) ? a : b`: the expression chooses what to show for a missing value. */
function testsValue(node: acorn.Node): boolean {
  if (node.type === 'LogicalExpression') {
    const logical = node as acorn.LogicalExpression;
    return (logical.operator === '??' || logical.operator === '||') && readsValue(logical.left);
  }
  if (node.type === 'ConditionalExpression') return readsValue((node as acorn.ConditionalExpression).test);
  return false;
}

function readsValue(expression: acorn.Node): boolean {
  const stack: acorn.Node[] = [expression];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (isValue(node)) return true;
    for (const child of childNodes(node)) stack.push(child);
  }
  return false;
}

function isValue(node: acorn.Node): boolean {
  return node.type === 'Identifier' && (node as acorn.Identifier).name === '$value';
}

/** The nodes directly under `node` (of any kind: acorn nodes are plain objects with a `type`). */
function childNodes(node: acorn.Node): acorn.Node[] {
  const children: acorn.Node[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key === 'loc') continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item !== null && typeof item === 'object' && typeof (item as { type?: unknown }).type === 'string') children.push(item as acorn.Node);
    }
  }
  return children;
}
