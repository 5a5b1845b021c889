/**
 * Loop fusion (compiler/fuse-loops.ts) and the other generated-code
 * shortcuts of the realistic-loan work: rules that walk the same payload
 * array share one loop, fields of JSON objects are read in place, and two
 * plain ISO days compare as text. None of it may change a result: the
 * validator generated with fusion and the one generated without it (the
 * `fuseLoops: false` option), the reference interpreter written from
 * docs/rule-language.md, and the standalone module must return the same
 * results, failures, order, paths and messages included, on random
 * payloads full of edge cases.
 */
import fc from 'fast-check';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileRuleset } from '../../compiler/index.ts';
import { planRuleset, tryInstantiate, instantiateSteps } from '../../compiler/compile-ruleset.ts';
import { fusibleLoops } from '../../compiler/fuse-loops.ts';
import { compareDates, date, TooManyFailuresError } from '../../compiler/runtime.ts';
import { buildStandaloneModule } from '../../compiler/standalone/index.ts';
import { runSteps } from '../../compiler/steps.ts';
import type { RuleDefinition, ValidationResult, ValidatorFn } from '../../compiler/types.ts';
import { realisticLoanSuite } from '../../bench/suites/realistic-loan.ts';
import { referenceValidate } from './reference-interpreter.ts';

const NOW = Date.UTC(2025, 5, 1, 12);
const SEED = Number(process.env.DIFF_SEED ?? 20_251_129);

/**
 * Rules whose order interleaves: a sum before the forEach rules, a rule
 * over another field between them, a forEach rule with a `when`, one
 * without a fieldPath, a sum in a message and in a `when`, and a second
 * array.
 */
const RULES: RuleDefinition[] = [
  { code: 'A_TOTAL', name: 'Total', fieldPath: 'limit', expression: 'sum(items.map(i => i.qty * i.price)) <= $value', message: 'total {{ sum(items.map(i => i.qty * i.price)) }} over {{ $value }}' },
  { code: 'B_PRICE', name: 'Price', forEach: 'items', fieldPath: 'items[].price', required: true, expression: 'isNumber($value) && $value > 0', message: 'item {{ $index }}: price {{ $value }}' },
  { code: 'C_DATES', name: 'Dates', fieldPath: 'end', required: true, expression: 'date($value) > date(start)', message: '{{ $value }} after {{ start }}' },
  { code: 'D_QTY', name: 'Quantity', forEach: 'items', fieldPath: 'items[].qty', when: '$item.active != false', expression: 'isInteger($value) && $value >= 1' },
  { code: 'E_ITEM', name: 'Item', forEach: 'items', expression: 'isObject($item) && $index < 50', message: '{{ $index }} {{ $item }}' },
  { code: 'G_WHEN', name: 'When total', when: 'sum(items.map(i => i.qty * i.price)) > 10', fieldPath: 'items', expression: 'len($value) <= 3' },
  { code: 'H_TAGS', name: 'Tag', forEach: 'order.tags', fieldPath: 'order.tags[].name', expression: 'isString($value) && len($value) <= 2' },
  { code: 'I_TAGS', name: 'Tag count', forEach: 'order.tags', expression: '$index < 3' },
  { code: 'J_START', name: 'Start', fieldPath: 'start', expression: 'date($value) >= date(submitted)' },
];

/** Values of every kind, with the awkward ones often. */
const scalar = fc.oneof(
  fc.constantFrom(null, true, false, 0, -0, 1, 2.5, -1, 1e308, '', 'a', 'Abc', '3', 'abc'),
  fc.integer({ min: -5, max: 200 }),
  fc.string({ maxLength: 4 }),
);

/** Dates of several forms, valid and not, and things that are no date at all. */
const dateText = fc.oneof(
  fc.constantFrom('2025-01-01', '2025-02-28', '2024-02-29', '2025-02-29', '2025-02-30', '2025-13-01', '2025-00-10', '0000-01-01',
    '9999-12-31', '2025-1-01', '2025-01-01T00:00', '2025-01-01T00:00:00Z', '2024-12-31T23:00:00-02:00', '2025-01-01 12:00',
    '03/15/2025', '2025-01-01Z', '２０２５-01-01', ''),
  fc.date({ min: new Date(Date.UTC(1900, 0, 1)), max: new Date(Date.UTC(2100, 0, 1)), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10)),
  fc.date({ min: new Date(Date.UTC(2000, 0, 1)), max: new Date(Date.UTC(2030, 0, 1)), noInvalidDate: true }).map((d) => d.toISOString()),
);

