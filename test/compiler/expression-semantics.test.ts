/**
 * Semantics of the rule language (docs/rule-language.md), one row per case:
 * the expression, the payload (and other inputs), and the value it must
 * produce. Values are compared with Object.is at the top level (so NaN,
 * the "invalid number", and -0 are checked exactly) and deeply inside.
 */
import { describe, expect, it } from 'vitest';
import { compileExpressionFunction, type ExpressionInputs } from '../../compiler/expression-function.ts';

function run(source: string, inputs: ExpressionInputs = {}): unknown {
  const compiled = compileExpressionFunction(source);
  if (!compiled.ok) throw new Error(`${source}: ${compiled.error.code} ${compiled.error.message}`);
  return compiled.evaluate(inputs);
}

type Row = [source: string, payload: unknown, expected: unknown];

function check(rows: Row[]): void {
  it.each(rows)('%s on %j', (source, payload, expected) => {
    const actual = run(source, { payload });
    if (typeof expected === 'object' && expected !== null) expect(actual).toEqual(expected);
    else expect(Object.is(actual, expected), `got ${String(actual)}`).toBe(true);
  });
}

const P = {
  loan: { amount: 5000, currency: 'EUR' },
  n: 3,
  s: 'abc',
  list: [1, 2, 3],
  items: [{ qty: 1, price: 10 }, { qty: 2, price: 5 }],
  'first-name': 'Ann',
  min: 7,
  empty: {},
  nothing: null,
  withLength: { length: 42 },
};

describe('names and member access (3.1, 3.2)', () => {
  check([
    ['loan.amount', P, 5000],
    ['loan["currency"]', P, 'EUR'],
    ['$["first-name"]', P, 'Ann'],
    ['$.loan.amount', P, 5000],
    ['$.min', P, 7],
    ['$["min"]', P, 7],
    ['list[0]', P, 1],
    ['list["1"]', P, 2],
    ['list[3]', P, undefined],
    ['missing', P, undefined],
    ['missing.deeper.still', P, undefined],
    ['nothing.x', P, undefined],
    ['s[0]', P, undefined],
    ['n.x', P, undefined],
    ['s.length', P, 3],
    ['list.length', P, 3],
    ['withLength.length', P, 42],
    ['empty.length', P, undefined],
    ['$["s"]["length"]', P, 3],
    ['true', P, true],
    ['null', P, null],
    ['[1, "a", null]', P, [1, 'a', null]],
    ['[n, s]', P, [3, 'abc']],
    ['undefined', P, undefined],
    ['NaN', P, undefined],
    ['Infinity', { Infinity: 1 }, 1],
    ['undefined', { undefined: 'own key' }, 'own key'],
  ]);
});

describe('inherited names read as undefined unless own (3.2)', () => {
  check([
    ['loan.constructor', P, undefined],
    ['loan.__proto__', P, undefined],
    ['loan["__proto__"]', P, undefined],
    ['loan.toString', P, undefined],
    ['loan.hasOwnProperty', P, undefined],
    ['list.map', P, undefined],
    ['s.constructor', P, undefined],
    ['constructor', P, undefined],
    ['__proto__', P, undefined],
    ['toString', P, undefined],
    ['constructor', JSON.parse('{"constructor":1}'), 1],
    ['x.__proto__', JSON.parse('{"x":{"__proto__":{"a":1}}}'), { a: 1 }],
    ['x.hasOwnProperty', { x: { hasOwnProperty: 'shadow' } }, 'shadow'],
    ['x.a', { x: { hasOwnProperty: 'shadow', a: 1 } }, 1],
  ]);
});

describe('equality is strict and deep (3.2)', () => {
  check([
    ['n == 3', P, true],
    ['n === 3', P, true],
    ['n != 3', P, false],
    ['n !== 4', P, true],
    ['"3" == 3', P, false],
    ['0 == false', P, false],
    ['null == missing', P, false],
    ['missing == missing', P, true],
    ['nothing == null', P, true],
    ['list == [1, 2, 3]', P, true],
    ['list == [3, 2, 1]', P, false],
    ['list == [1, 2]', P, false],
    ['loan == $.loan', P, true],
    ['x == y', { x: { a: 1, b: [1, { c: 2 }] }, y: { b: [1, { c: 2 }], a: 1 } }, true],
    ['x == y', { x: { a: 1 }, y: { a: 1, b: 2 } }, false],
    ['x == y', { x: { a: 1 }, y: [1] }, false],
    ['x == y', { x: [], y: {} }, false],
    ['0 == -0', P, true],
    ['n / 0 == n / 0', P, false],
    ['n / 0 != n / 0', P, true],
    ['(n - "a") == (n - "a")', P, false],
  ]);
});

