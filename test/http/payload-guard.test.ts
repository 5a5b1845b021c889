/**
 * The payload guard's answers, paths included: the path is rebuilt only
 * when something fails, and must be the one docs/rule-language.md spells. The
 * guard has a fast walk for payloads that pass and an exact one for those
 * that fail; both are held to the walk of record below.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loanApplicationSuite } from '../../bench/suites/loan-application.ts';
import { appendPath } from '../../compiler/paths.ts';
import type { FieldError } from '../../src/errors.ts';
import { checkPayload, measurePayload, sizeOf, type PayloadSize } from '../../src/http/payload-guard.ts';

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

/**
 * The walk the guard had before its fast path (kept here as the oracle):
 * every verdict, path and size figure must stay what it was, since the
 * figures feed the cost estimate of src/validators/evaluation-cost.ts.
 */
function walkOfRecord(payload: unknown, basePath: string, maxDepth: number, size?: PayloadSize): FieldError | undefined {
  const stack: Array<{ value: unknown; depth: number; path: string }> = [{ value: payload, depth: 1, path: basePath }];
  let values = 1;
  let characters = typeof payload === 'string' ? payload.length : 0;
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > maxDepth) return { path, message: `is nested deeper than ${maxDepth} levels` };
    const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((child, i) => [i, child]) : Object.entries(value);
    values += entries.length;
    for (const [key, child] of entries) {
      if (typeof key === 'string') characters += key.length;
      if (typeof child === 'string') characters += child.length;
      else if (typeof child === 'number' && !Number.isFinite(child)) return { path: appendPath(path, key), message: 'must be a finite number' };
      else if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: depth + 1, path: appendPath(path, key) });
    }
  }
  if (size !== undefined) {
    size.values += values;
    size.characters += characters;
  }
  return undefined;
}

const leafArb = fc.oneof(
  { weight: 4, arbitrary: fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.boolean(), fc.constant(null)) },
  { weight: 1, arbitrary: fc.constantFrom(Infinity, -Infinity, NaN, 1.5, -0) },
);
const valueArb: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { maxDepth: 6, depthIdentifier: 'payload' },
    leafArb,
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom('a', 'b c', '0', '10', 'first-name', 'x'), tie('v'), { maxKeys: 4 }),
  ),
})).v;

describe('checkPayload against the walk of record', () => {
  it('gives the same violation, path and size for any payload and depth limit', () => {
    fc.assert(fc.property(valueArb, fc.integer({ min: 1, max: 6 }), (payload, maxDepth) => {
      const size: PayloadSize = { values: 3, characters: 5 };
      const expectedSize: PayloadSize = { values: 3, characters: 5 };
      const violation = walkOfRecord(payload, 'items[1].payload', maxDepth, expectedSize);
      expect(checkPayload(payload, 'items[1].payload', maxDepth, size)).toEqual(violation);
      expect(size).toEqual(expectedSize);
      const measured = violation === undefined ? sizeOf({ values: expectedSize.values - 3, characters: expectedSize.characters - 5 }) : -1;
      expect(measurePayload(payload, maxDepth)).toBe(measured);
    }), { numRuns: 3000 });
  });

  it('sizes the loan payload of the benchmarks as before', () => {
    const payload = JSON.parse(JSON.stringify(loanApplicationSuite.payloads.passing)) as unknown;
    const size: PayloadSize = { values: 0, characters: 0 };
    expect(checkPayload(payload, 'payload', 64, size)).toBeUndefined();
    expect(size).toEqual({ values: 57, characters: 655 });
    expect(measurePayload(payload, 64)).toBe(sizeOf(size));
  });

  it('reports the violation the old walk reported first when there are several', () => {
    const payload = { a: { b: Infinity }, c: [{ d: { e: 1 } }], f: NaN };
    expect(checkPayload(payload, 'payload', 3)).toEqual({ path: 'payload.f', message: 'must be a finite number' });
    expect(checkPayload({ a: { b: Infinity }, c: [{ d: { e: 1 } }] }, 'payload', 3)).toEqual({ path: 'payload.c[0].d', message: 'is nested deeper than 3 levels' });
  });
});

describe('checkPayload at the depth limits', () => {
  const deepArrays = (levels: number): unknown => JSON.parse(`${'['.repeat(levels)}1${']'.repeat(levels)}`);

  it('walks the largest configurable depth, 1000, and refuses one more level', () => {
    const size: PayloadSize = { values: 0, characters: 0 };
    expect(checkPayload(deepArrays(1000), 'payload', 1000, size)).toBeUndefined();
    expect(size).toEqual({ values: 1001, characters: 0 });
    expect(checkPayload(deepArrays(1001), 'payload', 1000)).toEqual({ path: `payload${'[0]'.repeat(1000)}`, message: 'is nested deeper than 1000 levels' });
  });

  it('answers without overflowing for nesting deeper than the stack, whatever the limit', () => {
    const payload = deepArrays(200_000);
    const size: PayloadSize = { values: 0, characters: 0 };
    expect(checkPayload(payload, 'payload', Infinity, size)).toBeUndefined();
    expect(size).toEqual({ values: 200_001, characters: 0 });
    expect(measurePayload(payload, Infinity)).toBe(200_001);
    expect(checkPayload(payload, 'payload', 199_999)?.message).toBe('is nested deeper than 199999 levels');
  });

  it('refuses any object under a limit below one level', () => {
    expect(checkPayload({}, 'payload', 0)).toEqual({ path: 'payload', message: 'is nested deeper than 0 levels' });
  });
});

describe('checkPayload with a polluted Object.prototype', () => {
  // The fast walk reads keys with for...in, which would also see inherited
  // enumerable keys; with any on Object.prototype the exact walk answers.
  function withPollution(value: unknown, run: () => void): void {
    Object.defineProperty(Object.prototype, 'polluted', { value, enumerable: true, configurable: true, writable: true });
    try {
      run();
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
  }

  it.each([
    ['a non-finite number', Infinity],
    ['deep nesting', { a: { b: { c: { d: {} } } } }],
  ])('does not refuse a clean payload because of %s', (_name, value) => {
    const payload = JSON.parse('{"a":{"b":[1,"x"]}}') as unknown;
    withPollution(value, () => {
      const size: PayloadSize = { values: 0, characters: 0 };
      expect(checkPayload(payload, 'payload', 3, size)).toBeUndefined();
      expect(size).toEqual({ values: 5, characters: 3 });
      expect(measurePayload(payload, 3)).toBe(sizeOf(size));
    });
  });

  it('still reports the payload\'s own violation', () => {
    withPollution(1, () => {
      expect(checkPayload(JSON.parse('{"a":{"b":[1,1e400]}}'), 'payload', 3)).toEqual({ path: 'payload.a.b[1]', message: 'must be a finite number' });
    });
  });
});