const item = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      qty: fc.oneof(fc.integer({ min: -1, max: 5 }), scalar),
      price: fc.oneof(fc.double({ min: -2, max: 50, noNaN: true }), scalar),
      active: fc.oneof(fc.boolean(), scalar),
    }, { requiredKeys: [] }),
  },
  { weight: 1, arbitrary: scalar },
  { weight: 1, arbitrary: fc.constant([1, 2]) },
);

const listOf = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 5, arbitrary: fc.array(arb, { maxLength: 6 }) },
    { weight: 1, arbitrary: scalar },
    { weight: 1, arbitrary: fc.constant({ 0: 1, length: 1 }) },
  );

const payloadArb = fc.record({
  limit: fc.oneof(fc.integer({ min: -10, max: 400 }), scalar),
  items: listOf(item),
  start: fc.oneof(dateText, scalar),
  end: fc.oneof(dateText, scalar),
  submitted: fc.oneof(dateText, scalar),
  order: fc.oneof(fc.record({ tags: listOf(fc.oneof(fc.record({ name: scalar }, { requiredKeys: [] }), scalar)) }, { requiredKeys: [] }), scalar),
}, { requiredKeys: [] }).map((p) => JSON.stringify(p));

/** The validator of `rules` generated without loop fusion. */
function unfused(rules: RuleDefinition[]): ValidatorFn {
  const { plans, errors } = planRuleset(rules);
  expect(errors).toEqual([]);
  const built = runSteps(instantiateSteps(plans, { fuseLoops: false }));
  if (!built.ok) throw built.error;
  return built.validate;
}

const asSent = (result: ValidationResult): string => JSON.stringify(result);

