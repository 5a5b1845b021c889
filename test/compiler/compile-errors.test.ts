/**
 * Save-time refusals (docs/rule-language.md): the allow-list table of the
 * expression checker, with the exact code, line and column of each
 * refusal, and the rule-level checks (paths, required, templates, limits).
 */
import { describe, expect, it } from 'vitest';
import { checkRule, compileRuleset, type CompileError, type RuleDefinition } from '../../compiler/index.ts';

function expressionErrors(expression: string, extra: Partial<RuleDefinition> = {}): CompileError[] {
  return checkRule({ code: 'R-1', name: 'Rule', expression, ...extra });
}

type Refusal = [expression: string, code: CompileError['code'], line: number, column: number, message: RegExp];

/** 3.5: everything 3.1-3.4 does not name is refused, saying what and where. */
const REFUSED: Refusal[] = [
  ['a = 1', 'NOT_ALLOWED', 1, 1, /assignment/],
  ['a += 1', 'NOT_ALLOWED', 1, 1, /assignment/],
  ['a++', 'NOT_ALLOWED', 1, 1, /`\+\+`/],
  ['--a', 'NOT_ALLOWED', 1, 1, /`--`/],
  ['new Date()', 'NOT_ALLOWED', 1, 1, /`new`/],
  ['this', 'NOT_ALLOWED', 1, 1, /`this`/],
  ['x && this.y', 'NOT_ALLOWED', 1, 6, /`this`/],
  ['function f() {}', 'NOT_ALLOWED', 1, 1, /`function`/],
  ['(function () { return 1 })', 'NOT_ALLOWED', 1, 2, /`function`/],
  ['x => 1', 'NOT_ALLOWED', 1, 1, /arrow function/],
  ['async () => 1', 'NOT_ALLOWED', 1, 1, /arrow function/],
  ['(class {})', 'NOT_ALLOWED', 1, 2, /class/],
  ['delete a.b', 'NOT_ALLOWED', 1, 1, /`delete`/],
  ['typeof a == "string"', 'NOT_ALLOWED', 1, 1, /`typeof`/],
  ['void 0', 'NOT_ALLOWED', 1, 1, /`void`/],
  ['"a" in b', 'NOT_ALLOWED', 1, 1, /`in`/],
  ['a instanceof b', 'NOT_ALLOWED', 1, 1, /`instanceof`/],
  ['a | 1', 'NOT_ALLOWED', 1, 1, /`\|`/],
  ['a & 1', 'NOT_ALLOWED', 1, 1, /`&`/],
  ['a ^ 1', 'NOT_ALLOWED', 1, 1, /`\^`/],
  ['~a', 'NOT_ALLOWED', 1, 1, /`~`/],
  ['a << 1', 'NOT_ALLOWED', 1, 1, /`<<`/],
  ['a >> 1', 'NOT_ALLOWED', 1, 1, /`>>`/],
  ['a >>> 1', 'NOT_ALLOWED', 1, 1, /`>>>`/],
  ['a?.b', 'NOT_ALLOWED', 1, 1, /`\?\.`/],
  ['a.b?.()', 'NOT_ALLOWED', 1, 1, /`\?\.`/],
  ['a, b', 'NOT_ALLOWED', 1, 1, /comma/],
  ['[...a]', 'NOT_ALLOWED', 1, 2, /spread/],
  ['max(...a)', 'NOT_ALLOWED', 1, 5, /spread/],
  ['({ a: 1 })', 'NOT_ALLOWED', 1, 2, /object literal/],
  ['`x`', 'NOT_ALLOWED', 1, 1, /template literal/],
  ['String.raw`x`', 'NOT_ALLOWED', 1, 1, /tagged template/],
  ['/a/.test(s)', 'NOT_ALLOWED', 1, 1, /regular-expression literal/],
  ['10n > a', 'NOT_ALLOWED', 1, 1, /BigInt/],
  ['1e400 > a', 'NOT_ALLOWED', 1, 1, /finite/],
  ['010 == a', 'NOT_ALLOWED', 1, 1, /octal/],
  ['import("fs")', 'NOT_ALLOWED', 1, 1, /`import\(\)`/],
  ['a[b]', 'NOT_ALLOWED', 1, 3, /computed member key/],
  ['a[-1]', 'NOT_ALLOWED', 1, 3, /computed member key/],
  ['a[null]', 'NOT_ALLOWED', 1, 3, /computed member key/],
  ['[1, , 2]', 'NOT_ALLOWED', 1, 1, /hole/],
  ['min', 'NOT_ALLOWED', 1, 1, /\$\.min/],
  ['min.constructor', 'NOT_ALLOWED', 1, 1, /function/],
  ['len == 1', 'NOT_ALLOWED', 1, 1, /\$\.len/],
  ['$foo', 'NOT_ALLOWED', 1, 1, /\$-names/],
  ['$values > 1', 'NOT_ALLOWED', 1, 1, /\$-names/],
  ['\\u0061 > 1', 'NOT_ALLOWED', 1, 1, /escape/],
  ['a.\\u0063onstructor', 'NOT_ALLOWED', 1, 3, /escape/],
  ['\\u0063onstructor.constructor("x")()', 'NOT_ALLOWED', 1, 1, /escape|only the listed/],
  ['ñ > 1', 'NOT_ALLOWED', 1, 1, /plain ASCII/],
  ['a.ñ > 1', 'NOT_ALLOWED', 1, 3, /plain ASCII/],
  ['foo()', 'UNKNOWN_FUNCTION', 1, 1, /`foo`/],
  ['eval("1")', 'UNKNOWN_FUNCTION', 1, 1, /`eval`/],
  ['constructor.constructor("return process")()', 'NOT_ALLOWED', 1, 1, /only the listed/],
  ['a.constructor("x")', 'UNKNOWN_FUNCTION', 1, 3, /`.constructor\(\)`/],
  ['s.toString()', 'UNKNOWN_FUNCTION', 1, 3, /`.toString\(\)`/],
  ['a.hasOwnProperty("x")', 'UNKNOWN_FUNCTION', 1, 3, /hasOwnProperty/],
  ['s.repeat(1000000)', 'UNKNOWN_FUNCTION', 1, 3, /repeat/],
  ['a["every"](x => x)', 'NOT_ALLOWED', 1, 3, /`.name\(...\)`/],
  ['(1)(2)', 'NOT_ALLOWED', 1, 2, /only the listed/],
  ['round(1, 2, 3)', 'BAD_ARGUMENTS', 1, 1, /1 to 2 arguments, got 3/],
  ['len()', 'BAD_ARGUMENTS', 1, 1, /1 argument, got 0/],
  ['now(1)', 'BAD_ARGUMENTS', 1, 1, /0 arguments/],
  ['min()', 'BAD_ARGUMENTS', 1, 1, /at least 1 argument/],
  ['s.startsWith("a", 1)', 'BAD_ARGUMENTS', 1, 1, /1 argument, got 2/],
  ['s.trim(1)', 'BAD_ARGUMENTS', 1, 1, /0 arguments/],
  ['a.every()', 'BAD_ARGUMENTS', 1, 1, /one callback/],
  ['a.every(isString)', 'BAD_ARGUMENTS', 1, 1, /one callback/],
  ['a.every(function (x) { return x })', 'NOT_ALLOWED', 1, 9, /`function`/],
  ['a.every(x => { return x })', 'NOT_ALLOWED', 1, 14, /block/],
  ['a.every((x, y) => x)', 'NOT_ALLOWED', 1, 9, /exactly one parameter/],
  ['a.every(() => true)', 'NOT_ALLOWED', 1, 9, /exactly one parameter/],
  ['a.every(({ x }) => x)', 'NOT_ALLOWED', 1, 10, /plain name/],
  ['a.every((x = 1) => x)', 'NOT_ALLOWED', 1, 10, /plain name/],
  ['a.every(async x => x)', 'NOT_ALLOWED', 1, 9, /`async`/],
  ['a.every($item => 1)', 'NOT_ALLOWED', 1, 9, /\$item/],
  ['a.every(min => 1)', 'NOT_ALLOWED', 1, 9, /hide the function/],
  ['a.every(x => x.b.some(y => y.c.map(z => z)))', 'TOO_DEEP', 1, 36, /more than 2 levels/],
  ['matches(a, b)', 'BAD_ARGUMENTS', 1, 12, /string literal/],
  ['matches(a, "(a)\\\\1")', 'UNSAFE_PATTERN', 1, 12, /backreference/],
  ['matches(a, "(?=a)")', 'UNSAFE_PATTERN', 1, 12, /lookaround/],
  ['matches(a, "(")', 'INVALID_PATTERN', 1, 12, /./],
  [`matches(a, "${'a'.repeat(513)}")`, 'TOO_LONG', 1, 12, /512/],
  ['a > 1; b', 'SYNTAX_ERROR', 1, 8, /single expression/],
  ['a > 1;\nb', 'SYNTAX_ERROR', 2, 1, /single expression/],
  ['a >', 'SYNTAX_ERROR', 1, 4, /Unexpected/],
  ['', 'SYNTAX_ERROR', 1, 1, /empty/],
  ['/* only a comment */', 'SYNTAX_ERROR', 1, 1, /empty/],
  ['if (a) b', 'NOT_ALLOWED', 1, 1, /`if`/],
  ['let a = 1', 'NOT_ALLOWED', 1, 1, /variable declaration/],
  ['{ a }', 'NOT_ALLOWED', 1, 1, /block/],
  ['a.b\n  .c\n  .foo()', 'UNKNOWN_FUNCTION', 3, 4, /foo/],
  ['a +\n  new B()', 'NOT_ALLOWED', 2, 3, /`new`/],
  ['(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((a)))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))', 'TOO_DEEP', 1, 65, /64 levels/],
  [`${'!('.repeat(65)}a${')'.repeat(65)}`, 'TOO_DEEP', 1, 130, /64 levels/],
  [`${'['.repeat(2000)}${']'.repeat(2000)}`, 'TOO_DEEP', 1, 65, /64 levels/],
  [`${'('.repeat(2000)}a${')'.repeat(2000)}`, 'TOO_DEEP', 1, 65, /64 levels/],
  [`${'-'.repeat(1)}${' -'.repeat(70)} a`, 'TOO_DEEP', 1, 131, /64 levels/],
  [`${'a ? '.repeat(65)}1${' : 2'.repeat(65)}`, 'TOO_DEEP', 1, 257, /64 levels/],
  [`${Array.from({ length: 300 }, () => 'a').join(' + ')}`, 'TOO_DEEP', 1, 1, /chains more than 256/],
  [`x${'.a'.repeat(300)}`, 'TOO_DEEP', 1, 1, /chains more than 256/],
  [`a == "${'x'.repeat(4100)}"`, 'TOO_LONG', 1, 4097, /4096/],
];

