/**
 * What one rule can make the runtime build is bounded (compiler/runtime.ts):
 * a message placeholder is serialized only as far as the 2000 characters it
 * is cut at, and `+` builds no string longer than MAX_JOIN_LENGTH. Before,
 * `{{ l.map(x => $) }}` serialized the payload once per element of `l`
 * (2.8 s for a 16 KB payload) and a chain of 1024 `+` operands turned a
 * 128 KB string into a 134 MB one that each function call then read whole.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRuleset } from '../../compiler/index.ts';
import { MAX_JOIN_LENGTH, MAX_MESSAGE_LENGTH, add, jsonPrefix, text } from '../../compiler/runtime.ts';
import { anyJson } from './arbitraries.ts';

/** What text() rendered before it was bounded: all of JSON.stringify, then cut. */
function clippedJson(x: unknown): string {
  const full = JSON.stringify(x);
  return full.length <= MAX_MESSAGE_LENGTH ? full : `${full.slice(0, MAX_MESSAGE_LENGTH - 1)}\u2026`;
}

describe('jsonPrefix', () => {
  it('writes exactly what JSON.stringify writes, up to the limit and a little past it', () => {
    fc.assert(
      fc.property(anyJson, fc.integer({ min: 0, max: 300 }), (value, limit) => {
        const full = JSON.stringify(value);
        const prefix = jsonPrefix(value, limit);
        if (full.length <= limit) expect(prefix).toBe(full);
        else {
          expect(prefix.length).toBeGreaterThan(limit);
          expect(full.startsWith(prefix.slice(0, limit + 1))).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('writes undefined and the invalid number as JSON.stringify does', () => {
    const value = { a: undefined, b: [undefined, NaN, Infinity, -0], c: { d: undefined }, e: 1 };
    expect(jsonPrefix(value, 1000)).toBe(JSON.stringify(value));
    expect(jsonPrefix({ a: undefined }, 1000)).toBe('{}');
  });

  it('keeps a surrogate pair whole where the cut falls', () => {
    const value = ['x', '\ud83d\ude00'.repeat(10)];
    for (let limit = 0; limit < 30; limit++) {
      const prefix = jsonPrefix(value, limit);
      expect(JSON.stringify(value).startsWith(prefix.slice(0, limit + 1)), String(limit)).toBe(true);
    }
  });

  it('walks a value nested deeper than the call stack', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(jsonPrefix(deep, 50)).toBe('['.repeat(51));
  });
});

describe('text() of a container', () => {
  it('is the first 2000 characters of its JSON, as before', () => {
    fc.assert(fc.property(anyJson, (value) => {
      if (typeof value === 'object' && value !== null) expect(text(value)).toBe(clippedJson(value));
    }), { numRuns: 500 });
    const long = { a: 'x'.repeat(5000) };
    expect(text(long)).toBe(clippedJson(long));
  });

  it('reads only as much of the value as it writes', () => {
    let reads = 0;
    const element = { get k() { reads++; return 'y'.repeat(100); } };
    const many = Array.from({ length: 100_000 }, () => element);
    const expected = clippedJson(many.slice(0, 30));
    reads = 0;
    expect(text(many)).toBe(expected);
    // About 2000 characters of ~108 each: some twenty elements read, not 100,000.
    expect(reads).toBeLessThan(30);
  });

  it('renders the payload once per element in a rule message without writing it all', () => {
    const compiled = compileRuleset([{ code: 'ECHO', name: 'echo', expression: 'false', message: '{{ l.map(x => $) }}' }]);
    expect(compiled.errors).toEqual([]);
    const payload = { l: new Array(200_000).fill(0) };
    // In full: 200,000 copies of a 400 KB payload, past the longest string V8 can hold.
    const [failure] = compiled.validate(payload, 0).failures;
    expect(failure.message).toHaveLength(MAX_MESSAGE_LENGTH);
    expect(failure.message).toBe(`${`[{"l":[${'0,'.repeat(996)}0`.slice(0, MAX_MESSAGE_LENGTH - 1)}\u2026`);
  });
});

describe('joins', () => {
  it('are the invalid value past MAX_JOIN_LENGTH characters, and whole up to it', () => {
    const half = 'x'.repeat(MAX_JOIN_LENGTH / 2);
    expect(add(half, half)).toHaveLength(MAX_JOIN_LENGTH);
    expect(add(half, `${half}x`)).toBeNaN();
  });

  it('stop a chain of 1024 operands from multiplying a payload string', () => {
    // Four operands a level, five levels: 1024 operands in 2,729 characters.
    let chain = 'a';
    for (let i = 0; i < 5; i++) chain = `(${chain}+${chain}+${chain}+${chain})`;
    const compiled = compileRuleset([{ code: 'GROW', name: 'grow', expression: `len(${chain}) > 0` }]);
    expect(compiled.errors).toEqual([]);
    // 1024 copies of 128 KB would be 134 MB; the join past 16 MiB is invalid, and so is len() of it.
    const result = compiled.validate({ a: 'x'.repeat(128 * 1024) }, 0);
    expect(result.failures.map((failure) => failure.ruleCode)).toEqual(['GROW']);
    const small = compiled.validate({ a: 'x' }, 0);
    expect(small.isValid).toBe(true);
  });
});