describe('comparisons hold only between two numbers or two strings (3.2)', () => {
  check([
    ['n < 4', P, true],
    ['n <= 3', P, true],
    ['n > 3', P, false],
    ['n >= 3', P, true],
    ['4 > n', P, true],
    ['"abc" < "abd"', P, true],
    ['s >= "abc"', P, true],
    ['"B" < "a"', P, true],
    ['"\u{1F600}" > "\uFFFF"', P, false],
    ['"10" < 9', P, false],
    ['"10" > 9', P, false],
    ['missing < 1', P, false],
    ['missing >= 0', P, false],
    ['nothing < 1', P, false],
    ['nothing >= 0', P, false],
    ['list > 0', P, false],
    ['true > false', P, false],
    ['n / 0 < 1', P, false],
    ['n / 0 > 1', P, false],
    ['n < m', { n: 1, m: 2 }, true],
    ['n < m', { n: 1, m: '2' }, false],
    ['n.a < 1', { n: { a: 0 } }, true],
  ]);
});

describe('arithmetic gives an invalid number on bad operands (3.2)', () => {
  check([
    ['n + 1', P, 4],
    ['s + "d"', P, 'abcd'],
    ['s + 1', P, NaN],
    ['1 + s', P, NaN],
    ['n + missing', P, NaN],
    ['n + nothing', P, NaN],
    ['n + true', P, NaN],
    ['list + list', P, NaN],
    ['n - 1', P, 2],
    ['n * 2', P, 6],
    ['n / 2', P, 1.5],
    ['n % 2', P, 1],
    ['-n % 2', P, -1],
    ['n ** 2', P, 9],
    ['2 ** 10', P, 1024],
    ['n / 0', P, NaN],
    ['-n / 0', P, NaN],
    ['0 / 0', P, NaN],
    ['10 ** 400', P, NaN],
    ['1e308 * 10', P, NaN],
    ['-n', P, -3],
    ['+n', P, 3],
    ['-s', P, NaN],
    ['+s', P, NaN],
    ['+"5"', P, NaN],
    ['-0', P, -0],
    ['-x', { x: 0 }, -0],
    ['0.1 + 0.2', P, 0.30000000000000004],
    ['9007199254740991 + 2', P, 9007199254740992],
    ['n - "1"', P, NaN],
  ]);
});

describe('logic and truthiness as in JavaScript (3.2)', () => {
  check([
    ['!n', P, false],
    ['!missing', P, true],
    ['!""', P, true],
    ['![]', P, false],
    ['!(n / 0)', P, true],
    ['n && s', P, 'abc'],
    ['missing && s', P, undefined],
    ['0 || s', P, 'abc'],
    ['"" || 0', P, 0],
    ['missing ?? 5', P, 5],
    ['nothing ?? 5', P, 5],
    ['0 ?? 5', P, 0],
    ['n > 1 ? "big" : "small"', P, 'big'],
    ['missing ? 1 : 2', P, 2],
    ['list ? 1 : 2', P, 1],
    ['n > 1 && s == "abc"', P, true],
    ['(missing ?? 0) + 1', P, 1],
  ]);
});

describe('string methods (3.3)', () => {
  check([
    ['s.startsWith("ab")', P, true],
    ['s.startsWith("b")', P, false],
    ['s.endsWith("bc")', P, true],
    ['s.includes("b")', P, true],
    ['s.includes(1)', P, undefined],
    ['s.startsWith(missing)', P, undefined],
    ['x.toLowerCase()', { x: 'ÄBC' }, 'äbc'],
    ['x.toUpperCase()', { x: 'straße' }, 'STRASSE'],
    ['x.trim()', { x: '  a b \n' }, 'a b'],
    ['n.startsWith("3")', P, undefined],
    ['missing.trim()', P, undefined],
    ['list.toLowerCase()', P, undefined],
    ['x.length', { x: '\u{1F600}' }, 2],
  ]);
});

