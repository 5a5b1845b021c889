/**
 * Prototype-poisoning keys in parsed JSON (`__proto__`, and `constructor`
 * holding an object with an own `prototype`), the same two checks as
 * secure-json-parse, but reporting where the key is so the 400 can name it.
 */
import { appendPath } from '../../compiler/paths.ts';

// JSON may spell any character as \uXXXX, so "\u005f_proto__" is the key
// "__proto__" once parsed; any escape therefore forces the full scan.
const SUSPICIOUS = /__proto__|constructor|\\u/;

/** True when the raw JSON text could hold a poisoning key; false proves it cannot. */
export function mayHavePrototypeKeys(text: string): boolean {
  return SUSPICIOUS.test(text);
}

/**
 * The path (product.md 2.4 syntax) of the first poisoning key in a parsed
 * JSON value, or undefined. Iterative: bodies may nest deeper than the stack.
 *
 * @example
 * findPrototypeKey(JSON.parse('{"a":{"__proto__":{}}}')); // 'a.__proto__'
 */
export function findPrototypeKey(value: unknown): string | undefined {
  const stack: { value: unknown; path: string }[] = [{ value, path: '' }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], path: appendPath(path, i) });
      continue;
    }
    const keys = Object.keys(current);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i];
      const child = (current as Record<string, unknown>)[key];
      if (key === '__proto__') return appendPath(path, key);
      if (key === 'constructor' && typeof child === 'object' && child !== null && Object.hasOwn(child, 'prototype')) {
        return appendPath(appendPath(path, key), 'prototype');
      }
      stack.push({ value: child, path: appendPath(path, key) });
    }
  }
  return undefined;
}
