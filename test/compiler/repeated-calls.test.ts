/**
 * A call that occurs twice in one expression is computed once, its value
 * kept in a temporary (compiler/expression/generate.ts). The temporary must
 * be read only where its store surely ran: after it, outside any branch that
 * may have been skipped, or in a branch that runs only when the store did.
 * Random expressions built from a few calls repeated in every position
 * (`&&`, `||`, `??`, `?:`, `!`, callbacks) are compared with the reference
 * interpreter, on payloads that make each condition go either way. So is
 * `sum(list.map(...))`, generated as one loop without the mapped array, and
 * payload paths that several rules read, read once per validation.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRuleset } from '../../compiler/index.ts';
import type { RuleDefinition } from '../../compiler/types.ts';
import { referenceValidate } from './reference-interpreter.ts';

const NOW = Date.UTC(2024, 5, 15, 12, 30);

const CALLS = [
  'len(s)', 'len(tags)', 'daysBetween(d1, d2)', 'age(d1)', 'sum(items.map(i => i.qty))', 'trim(s)', 'len(trim(s))',
  's.startsWith("a")', 'isNumber(n)', 'min(n, 3)', 'date(d1)', 'tags.includes("b")', 'items.some(i => i.qty > len(s))',
];

/** Probes of an expression's value, as the differential test's probeRules (importing it would run that file's tests). */
function probeRules(expression: string): RuleDefinition[] {
  const rules: RuleDefinition[] = [
    { code: 'exact', name: 'exact', expression },
    { code: 'value', name: 'value', expression: 'false', message: `{{ ${expression} }}` },
  ];
  if (expression.length < 300) {
    const probes = ['isString', 'isNumber', 'exists', 'isArray', '!'].map((f) => `{{ ${f}(${expression}) }}`);
    rules.push({ code: 'kind', name: 'kind', expression: 'false', message: probes.join('|') });
  }
  return rules;
}

/**
 * Expressions `depth` operators deep over two or three of the calls, so
 * that the same call turns up in many positions; at most one callback wraps
 * others (callbacks nest two levels at most).
 */
function expression(calls: string[], depth: number, callback = true): fc.Arbitrary<string> {
  const call = fc.constantFrom(...calls);
  const compared = fc.tuple(call, fc.constantFrom('>=', '<=', '==', '!=', '>'), fc.constantFrom('0', '1', '3', '"a"', 'null', '30'))
    .map(([a, op, b]) => `${a} ${op} ${b}`);
  if (depth === 0) return fc.oneof(call, compared);
  const inner = expression(calls, depth - 1, callback);
  const wrapped = callback ? [{ arbitrary: expression(calls, depth - 1, false).map((a) => `items.some(i => ${a})`), weight: 1 }] : [];
  return fc.oneof(
    { arbitrary: call, weight: 1 },
    { arbitrary: compared, weight: 2 },
    { arbitrary: fc.tuple(inner, fc.constantFrom('&&', '||', '??'), inner).map(([a, op, b]) => `(${a}) ${op} (${b})`), weight: 4 },
    { arbitrary: fc.tuple(inner, inner, inner).map(([a, b, c]) => `(${a}) ? (${b}) : (${c})`), weight: 2 },
    { arbitrary: inner.map((a) => `!(${a})`), weight: 2 },
    { arbitrary: fc.tuple(inner, inner).map(([a, b]) => `[${a}, ${b}]`), weight: 1 },
    ...wrapped,
  );
}

const expressions = fc.subarray(CALLS, { minLength: 2, maxLength: 3 }).chain((calls) => expression(calls, 3));

const payload = fc.record({
  s: fc.constantFrom(' ab ', 'a', '', 'abc', 5, null),
  tags: fc.constantFrom(['a', 'b'], [], ['b'], 'ab'),
  d1: fc.constantFrom('2000-06-15', '2024-06-01', '2024-02-30', 7, '2024-06-15T12:30Z'),
  d2: fc.constantFrom('2024-06-15', '2024-01-01', 'nope'),
  n: fc.constantFrom(0, 2.5, 9, '9'),
  items: fc.constantFrom([{ qty: 1 }, { qty: 3 }], [], [{ qty: 'x' }], [{}], 'none'),
}, { requiredKeys: [] });