describe('array methods and callbacks (3.3)', () => {
  check([
    ['list.includes(2)', P, true],
    ['list.includes("2")', P, false],
    ['x.includes([1, 2])', { x: [[1, 2], [3]] }, true],
    ['x.includes({ })'.replace('{ }', 'y'), { x: [{ a: 1, b: 2 }], y: { b: 2, a: 1 } }, true],
    ['["EUR", "USD"].includes(loan.currency)', P, true],
    ['["EUR", "USD"].includes(missing)', P, false],
    ['[1, 2].includes(n / 0)', P, false],
    ['items.every(i => i.qty > 0)', P, true],
    ['items.every(i => i.qty > 1)', P, false],
    ['empty2.every(i => false)', { empty2: [] }, true],
    ['items.some(i => i.qty > 1)', P, true],
    ['[].some(i => true)', P, false],
    ['items.filter(i => i.qty > 1)', P, [{ qty: 2, price: 5 }]],
    ['items.map(i => i.qty * i.price)', P, [10, 10]],
    ['items.find(i => i.qty == 2)', P, { qty: 2, price: 5 }],
    ['items.find(i => i.qty == 9)', P, undefined],
    ['items.map(i => i.nope)', P, [undefined, undefined]],
    ['list.every(x => x)', { list: [1, 'a', true] }, true],
    ['list.every(x => x)', { list: [1, 0] }, false],
    ['list.filter(x => x)', { list: [0, 1, '', 'a', null] }, [1, 'a']],
    ['s.every(x => true)', P, undefined],
    ['missing.map(x => x)', P, undefined],
    ['loan.some(x => true)', P, undefined],
    ['m.every(r => r.every(c => c > 0))', { m: [[1, 2], [3]] }, true],
    ['m.every(r => r.every(c => c > 1))', { m: [[1, 2], [3]] }, false],
    ['m.map(r => r.map(c => c * k))', { m: [[1], [2, 3]], k: 10 }, [[10], [20, 30]]],
    ['m.some(r => r.some(c => c == r.length))', { m: [[5], [0, 2]] }, true],
    ['m.map(x => m.filter(x => x > 1))', { m: [1, 2] }, [[2], [2]]],
    ['m.map(x => x.map(y => x.length + y))', { m: [[1, 2]] }, [[3, 4]]],
    ['list.filter(x => x > n)', { list: [1, 5, 9], n: 4 }, [5, 9]],
    ['list.map(x => $.n)', { list: [1, 2], n: 4 }, [4, 4]],
    ['sum(items.map(i => i.price * i.qty))', P, 20],
  ]);

  it('callbacks see $value, $item, $index and $expected of the rule', () => {
    expect(run('list.map(x => [x, $value, $item, $index, $expected])', {
      payload: { list: [1] }, value: 'v', item: 'it', index: 4, expected: 'e',
    })).toEqual([[1, 'v', 'it', 4, 'e']]);
    expect(run('list.map(x => list.map(y => $value + x + y))', {
      payload: { list: [1, 2] }, value: 10,
    })).toEqual([[12, 13], [13, 14]]);
  });
});

