/**
 * Prototype-poisoning keys in parsed JSON (`__proto__`, and `constructor`
 * holding an object with an own `prototype`), the same two checks as
 * secure-json-parse, but reporting where the key is so the 400 can name it.
 *
 * Every body is screened, so the work is in three steps of rising cost: a
 * text search that clears almost every body, a walk that only says whether
 * a poisoning key is there, and, for bodies that hold one, the walk that
 * names it.
 */
import { appendPath } from '../../compiler/paths.ts';

/**
 * True when the raw JSON text could hold a poisoning key; false proves it cannot.
 *
 * Both keys that matter, `__proto__` and the `prototype` that `constructor`
 * must hold, contain `proto`. JSON can spell a letter only as itself or as
 * a `\uXXXX` escape (its other escapes stand for punctuation and control
 * characters), so a text with neither `proto` nor `\u` holds neither key.
 * Two plain substring searches cost a third of one regex alternation of
 * the three words, and `p` is a rarer first byte to look for than `c`.
 */
export function mayHavePrototypeKeys(text: string): boolean {
  return text.includes('\\u') || text.includes('proto');
}

/**
 * The path (docs/rule-language.md syntax) of the first poisoning key in a parsed
 * JSON value, or undefined. Iterative: bodies may nest deeper than the stack.
 *
 * @example
 * findPrototypeKey(JSON.parse('{"a":{"__proto__":{}}}')); // 'a.__proto__'
 */
export function findPrototypeKey(value: unknown): string | undefined {
  if (objectPrototypeIsPristine() && !holdsPrototypeKey(value)) return undefined;
  return firstPrototypeKey(value);
}

/**
 * True while Object.prototype has no enumerable property, as in any
 * process nobody has polluted. `for...in` over JSON.parse output (plain
 * objects) then enumerates exactly the own keys that Object.keys returns,
 * and V8 serves it from each object's enum cache instead of a megamorphic
 * keyed load per property. Checked on every use, since pollution is what
 * this module exists to prevent.
 *
 * @example
 * objectPrototypeIsPristine(); // true
 */
export function objectPrototypeIsPristine(): boolean {
  for (const _key in Object.prototype) return false;
  return true;
}

/**
 * False when `value` holds no poisoning key, without building any path:
 * bodies with `\u` escapes (non-ASCII text from many JSON encoders) or a
 * word like `protocol` pass the text search and end up here. Needs
 * objectPrototypeIsPristine(); see there.
 */
function holdsPrototypeKey(value: unknown): boolean {
  const pending: object[] = [];
  let current = value;
  for (;;) {
    if (Array.isArray(current)) {
      for (let i = 0; i < current.length; i++) {
        const child: unknown = current[i];
        if (typeof child === 'object' && child !== null) pending.push(child);
      }
    } else if (typeof current === 'object' && current !== null) {
      for (const key in current) {
        if (key === '__proto__') return true;
        const child: unknown = (current as Record<string, unknown>)[key];
        if (typeof child !== 'object' || child === null) continue;
        if (key === 'constructor' && Object.hasOwn(child, 'prototype')) return true;
        pending.push(child);
      }
    }
    if (pending.length === 0) return false;
    current = pending.pop();
  }
}

/** The walk that names the key: depth first, each object's keys last to first. */
function firstPrototypeKey(value: unknown): string | undefined {
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
