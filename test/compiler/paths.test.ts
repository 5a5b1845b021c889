/**
 * The path grammar of docs/rule-language.md: what parses, what is refused (with
 * the column), and that formatted paths parse back to the same segments.
 */
import { describe, expect, it } from 'vitest';
import { appendPath, formatPath, isPathError, parsePath, type PathSegment } from '../../compiler/index.ts';

describe('parsePath accepts the grammar of 2.4', () => {
  it.each<[string, PathSegment[], string]>([
    ['a', [{ key: 'a' }], 'a'],
    ['loan.amount', [{ key: 'loan' }, { key: 'amount' }], 'loan.amount'],
    ['_a.$b.c1', [{ key: '_a' }, { key: '$b' }, { key: 'c1' }], '_a.$b.c1'],
    ['items[3].qty', [{ key: 'items' }, { index: 3 }, { key: 'qty' }], 'items[3].qty'],
    ['items[].qty', [{ key: 'items' }, { each: true }, { key: 'qty' }], 'items[].qty'],
    ['m[0][10]', [{ key: 'm' }, { index: 0 }, { index: 10 }], 'm[0][10]'],
    ['$["first-name"]', [{ key: 'first-name' }], '$["first-name"]'],
    ['a["b c"].d', [{ key: 'a' }, { key: 'b c' }, { key: 'd' }], 'a["b c"].d'],
    ['a["b"]', [{ key: 'a' }, { key: 'b' }], 'a.b'],
    ['a["\\u00f1\\"]"]', [{ key: 'a' }, { key: 'ñ"]' }], 'a["ñ\\"]"]'],
    ['a[""]', [{ key: 'a' }, { key: '' }], 'a[""]'],
    ['$.a', [{ key: 'a' }], 'a'],
    ['["x"]', [{ key: 'x' }], 'x'],
    ['$x', [{ key: '$x' }], '$x'],
    ['$["$"]', [{ key: '$' }], '$["$"]'],
    ['a.$', [{ key: 'a' }, { key: '$' }], 'a.$'],
    ['__proto__.constructor', [{ key: '__proto__' }, { key: 'constructor' }], '__proto__.constructor'],
  ])('%s', (path, segments, formatted) => {
    expect(parsePath(path)).toEqual(segments);
    expect(formatPath(segments)).toBe(formatted);
    expect(parsePath(formatted)).toEqual(segments);
  });
});

describe('parsePath refuses everything else with INVALID_PATH', () => {
  it.each<[string, number | undefined, RegExp]>([
    ['', undefined, /empty/],
    ['$', 1, /root/],
    ['a.', 3, /ends after/],
    ['.a', 1, /field name/],
    ['a..b', 3, /field name/],
    ['1a', 1, /field name/],
    ['a.1', 3, /field name/],
    ['a b', 2, /unexpected/],
    ['a-b', 2, /unexpected/],
    ['a[01]', 3, /leading zero/],
    ['a[-1]', 3, /index/],
    ['a[1.5]', 4, /"\]"/],
    ['a[x]', 3, /index/],
    ["a['x']", 3, /double-quoted/],
    ['a["x"', 6, /"\]"/],
    ['a["x]', 3, /unterminated/],
    ['a["\\x"]', 3, /invalid string/],
    ['a[99999999999999999999]', 3, /too large/],
    ['a[', 3, /index/],
    ['ñ', 1, /field name/],
    ['$.', 3, /after "\$\."/],
    ['a'.repeat(257), undefined, /256/],
    [Array(33).fill('a').join('.'), undefined, /32 segments/],
  ])('%j', (path, column, message) => {
    const result = parsePath(path);
    expect(isPathError(result)).toBe(true);
    if (!isPathError(result)) return;
    expect(result.code).toBe('INVALID_PATH');
    expect(result.column).toBe(column);
    expect(result.message).toMatch(message);
  });

  it('takes limits', () => {
    expect(isPathError(parsePath('a.b.c', { maxPathLength: 256, maxPathSegments: 2 }))).toBe(true);
    expect(isPathError(parsePath('abcdef', { maxPathLength: 5, maxPathSegments: 32 }))).toBe(true);
  });
});

describe('appendPath builds reported paths one step at a time', () => {
  it.each<[string, string | number, string]>([
    ['', 'a', 'a'],
    ['a', 'b', 'a.b'],
    ['a', 3, 'a[3]'],
    ['', 0, '$[0]'],
    ['a', 'first-name', 'a["first-name"]'],
    ['', 'first-name', '$["first-name"]'],
    ['', '$', '$["$"]'],
    ['a', '$', 'a.$'],
  ])('%j + %j', (base, step, expected) => {
    expect(appendPath(base, step)).toBe(expected);
  });
});