describe('functions (3.4)', () => {
  check([
    ['exists(n)', P, true],
    ['exists(missing)', P, false],
    ['exists(nothing)', P, false],
    ['exists(0)', P, true],
    ['exists(n / 0)', P, true],
    ['isEmpty(missing)', P, true],
    ['isEmpty(nothing)', P, true],
    ['isEmpty("")', P, true],
    ['isEmpty(" ")', P, false],
    ['isEmpty([])', P, true],
    ['isEmpty(empty)', P, true],
    ['isEmpty(0)', P, false],
    ['isEmpty(false)', P, false],
    ['isEmpty(loan)', P, false],
    ['len(s)', P, 3],
    ['len(x)', { x: 'a\u{1F600}b' }, 3],
    ['len(x)', { x: '\uD800' }, 1],
    ['len(x)', { x: '\uDC00\uD800' }, 2],
    ['len(x)', { x: 'e\u0301' }, 2],
    ['len(list)', P, 3],
    ['len(loan)', P, 2],
    ['len(n)', P, undefined],
    ['len(missing)', P, undefined],
    ['isString(s)', P, true],
    ['isString(n)', P, false],
    ['isNumber(n)', P, true],
    ['isNumber(n / 0)', P, false],
    ['isNumber("3")', P, false],
    ['isInteger(n)', P, true],
    ['isInteger(1.5)', P, false],
    ['isInteger(1e21)', P, true],
    ['isInteger(n / 0)', P, false],
    ['isBoolean(false)', P, true],
    ['isBoolean(0)', P, false],
    ['isArray(list)', P, true],
    ['isArray(loan)', P, false],
    ['isObject(loan)', P, true],
    ['isObject(list)', P, false],
    ['isObject(nothing)', P, false],
    ['sum(list)', P, 6],
    ['sum([])', P, 0],
    ['sum([1, "2"])', P, NaN],
    ['sum(s)', P, undefined],
    ['sum([1e308, 1e308])', P, NaN],
    ['avg(list)', P, 2],
    ['avg([])', P, undefined],
    ['avg([1, null])', P, NaN],
    ['avg(n)', P, undefined],
    ['min(list)', P, 1],
    ['max(list)', P, 3],
    ['min(4, n, 9)', P, 3],
    ['max(4, n, 9)', P, 9],
    ['min(n)', P, 3],
    ['min([])', P, NaN],
    ['max([1, "x"])', P, NaN],
    ['min(1, "2")', P, NaN],
    ['min(1, missing)', P, NaN],
    ['min(1, list)', P, NaN],
    ['min(s)', P, NaN],
    ['abs(-2.5)', P, 2.5],
    ['abs(s)', P, NaN],
    ['floor(-2.5)', P, -3],
    ['ceil(2.1)', P, 3],
    ['floor(missing)', P, NaN],
    ['round(2.5)', P, 3],
    ['round(-2.5)', P, -3],
    ['round(2.4)', P, 2],
    ['round(1.005, 2)', P, 1.01],
    ['round(1.2345, 3)', P, 1.235],
    ['round(-1.2345, 3)', P, -1.235],
    ['round(123.456, 0)', P, 123],
    ['round(0.1 + 0.2, 15)', P, 0.3],
    ['round(1.5, 15)', P, 1.5],
    ['round(1e-7, 3)', P, 0],
    ['round(9.995, 2)', P, 10],
    ['round(1, 16)', P, NaN],
    ['round(1, -1)', P, NaN],
    ['round(1, 1.5)', P, NaN],
    ['round(s)', P, NaN],
    ['lower(s)', P, 'abc'],
    ['upper(s)', P, 'ABC'],
    ['trim(" x ")', P, 'x'],
    ['lower(n)', P, undefined],
    ['distinct(list)', P, true],
    ['distinct([1, 1])', P, false],
    ['distinct([1, "1"])', P, true],
    ['distinct([[1], [1]])', P, false],
    ['distinct(x)', { x: [{ a: 1, b: 2 }, { b: 2, a: 1 }] }, false],
    ['distinct([])', P, true],
    ['distinct(s)', P, undefined],
    ['distinct(x)', { x: [{ a: [1, { b: 2, c: [3] }] }, { a: [1, { c: [3], b: 2 }] }] }, false],
    ['distinct(x)', { x: [{ a: 1 }, { a: 2 }, { a: 1, b: 1 }, [1], { 0: 1 }, ['a', 1], [1, 'a']] }, true],
    ['distinct(x)', { x: [[0, 'a'], [-0, 'a']] }, false],
    ['distinct([[0], [0 * -1]])', P, false],
    ['distinct([[1 / 0], [1 / 0]])', P, true],
    ['distinct(x)', { x: [[null], [false], [0], [''], [[]], [{}]] }, true],
    ['distinct(x)', { x: Array.from({ length: 3000 }, (_, i) => ({ id: i, tags: [i % 7] })) }, true],
    ['distinct(x)', { x: [...Array.from({ length: 3000 }, (_, i) => ({ id: i })), { id: 1234 }] }, false],
  ]);
});