describe('allow-list refusals (3.5)', () => {
  it.each(REFUSED)('%s is %s at %i:%i', (expression, code, line, column, message) => {
    const errors = expressionErrors(expression);
    expect(errors.length, JSON.stringify(errors)).toBe(1);
    const [error] = errors;
    expect(error.ruleCode).toBe('R-1');
    expect(error.field).toBe('expression');
    expect(error.code, error.message).toBe(code);
    expect({ line: error.line, column: error.column }, error.message).toEqual({ line, column });
    expect(error.message).toMatch(message);
  });
});

/** Everything 3.1-3.4 names is accepted. */
const ACCEPTED = [
  'a', '$', '$value', '$item', '$index', '$expected', 'true', 'false', 'null', '"s"', "'s'", '1.5', '0x1F', '1_000', '.5',
  '[1, "a", [null]]', 'a.b.c', 'a["b c"]', 'a[0]', 'a[1.5]', '$["first-name"]', '$.min', 'a.$ref', 'a.class',
  'a == b', 'a === b', 'a != b', 'a !== b', 'a < b', 'a <= b', 'a > b', 'a >= b',
  'a + b', 'a - b', 'a * b', 'a / b', 'a % b', 'a ** b', '-a', '+a', '!a', 'a && b', 'a || b', 'a ?? b', 'a ? b : c',
  'a.length', 's.startsWith("x")', 's.endsWith("x")', 's.includes("x")', 's.toLowerCase()', 's.toUpperCase()', 's.trim()',
  'a.includes(1)', 'a.every(x => x)', 'a.some(x => x)', 'a.filter(x => x)', 'a.map(x => x)', 'a.find(x => x)',
  'a.every((x) => x.b.some(y => y == x))', 'a.every(loan => loan > 0)',
  'exists(a)', 'isEmpty(a)', 'len(a)', 'isString(a)', 'isNumber(a)', 'isInteger(a)', 'isBoolean(a)', 'isArray(a)', 'isObject(a)',
  'sum(a)', 'avg(a)', 'min(a)', 'min(a, b, c)', 'max(a)', 'max(a, b)', 'abs(a)', 'round(a)', 'round(a, 2)', 'floor(a)', 'ceil(a)',
  'lower(a)', 'upper(a)', 'trim(a)', 'matches(a, "^x+$")', 'isEmail(a)', 'isUuid(a)', 'isUri(a)', 'isDate(a)',
  'date(a)', 'now()', 'daysBetween(a, b)', 'age(a)', 'distinct(a)',
  'a > 1 // trailing comment', '/* lead */ a > 1', 'a >\n  1', 'a > 1;', '"use strict"', '(a)',
  `${'('.repeat(60)}a${')'.repeat(60)}`, `${Array.from({ length: 200 }, () => 'a').join(' && ')}`,
  `${'a ? '.repeat(64)}1${' : 2'.repeat(64)}`, `${'!'.repeat(64)}a`,
  // An else-if chain is flat, not nested.
  `${Array.from({ length: 100 }, () => 'a ? b :').join(' ')} c`,
  `a == "${'x'.repeat(4080)}"`,
];