function agree(expression: string, payloads: object[]): void {
  const rules = probeRules(expression);
  const compiled = compileRuleset(rules);
  expect(compiled.errors, expression).toEqual([]);
  for (const p of payloads) {
    const text = JSON.stringify(p);
    const actual = compiled.validate(JSON.parse(text), NOW);
    const expected = referenceValidate(rules, JSON.parse(text), NOW);
    expect(JSON.stringify(actual), `${expression} on ${text}`).toBe(JSON.stringify(expected));
  }
}

describe('repeated calls computed once', () => {
  it('read their temporary only where its store surely ran', () => {
    fc.assert(
      fc.property(expressions, fc.array(payload, { minLength: 3, maxLength: 6 }), agree),
      { seed: 20_240_615, numRuns: 1500 },
    );
  }, 60_000);

  it.each([
    '!(isNumber(n) && len(s) > 1) && len(s) == 3',
    '!(isNumber(n) || len(s) > 1) && len(s) == 0',
    '(isNumber(n) && len(s) > 1) || len(s) == 3',
    '(isNumber(n) || len(s) > 1) ? len(s) : 7',
    '(isNumber(n) && len(s) > 1) ? 7 : len(s)',
    '(trim(s) && len(s) > 1) ?? len(s)',
    'isString(s) ? len(s) > 1 && len(s) < 9 : len(s) == 3 || len(s)',
    'items.some(i => len(s) > i.qty) && len(s) > 0 && items.some(i => len(s) > i.qty)',
  ])('in the shapes where a store may not have run: %s', (source) => {
    const payloads = [{ s: 'abc', n: 1 }, { s: 'abc' }, { s: '', n: 2 }, { n: 'x' }, { s: 'ab', items: [{ qty: 1 }] }];
    agree(source, payloads);
  });

  it('share a temporary in the generated code', () => {
    const { source } = compileRuleset([{ code: 'W', name: 'Window', expression: 'daysBetween(d1, d2) >= 0 && daysBetween(d1, d2) <= 90' }]);
    expect(source.match(/daysBetween\(/g)).toHaveLength(1);
    // (len(s) against a literal is decided by lenAtLeast / lenAtMost instead: test/compiler/fast-paths.test.ts.)
    const { source: both } = compileRuleset([{ code: 'L', name: 'Size', expression: 'isNumber(n) && abs(n) >= 1 && abs(n) <= 5' }]);
    expect(both.match(/abs\(/g)).toHaveLength(1);
  });

  it('are computed again where the first one may not have run', () => {
    const { source } = compileRuleset([{ code: 'O', name: 'Or', expression: '(isNumber(n) || abs(n) > 1) && abs(n) < 5' }]);
    expect(source.match(/abs\(/g)).toHaveLength(2);
    const { source: branches } = compileRuleset([{ code: 'C', name: 'Cond', expression: 'isNumber(n) ? abs(n) > 1 : abs(n) < 5' }]);
    expect(branches.match(/abs\(/g)).toHaveLength(2);
  });
});

describe('sum(list.map(...)) as one loop', () => {
  it.each([
    'sum(items.map(i => i.qty))',
    'sum(items.map(i => i.qty * 2)) > 3',
    'sum(items.map(i => i.qty)) ?? "none"',
    'sum(items.map(i => sum(i.parts.map(p => p))))',
    'sum(tags.map(t => len(t)))',
  ])('agrees with the reference: %s', (source) => {
    const payloads = [
      { items: [{ qty: 1 }, { qty: 3 }] }, { items: [] }, { items: [{ qty: 'x' }, { qty: 1 }] }, { items: [{}] }, { items: 'none' }, {},
      { items: [{ qty: 1e308 }, { qty: 1e308 }, { qty: -1e308 }] }, { items: [{ qty: -0 }] }, { items: [{ qty: 0.1 }, { qty: 0.2 }] },
      { items: [{ qty: 1, parts: [1, 2] }, { qty: 2, parts: [] }] }, { items: [{ parts: [1, 'x'] }] }, { tags: ['ab', 'c'] }, { tags: [1] },
    ];
    agree(source, payloads);
  });

  it('builds no array', () => {
    const { source } = compileRuleset([{ code: 'S', name: 'Sum', expression: 'sum(items.map(i => i.qty)) > 0' }]);
    expect(source).not.toContain('const out = [];');
    expect(source).toContain('function sum0(list)');
  });
});

describe('payload paths several rules read', () => {
  const rules: RuleDefinition[] = [
    { code: 'A', name: 'Amount', fieldPath: 'loan.amount', required: true, expression: '$value > 0' },
    { code: 'B', name: 'Currency', fieldPath: 'loan.currency', when: 'loan.amount > 10', expression: 'len($value) == 3' },
    { code: 'C', name: 'Lines', forEach: 'loan.lines', fieldPath: 'loan.lines[].qty', expression: '$value <= loan.amount' },
    { code: 'D', name: 'Length', expression: 'loan.lines.length < 3 && loan.currency.length == 3', message: '{{ loan.amount }}' },
  ];

  it('are read once, at the top of the validator', () => {
    const { source } = compileRuleset(rules);
    const loanReaders = source.match(/function (get\d+)\(o\) \{\n\s+if \(o === null \|\| typeof o !== "object"\) return undefined;\n\s+const value = o\["loan"\];/);
    expect(loanReaders).not.toBeNull();
    expect(source.split(`${loanReaders?.[1]}(payload)`)).toHaveLength(2);
  });

  it('give the same results as reading them in each rule', () => {
    const payloads = [
      { loan: { amount: 20, currency: 'EUR', lines: [{ qty: 1 }, { qty: 30 }] } }, { loan: { amount: 5, currency: 'EU', lines: 'x' } },
      { loan: null }, { loan: [1] }, {}, [], 'loan', JSON.parse('{"loan":{"__proto__":{"amount":1},"amount":-1}}'),
    ];
    const compiled = compileRuleset(rules);
    for (const p of payloads) {
      const text = JSON.stringify(p);
      expect(JSON.stringify(compiled.validate(JSON.parse(text), NOW)), text).toBe(JSON.stringify(referenceValidate(rules, JSON.parse(text), NOW)));
    }
  });
});

describe('identical callbacks across rules', () => {
  const rules: RuleDefinition[] = [
    { code: 'A', name: 'Total', expression: 'sum(items.map(i => i.price * i.qty)) <= 100' },
    { code: 'B', name: 'Total again', expression: 'sum(items.map(i => i.price * i.qty)) >= 1', message: '{{ sum(items.map(i => i.price * i.qty)) }}' },
    // The same body under other methods: functions of their own.
    { code: 'C', name: 'Mapped', expression: 'len(items.map(i => i.price * i.qty)) > 0' },
    { code: 'D', name: 'Nested', expression: 'orders.every(o => o.lines.every(l => l.qty <= o.max))' },
    { code: 'E', name: 'Nested again', when: 'exists(orders)', expression: 'orders.every(o => o.lines.every(l => l.qty <= o.max))' },
    // The inner body reads another field of the outer parameter: not the same function.
    { code: 'F', name: 'Nested, other bound', expression: 'orders.every(o => o.lines.every(l => l.qty <= o.min))' },
  ];

  it('share one hoisted function each', () => {
    const { source } = compileRuleset(rules);
    const declared = [...source.matchAll(/function (sum|map|every)\d+\(/g)].map((m) => m[1]);
    // map (C), every outer and inner (D, E), every outer and inner (F); the sums of A and B are one
    // pass over `items` before A (compiler/fuse-loops.ts), which computes their total once.
    expect(declared.sort()).toEqual(['every', 'every', 'every', 'every', 'map']);
    expect([...source.matchAll(/let (total\d+);/g)].map((m) => m[1])).toEqual(['total0']);
  });

  it('give the same results as the reference interpreter', () => {
    const payloads = [
      { items: [{ price: 2, qty: 3 }, { price: 50, qty: 2 }], orders: [{ max: 3, min: 1, lines: [{ qty: 2 }, { qty: 3 }] }] },
      { items: [{ price: 'x', qty: 1 }], orders: [{ max: 1, min: 5, lines: [{ qty: 2 }] }] },
      { items: [], orders: [] }, { items: 'none', orders: [{ lines: 'x' }] }, {},
    ];
    const compiled = compileRuleset(rules);
    for (const p of payloads) {
      const text = JSON.stringify(p);
      expect(JSON.stringify(compiled.validate(JSON.parse(text), NOW)), text).toBe(JSON.stringify(referenceValidate(rules, JSON.parse(text), NOW)));
    }
  });
});