describe('format checks follow ajv-formats (3.4)', () => {
  check([
    ['isEmail("a.b@example.com")', P, true],
    ['isEmail("not an email")', P, false],
    ['isEmail(n)', P, false],
    ['isUuid("123e4567-e89b-12d3-a456-426614174000")', P, true],
    ['isUuid("123e4567e89b12d3a456426614174000")', P, false],
    ['isUri("https://example.com/a?b=c")', P, true],
    ['isUri("example.com")', P, false],
    ['isDate("2024-02-29")', P, true],
    ['isDate("2023-02-29")', P, false],
    ['isDate("2024-01-01T10:00:00Z")', P, true],
    ['isDate("2024-01-01T10:00:00+02:00")', P, true],
    ['isDate("2024-01-01T10:00:00")', P, false],
    ['isDate("yesterday")', P, false],
    ['isDate(missing)', P, false],
  ]);
});

describe('dates are UTC (3.4)', () => {
  check([
    ['date("2024-01-01")', P, Date.UTC(2024, 0, 1)],
    ['date("2024-01-01T10:20:30")', P, Date.UTC(2024, 0, 1, 10, 20, 30)],
    ['date("2024-01-01T10:20:30Z")', P, Date.UTC(2024, 0, 1, 10, 20, 30)],
    ['date("2024-01-01T10:20:30.1234Z")', P, Date.UTC(2024, 0, 1, 10, 20, 30, 123)],
    ['date("2024-01-01T10:20")', P, Date.UTC(2024, 0, 1, 10, 20)],
    ['date("2024-01-01T10:20:30+02:00")', P, Date.UTC(2024, 0, 1, 8, 20, 30)],
    ['date("2024-01-01T00:30:00-01:30")', P, Date.UTC(2024, 0, 1, 2, 0)],
    ['date("2024-02-29")', P, Date.UTC(2024, 1, 29)],
    ['date("0001-01-01")', P, -62135596800000],
    ['date("2024-02-30")', P, undefined],
    ['date("2023-02-29")', P, undefined],
    ['date("2024-13-01")', P, undefined],
    ['date("2024-01-01T24:00:00")', P, undefined],
    ['date("2024-01-01T10:60:00")', P, undefined],
    ['date("2024-01-01T10:00:00+24:00")', P, undefined],
    ['date("2024-1-1")', P, undefined],
    ['date("yesterday")', P, undefined],
    ['date(1704067200000)', P, undefined],
    ['date(missing)', P, undefined],
    ['daysBetween("2024-01-01", "2024-03-01")', P, 60],
    ['daysBetween("2024-03-01", "2024-01-01")', P, -60],
    ['daysBetween("2024-01-01T23:00:00Z", "2024-01-02T01:00:00Z")', P, 1],
    ['daysBetween(date("2024-01-01"), "2024-01-02")', P, 1],
    ['daysBetween("2024-01-01", "nope")', P, undefined],
    ['daysBetween(9007199254740993, 0)', P, undefined],
  ]);

  it.each([
    ['2000-02-29', Date.UTC(2021, 1, 28), 20],
    ['2000-02-29', Date.UTC(2021, 2, 1), 21],
    ['2000-06-15', Date.UTC(2018, 5, 14), 17],
    ['2000-06-15', Date.UTC(2018, 5, 15), 18],
    ['2000-06-15T23:30:00-02:00', Date.UTC(2018, 5, 16), 18],
    ['2030-01-01', Date.UTC(2024, 0, 1), -6],
    ['not a date', Date.UTC(2024, 0, 1), undefined],
  ])('age(%j) at %d is %j; now() is the request clock', (dob, now, years) => {
    expect(run('age(dob)', { payload: { dob }, now })).toBe(years);
    expect(run('now()', { now })).toBe(now);
  });
});

describe('matches() uses the regex policy, search semantics (3.4)', () => {
  check([
    ['matches(s, "b")', P, true],
    ['matches(s, "^b")', P, false],
    ['matches(s, "^[a-c]{3}$")', P, true],
    ['matches(n, "3")', P, false],
    ['matches(missing, ".*")', P, false],
    ['matches(x, "^(a|a)*$")', { x: `${'a'.repeat(40)}!` }, false],
    ['matches(x, "\\\\d+")', { x: 'ab12' }, true],
    ['matches(x, "^\\\\p{L}+$")', { x: 'Zoë' }, true],
  ]);
});

describe('$-names (3.1)', () => {
  it('binds $, $value, $item, $index and $expected', () => {
    expect(run('[$.a, $value, $item, $index, $expected]', {
      payload: { a: 1 }, value: 2, item: 3, index: 4, expected: 5,
    })).toEqual([1, 2, 3, 4, 5]);
  });
});
