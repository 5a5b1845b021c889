/**
 * Differential test: the compiled validator and the reference interpreter
 * (reference-interpreter.ts, written from docs/rule-language.md alone) must return the
 * same result, key order included, for random well-formed rules and random
 * payloads. Runs are seeded: set DIFF_SEED to replay, DIFF_RUNS to scale.
 * fast-check prints the seed and the shrunk counterexample on failure.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkRule, compileRuleset } from '../../compiler/index.ts';
import type { RuleDefinition } from '../../compiler/types.ts';
import { edgeExpressionArb, exhaustiveExpressions, expressionArb, payloadArb, rulesetArb } from './arbitraries.ts';
import { evaluateSource, referenceValidate } from './reference-interpreter.ts';

const NOW = Date.UTC(2024, 5, 15, 12, 30);
const SEED = Number(process.env.DIFF_SEED ?? 20_240_615);
const RUNS = Number(process.env.DIFF_RUNS ?? 1);
/** Property tests scale with DIFF_RUNS; so does their time budget. */
const BUDGET = 30_000 * RUNS;

/** Compiles once, then checks every payload against the reference. */
function agree(rules: RuleDefinition[], payloads: string[]): void {
  const compiled = compileRuleset(rules);
  expect(compiled.errors, 'a well-formed rule was refused').toEqual([]);
  for (const rule of rules) expect(checkRule(rule), `checkRule disagrees on ${rule.code}`).toEqual([]);
  const seen: Array<[string, unknown, string]> = [];
  for (const text of payloads) {
    const expected = referenceValidate(rules, JSON.parse(text), NOW);
    const actual = compiled.validate(JSON.parse(text), NOW);
    // Compared as the service sends them: JSON (so -0 and 0 are one value), key order included.
    expect(JSON.parse(JSON.stringify(actual)), `payload ${text}`).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(JSON.stringify(actual), `payload ${text}`).toBe(JSON.stringify(expected));
    seen.push([text, actual, JSON.stringify(expected)]);
  }
  // A later call must not change an earlier result (no state shared between calls).
  for (const [text, actual, expected] of seen) expect(JSON.stringify(actual), `payload ${text}, re-read`).toBe(expected);
}

/**
 * Rules that make an expression's value observable: whether it is exactly
 * true, its rendering (3.6) and a few type probes.
 */
export function probeRules(expression: string, forEach: boolean): RuleDefinition[] {
  const each = forEach ? { forEach: 'items' } : {};
  const rules: RuleDefinition[] = [
    { code: 'exact', name: 'exact', expression, ...each },
    { code: 'value', name: 'value', expression: 'false', message: `{{ ${expression} }}`, ...each },
  ];
  if (expression.length < 300) {
    const probes = ['isString', 'isNumber', 'exists', 'isArray', '!'].map((f) => `{{ ${f}(${expression}) }}`);
    probes.push(`{{ (${expression}) == null }}`);
    rules.push({ code: 'kind', name: 'kind', expression: 'false', message: probes.join('|'), ...each });
  }
  return rules;
}

const payloads = fc.array(payloadArb, { minLength: 1, maxLength: 3 });

