/**
 * The language's records (compiler/language/) and what is derived from
 * them: every record names a run-time helper that exists, the derived
 * tables agree with the records, and "did you mean" picks from them.
 */
import { describe, expect, it } from 'vitest';
import { runtime } from '../../compiler/runtime.ts';
import {
  BOOLEAN_FUNCTIONS, CALLBACK_METHOD_RECORDS, FUNCTION_RECORDS, QUADRATIC_FUNCTIONS, VALUE_METHOD_RECORDS, suggestFunction, suggestMethod,
} from '../../compiler/language/index.ts';
import { CALLBACK_METHODS, FUNCTIONS, VALUE_METHODS } from '../../compiler/expression/catalog.ts';
import { FUNCTION_SIGNATURES, METHOD_SIGNATURES } from '../../compiler/analysis/function-types.ts';
import { compileExpressionFunction } from '../../compiler/index.ts';

describe('the records', () => {
  it('name only run-time helpers that exist', () => {
    const helpers = [
      ...FUNCTION_RECORDS.flatMap((f) => [f.helper, ...(f.pairHelper === undefined ? [] : [f.pairHelper])]),
      ...VALUE_METHOD_RECORDS.map((m) => m.helper),
    ];
    expect(helpers.filter((name) => typeof (runtime as Record<string, unknown>)[name] !== 'function')).toEqual([]);
  });

  it('are the catalogue and the type checker\'s signatures, name for name', () => {
    expect(Object.keys(FUNCTIONS)).toEqual(FUNCTION_RECORDS.map((f) => f.name));
    expect(Object.keys(VALUE_METHODS)).toEqual(VALUE_METHOD_RECORDS.map((m) => m.name));
    expect(Object.keys(CALLBACK_METHODS)).toEqual(CALLBACK_METHOD_RECORDS.map((m) => m.name));
    expect(Object.keys(FUNCTION_SIGNATURES)).toEqual(FUNCTION_RECORDS.filter((f) => f.name !== 'matches').map((f) => f.name));
    expect(Object.keys(METHOD_SIGNATURES)).toEqual(VALUE_METHOD_RECORDS.map((m) => m.name));
  });

  it('give every example of their documentation as an expression that compiles', () => {
    const examples = [
      ...FUNCTION_RECORDS.flatMap((f) => f.examples),
      ...[...VALUE_METHOD_RECORDS, ...CALLBACK_METHOD_RECORDS].flatMap((m) => m.uses.map((use) => use.example)),
    ];
    const refused = examples.filter((example) => !compileExpressionFunction(example).ok);
    expect(refused).toEqual([]);
  });

  it('derive the boolean and quadratic sets', () => {
    expect([...BOOLEAN_FUNCTIONS]).toEqual([
      'exists', 'isEmpty', 'isString', 'isNumber', 'isInteger', 'isBoolean', 'isArray', 'isObject', 'matches',
      'isEmail', 'isUuid', 'isUri', 'isDate', 'between',
    ]);
    expect([...QUADRATIC_FUNCTIONS]).toEqual(['distinct']);
  });

  it('fold a call on constants with the helper a validator runs', () => {
    expect(FUNCTION_SIGNATURES.between.fold!([5, 1, 10])).toBe(true);
    expect(FUNCTION_SIGNATURES.min.fold!([3, 1, 2])).toBe(1);
    expect(FUNCTION_SIGNATURES.now.fold).toBeUndefined();
    expect(METHOD_SIGNATURES.toLowerCase.fold!(['AB'])).toBe('ab');
  });
});

describe('between(x, low, high)', () => {
  it.each([
    ['between(5, 1, 10)', true], ['between(1, 1, 10)', true], ['between(10, 1, 10)', true], ['between(0, 1, 10)', false],
    ['between(11, 1, 10)', false], ['between("b", "a", "c")', true], ['between("2025-01-01", "2024-01-01", "2024-12-31")', false],
    ['between(5, "1", 10)', false], ['between(missing, 1, 10)', false], ['between(5, 10, 1)', false], ['between(null, null, null)', false],
  ])('%s is %s', (expression, expected) => {
    const compiled = compileExpressionFunction(expression);
    if (!compiled.ok) throw new Error(compiled.error.message);
    expect(compiled.evaluate({ payload: {} })).toBe(expected);
  });

  it('takes exactly three arguments', () => {
    const compiled = compileExpressionFunction('between(5, 1)');
    expect(compiled.ok ? undefined : compiled.error.message).toBe('`between` takes 3 arguments, got 2');
  });
});

describe('"did you mean"', () => {
  it.each([
    ['today', '`now()`'], ['size', '`len()`'], ['lenn', '`len()`'], ['Distinct', '`distinct()`'], ['contains', 'the method `.includes()`'],
    ['require', undefined], ['constructor', undefined], ['__proto__', undefined],
  ])('for the function %s is %s', (name, expected) => {
    expect(suggestFunction(name)).toBe(expected);
  });

  it.each([
    ['contains', '`.includes()`'], ['startWith', '`.startsWith()`'], ['toLower', '`.toLowerCase()`'], ['all', '`.every()`'],
    ['isEmpty', 'the function `isEmpty()`'], ['split', undefined], ['constructor', undefined],
  ])('for the method %s is %s', (name, expected) => {
    expect(suggestMethod(name)).toBe(expected);
  });
});