describe('everything the language names is accepted (3.1-3.4)', () => {
  it.each(ACCEPTED)('%s', (expression) => {
    expect(expressionErrors(expression)).toEqual([]);
  });
});

describe('rule-level checks (2, 2.2-2.4)', () => {
  const base = { code: 'R-1', name: 'Rule' };
  type Case = [title: string, rule: Partial<RuleDefinition>, field: CompileError['field'], code: CompileError['code'], message: RegExp];
  const CASES: Case[] = [
    ['no expression, schema or required', {}, 'expression', 'INVALID_RULE', /at least one of/],
    ['required: false alone', { required: false, fieldPath: 'a' }, 'expression', 'INVALID_RULE', /at least one of/],
    ['required without fieldPath', { required: true }, 'required', 'INVALID_RULE', /fieldPath/],
    ['code with a comment terminator', { code: 'a*/b', expression: 'true' }, 'code', 'INVALID_RULE', /code must be/],
    ['code too long', { code: 'a'.repeat(65), expression: 'true' }, 'code', 'INVALID_RULE', /1-64/],
    ['empty name', { name: '', expression: 'true' }, 'name', 'INVALID_RULE', /name/],
    ['unknown severity', { severity: 'Fatal' as never, expression: 'true' }, 'severity', 'INVALID_RULE', /Error, Warning or Info/],
    ['fractional priority', { priority: 1.5, expression: 'true' }, 'priority', 'INVALID_RULE', /integer/],
    ['expectedValue not JSON', { expectedValue: Number.NaN, expression: 'true' }, 'expectedValue', 'INVALID_RULE', /JSON/],
    ['bad fieldPath', { fieldPath: 'a..b', expression: 'true' }, 'fieldPath', 'INVALID_PATH', /field name/],
    ['fieldPath too long', { fieldPath: 'a'.repeat(257), expression: 'true' }, 'fieldPath', 'INVALID_PATH', /256/],
    ['fieldPath with too many segments', { fieldPath: Array(33).fill('a').join('.'), expression: 'true' }, 'fieldPath', 'INVALID_PATH', /32 segments/],
    ['[] without forEach', { fieldPath: 'items[].qty', expression: 'true' }, 'fieldPath', 'INVALID_PATH', /forEach/],
    ['[] not after the forEach path', { forEach: 'items', fieldPath: 'other[].qty', expression: 'true' }, 'fieldPath', 'INVALID_PATH', /must start with the forEach path/],
    ['two []', { forEach: 'items', fieldPath: 'items[].x[].y', expression: 'true' }, 'fieldPath', 'INVALID_PATH', /must start/],
    ['[] in forEach', { forEach: 'items[]', expression: 'true' }, 'forEach', 'INVALID_PATH', /\[\]/],
    ['bad forEach', { forEach: 'items.', expression: 'true' }, 'forEach', 'INVALID_PATH', /ends/],
    ['bad when', { when: 'a = 1', expression: 'true' }, 'when', 'NOT_ALLOWED', /assignment/],
    ['bad schema', { schema: { type: 'nope' } }, 'schema', 'INVALID_SCHEMA', /./],
    ['schema with $id', { schema: { $id: 'https://x/y', type: 'object' } }, 'schema', 'INVALID_SCHEMA', /\$id/],
    ['message too long', { expression: 'true', message: 'x'.repeat(2001) }, 'message', 'TOO_LONG', /2000/],
  ];
  it.each(CASES)('%s', (_title, rule, field, code, message) => {
    const errors = checkRule({ ...base, ...rule });
    const relevant = errors.filter((e) => e.field === field);
    expect(relevant.length, JSON.stringify(errors)).toBeGreaterThan(0);
    expect(relevant[0].code).toBe(code);
    expect(relevant[0].message).toMatch(message);
  });

  it('says where a message passes its length bound, as for an expression', () => {
    const [error] = checkRule({ ...base, expression: 'true', message: `${'x'.repeat(1990)}\n${'y'.repeat(20)}` });
    expect(error).toMatchObject({ field: 'message', code: 'TOO_LONG', line: 2, column: 10 });
  });

  it('reports every broken field of a rule, not just the first', () => {
    const errors = checkRule({ ...base, expression: 'new X', when: 'this', message: '{{ a = 1 }}' });
    expect(errors.map((e) => [e.field, e.code])).toEqual([
      ['expression', 'NOT_ALLOWED'], ['when', 'NOT_ALLOWED'], ['message', 'NOT_ALLOWED'],
    ]);
  });

  it('accepts a forEach rule whose fieldPath starts with the forEach path', () => {
    expect(checkRule({ ...base, forEach: 'order.items', fieldPath: 'order.items[].qty', required: true })).toEqual([]);
    expect(checkRule({ ...base, forEach: 'items', fieldPath: 'items[]', expression: '$value > 0' })).toEqual([]);
    expect(checkRule({ ...base, forEach: 'items', fieldPath: 'total', expression: '$value > 0' })).toEqual([]);
  });
});