describe('reference interpreter against docs/rule-language.md examples', () => {
  const payload = {
    loan: { amount: 12000 }, s: 'a😀', n: 5, items: [{ qty: 1 }, { qty: 0 }], obj: { k: 1 },
    'first-name': 'Ann', nul: null,
  };
  const cases: Array<[string, unknown]> = [
    ['loan.amount', 12000],
    ['$["first-name"]', 'Ann'],
    ['$value == $', true],
    ['obj.constructor', undefined],
    ['obj.__proto__', undefined],
    ['obj.toString', undefined],
    ['obj.missing.deeper', undefined],
    ['[1, [2, "x"]] == [1, [2, "x"]]', true],
    ['[1, 2] == [2, 1]', false],
    ['1 == "1"', false],
    ['nul == missing', false],
    ['"B" < "a"', true],
    ['1 < "2"', false],
    ['null < 1', false],
    ['1 + "1" == "11"', false],
    ['isNumber(1 + "1")', false],
    ['"a" + "b"', 'ab'],
    ['1 / 0 == 1 / 0', false],
    ['1 / 0 != 1 / 0', true],
    ['isNumber(1e308 * 10)', false],
    ['-"5" < 0', false],
    ['0.1 + 0.2 == 0.3', false],
    ['s.length', 3],
    ['len(s)', 2],
    ['len(obj)', 1],
    ['len(5)', undefined],
    ['items.every(i => i.qty > 0)', false],
    ['items.some(i => i.qty > 0)', true],
    ['items.filter(i => i.qty > 0).length', 1],
    ['items.map(i => i.qty)', [1, 0]],
    ['items.find(i => i.qty == 0).qty', 0],
    ['items.every(x => [1, 2].some(y => y == x.qty))', false],
    ['[[1], 2].includes([1])', true],
    ['n.startsWith("5")', undefined],
    ['s.startsWith("a")', true],
    ['isEmpty([]) && isEmpty("") && isEmpty(missing) && !isEmpty(0)', true],
    ['sum([])', 0],
    ['avg([])', undefined],
    ['isNumber(min(1, "2"))', false],
    ['max([3, 9, 2])', 9],
    ['min(4, 2, 8)', 2],
    ['round(2.5)', 3],
    ['round(-2.5)', -3],
    ['round(1.005, 2)', 1.01],
    ['round(123.456, 1)', 123.5],
    ['round(0.000001234, 8)', 0.00000123],
    ['daysBetween("2024-01-01", "2024-03-01")', 60],
    ['daysBetween("2024-03-01", "2024-01-01")', -60],
    ['date("2024-01-01") == date("2024-01-01T00:00:00Z")', true],
    ['date("2024-01-01T00:00:00")', Date.UTC(2024, 0, 1)],
    ['date("2021-02-29")', undefined],
    ['age("2000-06-16")', 23],
    ['age("2000-06-15")', 24],
    ['isDate("2024-02-30")', false],
    ['isEmail("a@b.co")', true],
    ['isUuid("123e4567-e89b-12d3-a456-426614174000")', true],
    ['distinct([1, [1], "1"])', true],
    ['distinct([[1], [1]])', false],
    ['missing ?? "d"', 'd'],
    ['nul || 0 || "x"', 'x'],
    ['n > 1 ? "big" : "small"', 'big'],
  ];
  it.each(cases)('%s', (src, want) => {
    expect(evaluateSource(src, { payload, now: NOW })).toEqual(want);
  });

  it('reports missing, forEach and priority semantics of 2.1-2.3', () => {
    const rules: RuleDefinition[] = [
      { code: 'qty', name: 'Qty', forEach: 'items', fieldPath: 'items[].qty', expression: '$item.qty > 0', message: '#{{ $index }}: {{ $value }} <= {{ $expected }}' },
      { code: 'max', name: 'Max', fieldPath: 'loan.amount', expression: 'loan.amount <= 10000', priority: -1 },
      { code: 'req', name: 'Req', fieldPath: 'zip', required: true },
      { code: 'skip', name: 'Skip', fieldPath: 'zip', expression: 'zip > 1' },
      { code: 'off', name: 'Off', expression: 'false', enabled: false },
      { code: 'when', name: 'When', expression: 'false', when: 'n > 10' },
    ];
    expect(referenceValidate(rules, payload, NOW)).toEqual({
      isValid: false,
      totalRulesEvaluated: 3,
      failures: [
        { ruleCode: 'max', ruleName: 'Max', severity: 'Error', message: 'Max failed', errorCode: 'max', fieldPath: 'loan.amount', actualValue: 12000, expectedValue: 10000 },
        { ruleCode: 'qty', ruleName: 'Qty', severity: 'Error', message: '#1: 0 <= 0', errorCode: 'qty', fieldPath: 'items[1].qty', actualValue: 0, expectedValue: 0 },
        { ruleCode: 'req', ruleName: 'Req', severity: 'Error', message: 'Req failed', errorCode: 'req', fieldPath: 'zip', actualValue: null, expectedValue: null },
      ],
    });
  });

  // docs/rule-language.md, forEach: a fieldPath outside the array, missing, skips a rule
  // that is not required as a whole (not counted, even on an empty array); a required one
  // counts once and fails per element.
  const outside: Array<[string, unknown, number, number]> = [
    ['optional, missing', { items: [{}, {}] }, 0, 0],
    ['optional, null', { items: [{}], customer: { id: null } }, 0, 0],
    ['optional, missing, empty array', { items: [] }, 0, 0],
    ['optional, present', { items: [{}, {}], customer: { id: 0 } }, 1, 2],
    ['required, missing', { items: [{}, {}] }, 1, 2],
    ['required, missing, empty array', { items: [] }, 1, 0],
  ];
  it.each(outside)('counts a forEach rule with a fieldPath outside the array: %s', (name, payload, counted, failed) => {
    const rule: RuleDefinition = {
      code: 'cust', name: 'Cust', forEach: 'items', fieldPath: 'customer.id', expression: '$value > 0',
      ...(name.startsWith('required') ? { required: true } : {}),
    };
    const reference = referenceValidate([rule], payload, NOW);
    expect(reference.totalRulesEvaluated).toBe(counted);
    expect(reference.failures.map((f) => f.fieldPath)).toEqual(Array(failed).fill('customer.id'));
    expect(compileRuleset([rule]).validate(payload, NOW)).toEqual(reference);
  });

  // docs/rule-language.md, expectedValue: inferred where the subject is "the path equal to the rule's
  // fieldPath", a forEach rule's fieldPath outside the array too (as the compiler has it).
  it.each([
    ['obj.k < 3', 3],
    ['[0, 1].includes(obj.k)', [0, 1]],
  ])('infers the expected value of a forEach rule from its fieldPath outside the array: %s', (expression, expected) => {
    const rule: RuleDefinition = { code: 'K', name: 'k', forEach: 'items', fieldPath: 'obj.k', expression };
    const payload = { items: [{}], obj: { k: 5 } };
    const reference = referenceValidate([rule], payload, NOW);
    expect(reference.failures.map((f) => f.expectedValue)).toEqual([expected]);
    expect(compileRuleset([rule]).validate(payload, NOW)).toEqual(reference);
  });
});

