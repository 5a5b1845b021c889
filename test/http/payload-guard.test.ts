/**
 * The payload guard's answers, paths included: the path is rebuilt only
 * when something fails, and must be the one product.md 2.4 spells.
 */
import { describe, expect, it } from 'vitest';
import { checkPayload, type PayloadSize } from '../../src/http/payload-guard.ts';

const nested = (levels: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
};

describe('checkPayload', () => {
  it.each([
    ['a passing payload', { a: [1, { b: 'x' }], c: null }, 'payload', undefined],
    ['Infinity at the top', { amount: Infinity }, 'payload', { path: 'payload.amount', message: 'must be a finite number' }],
    ['NaN deep in arrays', { a: [1, [2, NaN]] }, 'payload', { path: 'payload.a[1][1]', message: 'must be a finite number' }],
    ['too deep through arrays and objects', { a: [1, { b: [2] }] }, 'payload', { path: 'payload.a[1].b', message: 'is nested deeper than 3 levels' }],
    ['a key that needs quoting', { 'first-name': [{ 'x y': -Infinity }] }, 'payload', { path: 'payload["first-name"][0]["x y"]', message: 'must be a finite number' }],
    ['a batch item base path', { a: { b: Infinity } }, 'items[2].payload', { path: 'items[2].payload.a.b', message: 'must be a finite number' }],
    ['one level too deep', nested(4), 'payload', { path: 'payload.a.a.a', message: 'is nested deeper than 3 levels' }],
    ['exactly as deep as allowed', nested(3), 'payload', undefined],
  ])('%s', (_name, payload, basePath, expected) => {
    expect(checkPayload(payload, basePath, 3)).toEqual(expected);
  });

  it('adds the payload size when it passes', () => {
    const size: PayloadSize = { values: 0, characters: 0 };
    expect(checkPayload({ ab: ['xyz', 1, { c: true }] }, 'payload', 64, size)).toBeUndefined();
    expect(size).toEqual({ values: 6, characters: 6 });
  });
});