describe('message templates are checked at save time with positions (3.6)', () => {
  const TEMPLATES: Array<[string, CompileError['code'], number, number]> = [
    ['Amount {{ new X }}', 'NOT_ALLOWED', 1, 11],
    ['Amount {{ a =  }}', 'SYNTAX_ERROR', 1, 16],
    ['line one\nline {{ this }}', 'NOT_ALLOWED', 2, 9],
    ['{{ }}', 'SYNTAX_ERROR', 1, 3],
    ['text {{ a', 'SYNTAX_ERROR', 1, 6],
    ['{{ a }} and {{ b; c }}', 'SYNTAX_ERROR', 1, 19],
    ['{{\n  foo()\n}}', 'UNKNOWN_FUNCTION', 2, 3],
  ];
  it.each(TEMPLATES)('%j is %s at %i:%i', (message, code, line, column) => {
    const errors = checkRule({ code: 'R-1', name: 'Rule', expression: 'true', message });
    expect(errors.length, JSON.stringify(errors)).toBe(1);
    expect(errors[0]).toMatchObject({ field: 'message', code, line, column });
  });

  it('accepts text without placeholders, stray braces and several placeholders', () => {
    for (const message of ['plain', 'a } b { c }}', '{{ $value }} of {{ $expected }}: {{ upper(name) }}', '']) {
      expect(checkRule({ code: 'R-1', name: 'Rule', expression: 'true', message })).toEqual([]);
    }
  });
});