/**
 * matches() is not in the reference interpreter; on short subjects native
 * RegExp with the `u` flag (JSON Schema's ECMA-262 dialect) is a safe
 * reference, whatever engine the compiler picks (native or RE2).
 */
const REGEX_PATTERNS = ['^\\s+$', '\\s', '^.$', '^..$', '.', '^\\w+$', '\\bfoo\\b', '\\Bo', '^[^]$', '^\\d{3}$', 'a$', '^$', '[\\u2028]',
  '\\p{L}', '^\\p{Lu}', '\\P{L}', '(?:ab)+', '^a{2,3}$', '[\\s\\S]', '\\S', '\\W', '\\D', '[^\\s]', '^\\u{1F600}$', '\\x41',
  '[\\b]', '\\0', '(?<n>a)b', 'a+?', '^[a-z]+$', '(a|a)*b', '(a|b)*\\s', '(x+x+)+y', '^(\\s|a)*$', '(.|\\n)*z', '(\\w|é)+$',
  '(\\d|１)+$', '(a*)*\\.$', '(\\S+\\s*)*!', '([^a]|a)*c', '(\\p{L}|1)*2', '(\\b|a)*x', '(?:\\u{1F600}|a)*b', '(.)*\\r',
  '([\\s\\S])*$', '(a|B)*[^]', '^[😀-😂]$', '(😀|a)*$', '\\cJ', '^(?:a|ab)(?:c|bcd)$', '^x*y*x*$', '[\\d-z]+'];
const REGEX_SUBJECTS = ['', ' ', '\u00a0', '\u2028', '\ufeff', '\t', '\n', '\r', 'a', '😀', '😁', 'é', 'É', 'foo bar', 'foo', '123', '１２３',
  'ǅ', '\ud800', '\udc00', 'a\n', 'A', '_', 'ab', 'abab', 'aab', 'abcd', 'xxy', 'xyx', 'a.', 'b', 'é!', ' 2', 'x', 'c', '\u0000', 'A\r',
  'aaz', '\u1680', '\u3000', '-', 'z', '\b'];

