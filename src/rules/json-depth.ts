/**
 * Depth of parsed JSON, measured without recursion: JSON.parse accepts
 * nesting far deeper than any recursive walker (or JSON.stringify) survives.
 */

/**
 * True when `value` nests objects or arrays deeper than `maxDepth`. A
 * scalar has depth 0, `{}` and `[]` depth 1, `{"a": [1]}` depth 2.
 *
 * @example
 * jsonDepthExceeds({ a: [1] }, 1); // true
 */
export function jsonDepthExceeds(value: unknown, maxDepth: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (item.value === null || typeof item.value !== 'object') continue;
    const depth = item.depth + 1;
    if (depth > maxDepth) return true;
    const children = Array.isArray(item.value) ? item.value : Object.values(item.value);
    for (const child of children) stack.push({ value: child, depth });
  }
  return false;
}