describe('loop fusion', () => {
  it('finds the passes over one array: the realistic loan\'s total and its three item rules', () => {
    const { plans } = planRuleset([...realisticLoanSuite.rules]);
    const groups = fusibleLoops(plans);
    const named = groups.map((g) => ({
      keys: g.keys, first: plans[g.first].code, rules: g.rules.map((i) => plans[i].code), sums: g.sums.map((s) => plans[s.rule].code),
    }));
    expect(named)
      .toEqual([{ keys: ['items'], first: 'ITEMS_TOTAL', rules: ['LINE_PRICE', 'LINE_QTY', 'LINE_SKU'], sums: ['ITEMS_TOTAL', 'ITEMS_TOTAL'] }]);
    const { source } = compileRuleset([...realisticLoanSuite.rules]);
    // One loop over the items, and no separate sum function.
    expect(source.match(/for \(let index = 0;/g)).toHaveLength(1);
    expect(source).not.toMatch(/function sum\d+\(/);
  });

  it('leaves alone what does not fuse: one pass alone, a fieldPath outside the element, a sum reading the rule\'s value', () => {
    const { plans } = planRuleset([
      { code: 'A', name: 'A', forEach: 'items', fieldPath: 'items[].qty', expression: '$value > 0' },
      { code: 'B', name: 'B', forEach: 'items', fieldPath: 'limit', expression: '$value > 0' },
      { code: 'C', name: 'C', fieldPath: 'limit', expression: 'sum(items.map(i => i.qty * $value)) < 10' },
      { code: 'D', name: 'D', forEach: 'other', expression: '$item > 0' },
    ]);
    expect(fusibleLoops(plans)).toEqual([]);
  });

  it('gives the results of the unfused validator and the reference interpreter on random payloads', () => {
    const fused = compileRuleset(RULES);
    expect(fused.errors).toEqual([]);
    expect(fusibleLoops(planRuleset(RULES).plans).map((g) => g.keys)).toEqual([['items'], ['order', 'tags']]);
    const plain = unfused(RULES);
    fc.assert(fc.property(payloadArb, (text) => {
      const expected = asSent(referenceValidate(RULES, JSON.parse(text), NOW));
      expect(asSent(fused.validate(JSON.parse(text), NOW)), text).toBe(expected);
      expect(asSent(plain(JSON.parse(text), NOW)), text).toBe(expected);
    }), { seed: SEED, numRuns: 600 });
  });

  it('keeps each rule\'s failures in element order, at the rule\'s own place', () => {
    const payload = {
      limit: 1, start: '2025-01-02', end: '2025-01-01', submitted: '2025-01-01',
      items: [{ qty: 0, price: -1 }, 'x', { qty: 2, price: 3, active: false }, { price: 1 }],
    };
    const result = compileRuleset(RULES).validate(payload, NOW);
    // Items 2 and 3 have good prices; D_QTY skips the inactive item 2, and items 1 and 3 have no qty
    // (not required); E_ITEM fails for 'x' alone (not an object).
    expect(result.failures.map((f) => `${f.ruleCode} ${f.fieldPath} ${f.message}`)).toEqual([
      'A_TOTAL limit total  over 1',
      'B_PRICE items[0].price item 0: price -1', 'B_PRICE items[1].price item 1: price ',
      'C_DATES end 2025-01-01 after 2025-01-02',
      'D_QTY items[0].qty Quantity failed',
      'E_ITEM  1 x',
    ]);
    expect(asSent(result)).toBe(asSent(unfused(RULES)(payload, NOW)));
  });

  it('reads each field of the element once for all the fused rules, callbacks and messages included, with the unfused results', () => {
    const rules: RuleDefinition[] = [
      { code: 'A', name: 'A', forEach: 'items', fieldPath: 'items[].qty', expression: '$value > 0 && $item.tags.every(t => t != $item.kind)' },
      {
        code: 'B', name: 'B', forEach: 'items', fieldPath: 'items[].kind',
        expression: 'isString($value) && $item.tags.some(t => t == $item.kind + "x") || $item.qty > 5', message: '{{ $item.note }} {{ $value }}',
      },
      { code: 'C', name: 'C', fieldPath: 'limit', expression: 'sum(items.map(i => i.qty * len(i.tags.filter(t => t != i.kind)))) <= $value' },
    ];
    const compiled = compileRuleset(rules);
    const loop = compiled.source.slice(compiled.source.indexOf('for (let index'));
    for (const key of ['qty', 'tags', 'kind', 'note']) {
      expect(loop.split(`item["${key}"]`).length - 1, key).toBe(1);
    }
    const inherited = Object.create({ qty: 3, kind: 'z', tags: ['z'] }) as object;
    const payloads = [
      { limit: 3, items: [{ qty: 2, kind: 'a', tags: ['a', 'b'], note: 'n' }, { qty: 0, kind: 'b', tags: ['bx'] }, 5, null, { qty: 9, kind: 1, tags: [] }, inherited] },
      { limit: 100, items: [{ qty: 1, kind: 'k', tags: ['kx'], note: 'ok' }] },
      { limit: 0, items: 'none' },
    ];
    for (const payload of payloads) {
      expect(asSent(compiled.validate(payload, NOW))).toBe(asSent(unfused(rules)(payload, NOW)));
    }
    expect(compiled.validate(payloads[1], NOW).isValid).toBe(true);
  });

  it('decides a `when` that does not name the value before reading the field, with the same results', () => {
    const rules: RuleDefinition[] = [
      { code: 'A', name: 'A', fieldPath: 'coApplicant.ssn', when: 'loan.amount > 100', required: true, expression: 'len($value) == 3' },
      { code: 'B', name: 'B', fieldPath: 'loan.amount', when: '$value > 100', expression: '$value < 1000' },
    ];
    const { source, validate } = compileRuleset(rules);
    const ruleA = source.slice(source.indexOf('// rule "A"'), source.indexOf('// rule "B"'));
    expect(ruleA.indexOf('if (')).toBeLessThan(ruleA.indexOf('const value'));
    expect(validate({ loan: { amount: 50 } }, NOW).failures).toEqual([]);
    expect(validate({ loan: { amount: 500 } }, NOW).failures.map((f) => f.ruleCode)).toEqual(['A']);
    expect(validate({ loan: { amount: 5000 }, coApplicant: { ssn: 'abc' } }, NOW).failures.map((f) => f.ruleCode)).toEqual(['B']);
  });

  it('still refuses a validation past the failure bound, counting the failures a fused loop keeps aside', () => {
    const rules: RuleDefinition[] = [
      { code: 'A', name: 'A', forEach: 'items', expression: '$item > 0' },
      { code: 'B', name: 'B', forEach: 'items', expression: '$item > 1' },
    ];
    const items = new Array(50_001).fill(0);
    expect(() => compileRuleset(rules).validate({ items }, NOW)).toThrow(TooManyFailuresError);
    expect(() => unfused(rules)({ items }, NOW)).toThrow(TooManyFailuresError);
    // Just within the bound, both answer.
    expect(compileRuleset(rules).validate({ items: items.slice(0, 50_000) }, NOW).failures).toHaveLength(100_000);
  });

  it('the explaining variant does not fuse and explains the same failures', () => {
    const { plans } = planRuleset(RULES);
    const explained = runSteps(instantiateSteps(plans, { explain: true }));
    if (!explained.ok) throw explained.error;
    expect(explained.source()).not.toMatch(/one pass over the array/);
    expect(tryInstantiate(plans).ok && compileRuleset(RULES).source).toMatch(/one pass over the array/);
    const payload = { limit: 0, items: [{ qty: 0 }, 'x'], end: 'x', order: { tags: [{ name: 'A' }] } };
    const { trace: _trace, ...result } = explained.validate(payload, NOW) as ValidationResult & { trace: unknown };
    expect(asSent(result)).toBe(asSent(compileRuleset(RULES).validate(payload, NOW)));
  });
});

describe('reads in place', () => {
  it('read only own fields: a polluted or foreign prototype is not read through', () => {
    const rules: RuleDefinition[] = [
      { code: 'A', name: 'A', fieldPath: 'applicant.age', required: true, expression: '$value >= 18' },
      { code: 'B', name: 'B', fieldPath: 'applicant.name', required: true, expression: 'len($value) > 0' },
      { code: 'C', name: 'C', forEach: 'items', fieldPath: 'items[].qty', required: true, expression: '$value > 0' },
      { code: 'D', name: 'D', forEach: 'items', fieldPath: 'items[].price', required: true, expression: '$value > 0' },
    ];
    const { validate } = compileRuleset(rules);
    const codes = (payload: unknown): string[] => validate(payload, NOW).failures.map((f) => f.fieldPath);
    const inherited = Object.create({ age: 30, name: 'x', qty: 1, price: 1 }) as object;
    expect(codes({ applicant: inherited, items: [inherited] })).toEqual(['applicant.age', 'applicant.name', 'items[0].qty', 'items[0].price']);
    const objectPrototype = Object.prototype as Record<string, unknown>;
    objectPrototype.age = 40;
    objectPrototype.qty = 3;
    try {
      expect(codes({ applicant: { name: 'n' }, items: [{ price: 1 }] })).toEqual(['applicant.age', 'items[0].qty']);
      expect(codes({ applicant: { name: 'n', age: 20 }, items: [{ price: 1, qty: 2 }] })).toEqual([]);
    } finally {
      delete objectPrototype.age;
      delete objectPrototype.qty;
    }
    // Strings and arrays have no such fields; each rule's failures come in element order.
    expect(codes({ applicant: 'age', items: ['qty', [1]] })).toEqual([
      'applicant.age', 'applicant.name', 'items[0].qty', 'items[1].qty', 'items[0].price', 'items[1].price',
    ]);
  });
});

describe('compareDates', () => {
  it('orders as comparing date() of both does, whatever the forms', () => {
    fc.assert(fc.property(fc.oneof(dateText, scalar), fc.oneof(dateText, scalar), (a, b) => {
      const x = date(a);
      const y = date(b);
      const order = compareDates(a, b);
      if (x === undefined || y === undefined) expect(order).toBeNaN();
      else expect(Math.sign(order)).toBe(Math.sign(x - y));
    }), { seed: SEED, numRuns: 3000 });
  });

  it('is what `date(a) > date(b)` and the other comparisons compile to', () => {
    const { source } = compileRuleset([{ code: 'A', name: 'A', expression: 'date(end) > date(start) && date(end) <= date(until)' }]);
    expect(source).toContain('compareDates(');
    expect(source).not.toMatch(/\bgt\(|\ble\(/);
  });
});

describe('the standalone module', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rules-fusion-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs the same fused code and agrees with the unfused validator', async () => {
    const built = await buildStandaloneModule(RULES);
    // esbuild drops comments: the buffers of the fused loop show it.
    expect(built.code).toMatch(/\?\?= \[\]\)\.push\(/);
    const file = join(dir, 'fused.mjs');
    await writeFile(file, built.code);
    const { validate } = (await import(pathToFileURL(file).href)) as { validate: (payload: unknown, options: { now: number }) => ValidationResult };
    const plain = unfused(RULES);
    const payloads = fc.sample(payloadArb, { seed: SEED, numRuns: 400 });
    for (const text of payloads) expect(asSent(validate(JSON.parse(text), { now: NOW })), text).toBe(asSent(plain(JSON.parse(text), NOW)));
  });
});