describe('matches() agrees with native RegExp (u flag) on short subjects', () => {
  it.each(REGEX_PATTERNS)('%s', (pattern) => {
    const rule: RuleDefinition = { code: 'm', name: 'm', fieldPath: 's', expression: `matches(s, ${JSON.stringify(pattern)})` };
    const compiled = compileRuleset([rule]);
    if (compiled.errors.length > 0) {
      expect(['UNSAFE_PATTERN', 'INVALID_PATTERN']).toContain(compiled.errors[0].code);
      return;
    }
    const native = new RegExp(pattern, 'u');
    const differing = REGEX_SUBJECTS.filter((s) => compiled.validate({ s }, NOW).isValid !== native.test(s));
    expect(differing.map((s) => JSON.stringify(s))).toEqual([]);
    expect(compiled.validate({ s: 5 }, NOW).isValid).toBe(false);
  });
});

describe('compiled validator agrees with the reference interpreter', () => {
  const TABLE_PAYLOAD = '{"n":2.5,"s":"a😀","nums":[1,2.5],"tags":["a","b"],"items":[{"qty":1},{"qty":3}],"obj":{"k":1,"inner":{"z":0},"0":"zero","length":4}}';
  const table = exhaustiveExpressions();

  /** Many expressions per compile: each becomes its own probe rules, codes kept distinct. */
  function tableChunk(chunk: string[], offset: number): RuleDefinition[] {
    return chunk.flatMap((expression, i) =>
      probeRules(expression, false).map((r) => ({ ...r, code: `${r.code}.${String(offset + i).padStart(5, '0')}`, name: expression })));
  }

  it.each([...table.keys()])('on the exhaustive edge-value table: %s', (family) => {
    const expressions = table.get(family) ?? [];
    for (let offset = 0; offset < expressions.length; offset += 500) {
      const rules = tableChunk(expressions.slice(offset, offset + 500), offset);
      const compiled = compileRuleset(rules);
      expect(compiled.errors).toEqual([]);
      const actual = compiled.validate(JSON.parse(TABLE_PAYLOAD), NOW);
      const expected = referenceValidate(rules, JSON.parse(TABLE_PAYLOAD), NOW);
      const differing = expected.failures
        .map((f, k) => [f, actual.failures[k]] as const)
        .filter(([e, a]) => JSON.stringify(e) !== JSON.stringify(a))
        .map(([e, a]) => `${e.ruleName}: want ${JSON.stringify(e.message)}, got ${JSON.stringify(a?.message)}`);
      expect(differing).toEqual([]);
      expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
    }
  });

  it('on every function, method and operator applied to edge values', () => {
    fc.assert(
      fc.property(edgeExpressionArb, payloads, (expression, texts) => agree(probeRules(expression, false), texts)),
      { seed: SEED + 4, numRuns: 800 * RUNS },
    );
  }, BUDGET);

  it('on random expressions (value, exact truth and type probes)', () => {
    fc.assert(
      fc.property(expressionArb(false, 4, 'any'), payloads, (expression, texts) => agree(probeRules(expression, false), texts)),
      { seed: SEED, numRuns: 500 * RUNS },
    );
  }, BUDGET);

  it('on random boolean expressions', () => {
    fc.assert(
      fc.property(expressionArb(false, 5, 'bool'), payloads, (expression, texts) => agree(probeRules(expression, false), texts)),
      { seed: SEED + 1, numRuns: 500 * RUNS },
    );
  }, BUDGET);

  it('on random expressions inside forEach ($item, $index, $value)', () => {
    fc.assert(
      fc.property(expressionArb(true, 4, 'any'), payloads, (expression, texts) => agree(probeRules(expression, true), texts)),
      { seed: SEED + 2, numRuns: 400 * RUNS },
    );
  }, BUDGET);

  it('on large random rulesets (hundreds of rules, split into several generated functions)', () => {
    const large = fc.array(rulesetArb, { minLength: 30, maxLength: 60 }).map((sets) =>
      sets.flatMap((rules, i) => rules.map((r) => ({ ...r, code: `${r.code}.${String(i).padStart(2, '0')}` }))));
    fc.assert(fc.property(large, payloads, (rules, texts) => agree(rules, texts)), { seed: SEED + 5, numRuns: 10 * RUNS });
  }, BUDGET);

  it('on random rulesets (when, fieldPath, required, forEach, messages, priorities)', () => {
    fc.assert(
      fc.property(rulesetArb, payloads, (rules, texts) => agree(rules, texts)),
      { seed: SEED + 3, numRuns: 1000 * RUNS },
    );
  }, BUDGET);
});
