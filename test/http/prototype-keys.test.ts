/**
 * The prototype-poisoning screen of the body parser: the text search must
 * never clear a text that holds a poisoning key, and findPrototypeKey must
 * name the same key as the walk of record whichever of its steps answers.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appendPath } from '../../compiler/paths.ts';
import { findPrototypeKey, mayHavePrototypeKeys, objectPrototypeIsPristine } from '../../src/http/prototype-keys.ts';

/** The walk findPrototypeKey always did, kept as the oracle. */
function walkOfRecord(value: unknown): string | undefined {
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

/** JSON text whose keys are often the dangerous ones, sometimes spelled with escapes. */
const KEYS = ['a', 'constructor', 'prototype', '__proto__', '\\u005f_proto__', 'c\\u006fnstructor', 'prot\\u006ftype', 'protocol'];
const jsonArb: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
  v: fc.oneof(
    { maxDepth: 5, depthIdentifier: 'json' },
    fc.constantFrom('1', '"x"', 'null', '"constructor"', '"__proto__"', '{}'),
    fc.array(tie('v'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
    fc.uniqueArray(fc.tuple(fc.constantFrom(...KEYS), tie('v')), { maxLength: 3, selector: ([key]) => JSON.parse(`"${key}"`) as string })
      .map((entries) => `{${entries.map(([key, value]) => `"${key}":${value}`).join(',')}}`),
  ),
})).v;

describe('mayHavePrototypeKeys', () => {
  it.each([
    ['a plain body', '{"a":{"b":[1,"x"]},"constructor":"c"}', false],
    ['__proto__', '{"__proto__":{}}', true],
    ['constructor.prototype', '{"constructor":{"prototype":{}}}', true],
    ['an escape anywhere', '{"a":"\\u00e9"}', true],
    ['a harmless word with proto in it', '{"protocol":"https"}', true],
  ])('%s: %s', (_name, text, expected) => {
    expect(mayHavePrototypeKeys(text)).toBe(expected);
  });

  it('never clears a text that holds a poisoning key', () => {
    fc.assert(fc.property(jsonArb, (text) => {
      if (walkOfRecord(JSON.parse(text)) !== undefined) expect(mayHavePrototypeKeys(text)).toBe(true);
    }), { numRuns: 3000 });
  });
});

describe('findPrototypeKey', () => {
  it.each([
    ['nothing to find behind escapes', '{"n\\u00e1me":[{"protocol":"x","constructor":{"a":1}}]}', undefined],
    ['an own __proto__ key', '{"a":[{"b":1},{"__proto__":{}}]}', 'a[1].__proto__'],
    ['constructor holding prototype', '{"x":{"constructor":{"prototype":1}}}', 'x.constructor.prototype'],
    ['a __proto__ key holding a string', '{"a":{"__proto__":"x"}}', 'a.__proto__'],
    ['the later key of one object first', '{"__proto__":1,"constructor":{"prototype":{}}}', 'constructor.prototype'],
  ])('%s', (_name, text, expected) => {
    expect(findPrototypeKey(JSON.parse(text))).toBe(expected);
  });

  it('names the key the walk of record names', () => {
    fc.assert(fc.property(jsonArb, (text) => {
      const value = JSON.parse(text) as unknown;
      expect(findPrototypeKey(value)).toBe(walkOfRecord(value));
    }), { numRuns: 3000 });
  });

  it('walks bodies nested deeper than the stack', () => {
    const deep = JSON.parse(`${'[{"a":'.repeat(50_000)}{"__proto__":1}${'}]'.repeat(50_000)}`) as unknown;
    const path = findPrototypeKey(deep);
    expect(path?.endsWith('[0].a.__proto__')).toBe(true);
    expect(path).toBe(walkOfRecord(deep));
  });

  // An inherited constructor.prototype is no own key of the body, and an
  // inherited object inherits itself again: for...in would never finish.
  it.each([
    ['constructor.prototype', { constructor: { prototype: 1 } }],
    ['an object', { x: 1 }],
  ])('reads own keys only when Object.prototype holds %s', (_name, pollution) => {
    const value = JSON.parse('{"a":{"b":1}}') as unknown;
    Object.defineProperty(Object.prototype, 'polluted', { value: pollution, enumerable: true, configurable: true, writable: true });
    let path: string | undefined;
    try {
      expect(objectPrototypeIsPristine()).toBe(false);
      path = findPrototypeKey(value);
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
    expect(path).toBeUndefined();
    expect(objectPrototypeIsPristine()).toBe(true);
  });
});