describe('limits are configurable per call', () => {
  it('uses the given limits and the defaults for the rest', () => {
    const rule = { code: 'R-1', name: 'Rule', expression: 'a.every(x => x.b.every(y => y))' };
    expect(checkRule(rule)).toEqual([]);
    expect(checkRule(rule, { limits: { maxCallbackDepth: 1 } })[0].code).toBe('TOO_DEEP');
    expect(checkRule({ ...rule, expression: 'aaaa > 1' }, { limits: { maxExpressionLength: 5 } })[0].code).toBe('TOO_LONG');
  });
});

describe('compileRuleset leaves rules with errors out and reports them', () => {
  it('compiles the good rules and lists the bad ones', () => {
    const compiled = compileRuleset([
      { code: 'GOOD', name: 'Good', expression: 'a > 1' },
      { code: 'BAD', name: 'Bad', expression: 'process.exit()' },
      { code: 'OFF', name: 'Off', expression: 'this', enabled: false },
    ]);
    expect(compiled.ruleCount).toBe(1);
    expect(compiled.errors).toEqual([
      { ruleCode: 'BAD', field: 'expression', code: 'UNKNOWN_FUNCTION', message: 'unknown method `.exit()`', line: 1, column: 9 },
    ]);
    expect(compiled.validate({ a: 0 }, 0).failures.map((f) => f.ruleCode)).toEqual(['GOOD']);
  });

  it('never throws on rules that are not even objects', () => {
    const compiled = compileRuleset([null as never, 'x' as never, { code: 'A', name: 'A', expression: 'true' }]);
    expect(compiled.ruleCount).toBe(1);
    expect(compiled.errors.map((e) => e.code)).toEqual(['INVALID_RULE', 'INVALID_RULE']);
  });
});
