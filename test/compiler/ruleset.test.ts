/**
 * Rule evaluation through compileRuleset (docs/rule-language.md): what a
 * caller sees in `isValid`, `totalRulesEvaluated` and each failure record.
 */
import { describe, expect, it } from 'vitest';
import {
  compileRuleset, MAX_FAILURES_PER_VALIDATION, MAX_RULESET_TEXT_LENGTH, runtime, TooManyFailuresError, type FailureRecord, type RuleDefinition,
} from '../../compiler/index.ts';
import { compileRulesetSteps, planRuleset } from '../../compiler/compile-ruleset.ts';
import { generateRuleset } from '../../compiler/ruleset-source.ts';
import { ruleTextLength } from '../../compiler/rule-plan.ts';

const NOW = Date.UTC(2024, 5, 15, 12);

function validate(rules: RuleDefinition[], payload: unknown, now = NOW) {
  const compiled = compileRuleset(rules);
  expect(compiled.errors).toEqual([]);
  return compiled.validate(payload, now);
}

function failure(partial: Partial<FailureRecord> & { ruleCode: string }): FailureRecord {
  return {
    ruleName: partial.ruleCode,
    severity: 'Error',
    message: `${partial.ruleCode} failed`,
    errorCode: partial.ruleCode,
    fieldPath: '',
    actualValue: null,
    expectedValue: null,
    ...partial,
  };
}

describe('failure records (2.1)', () => {
  it('have all eight keys in the interface order, with the defaults', () => {
    const result = validate([{ code: 'A-1', name: 'Amount limit', fieldPath: 'amount', expression: '$value <= 100' }], { amount: 500 });
    expect(result).toEqual({
      isValid: false,
      totalRulesEvaluated: 1,
      failures: [failure({ ruleCode: 'A-1', ruleName: 'Amount limit', message: 'Amount limit failed', fieldPath: 'amount', actualValue: 500, expectedValue: 100 })],
    });
    expect(Object.keys(result.failures[0])).toEqual([
      'ruleCode', 'ruleName', 'severity', 'message', 'errorCode', 'fieldPath', 'actualValue', 'expectedValue',
    ]);
    expect(Object.keys(result)).toEqual(['isValid', 'totalRulesEvaluated', 'failures']);
  });

  it('carry severity, errorCode, message and expectedValue as given', () => {
    const [f] = validate([{
      code: 'W', name: 'Warn', severity: 'Warning', errorCode: 'E_WARN', message: 'careful', expectedValue: { max: 1 },
      expression: 'false',
    }], {}).failures;
    expect(f).toEqual(failure({ ruleCode: 'W', ruleName: 'Warn', severity: 'Warning', errorCode: 'E_WARN', message: 'careful', expectedValue: { max: 1 } }));
  });

  it('passes only when the expression is exactly true', () => {
    const rules = ['1', '"true"', '[true]', 'a', 'null', 'true && 1'].map((expression, i) => ({ code: `T${i}`, name: 'n', expression }));
    const result = validate(rules, { a: 1 });
    expect(result.failures.map((f) => f.ruleCode)).toEqual(['T0', 'T1', 'T2', 'T3', 'T4', 'T5']);
    expect(validate([{ code: 'OK', name: 'n', expression: 'a == 1 && true' }], { a: 1 }).isValid).toBe(true);
  });

  it('is valid with an empty failures array when nothing fails, a Warning makes it invalid', () => {
    expect(validate([{ code: 'A', name: 'n', expression: 'true' }], {})).toEqual({ isValid: true, totalRulesEvaluated: 1, failures: [] });
    expect(validate([{ code: 'A', name: 'n', severity: 'Info', expression: 'false' }], {}).isValid).toBe(false);
    expect(validate([], {})).toEqual({ isValid: true, totalRulesEvaluated: 0, failures: [] });
  });
});

describe('failure order: priority, then code, then element, then schema error (2.1)', () => {
  it('sorts rules by ascending priority, then code in UTF-16 order', () => {
    const rules: RuleDefinition[] = [
      { code: 'b', name: 'n', expression: 'false' },
      { code: 'a', name: 'n', expression: 'false', priority: 1 },
      { code: 'B', name: 'n', expression: 'false' },
      { code: 'a', name: 'n', expression: 'false', priority: -1 },
      { code: 'a-2', name: 'n', expression: 'false' },
      { code: 'a_2', name: 'n', expression: 'false' },
      { code: 'a.2', name: 'n', expression: 'false' },
    ];
    const codes = validate(rules, {}).failures.map((f) => `${f.ruleCode}`);
    expect(codes).toEqual(['a', 'B', 'a-2', 'a.2', 'a_2', 'b', 'a']);
  });

  it('lists elements in index order and schema errors in ajv order', () => {
    const result = validate([
      { code: 'S', name: 'Item', forEach: 'items', fieldPath: 'items[]', schema: { type: 'object', required: ['a', 'b'] } },
    ], { items: [{}, { a: 1 }] });
    expect(result.failures.map((f) => f.fieldPath)).toEqual(['items[0].a', 'items[0].b', 'items[1].b']);
    expect(result.totalRulesEvaluated).toBe(1);
  });
});

describe('missing fields and required (2.2)', () => {
  const rules: RuleDefinition[] = [
    { code: 'REQ', name: 'Amount required', fieldPath: 'loan.amount', required: true },
    { code: 'MAX', name: 'Amount limit', fieldPath: 'loan.amount', expression: '$value <= 10000' },
  ];
  it.each([
    ['missing', { loan: {} }, ['REQ'], 1],
    ['null', { loan: { amount: null } }, ['REQ'], 1],
    ['parent missing', {}, ['REQ'], 1],
    ['parent not an object', { loan: 'x' }, ['REQ'], 1],
    ['present and too big', { loan: { amount: 20000 } }, ['MAX'], 2],
    ['present and fine', { loan: { amount: 0 } }, [], 2],
    ['present, wrong type', { loan: { amount: '5' } }, ['MAX'], 2],
  ])('amount %s', (_title, payload, failing, evaluated) => {
    const result = validate(rules, payload);
    expect(result.failures.map((f) => f.ruleCode)).toEqual(failing);
    expect(result.totalRulesEvaluated).toBe(evaluated);
  });

  it('reports a missing required field with actualValue null', () => {
    const [f] = validate(rules, {}).failures;
    expect(f).toEqual(failure({ ruleCode: 'REQ', ruleName: 'Amount required', message: 'Amount required failed', fieldPath: 'loan.amount' }));
  });

  it('a required rule with an expression checks it when the value is present', () => {
    const rule = { code: 'R', name: 'n', fieldPath: 'a', required: true, expression: '$value > 0' };
    expect(validate([rule], {}).failures.map((f) => f.ruleCode)).toEqual(['R']);
    expect(validate([rule], { a: -1 }).failures.map((f) => f.ruleCode)).toEqual(['R']);
    expect(validate([rule], { a: 1 }).isValid).toBe(true);
  });

  it('$value is the payload root when there is no fieldPath; actualValue is then null', () => {
    const result = validate([{ code: 'R', name: 'n', expression: '$value.a == 2' }], { a: 1 });
    expect(result.failures[0].actualValue).toBeNull();
    expect(result.failures[0].fieldPath).toBe('');
  });

  it('so is a schema failure at the payload root, whose message still names the value as $value', () => {
    const rule = { code: 'S', name: 's', schema: { type: 'object', maxProperties: 1, properties: { x: { type: 'string' } } }, message: 'got {{ $value }}' };
    const result = validate([rule], { x: 1, y: 2 });
    expect(result.failures.map(({ fieldPath, actualValue, message }) => ({ fieldPath, actualValue, message }))).toEqual([
      { fieldPath: '', actualValue: null, message: 'got {"x":1,"y":2}' },
      { fieldPath: 'x', actualValue: 1, message: 'got 1' },
    ]);
  });

  it('values that are present but falsy are not missing', () => {
    const rule = { code: 'R', name: 'n', fieldPath: 'a', required: true, expression: 'false' };
    for (const a of [0, '', false, [], {}]) {
      expect(validate([rule], { a }).failures[0].actualValue).toEqual(a);
    }
  });
});

describe('when (2, 2.2)', () => {
  it('skips the rule unless when is exactly true, before checking required', () => {
    const rule = { code: 'R', name: 'n', when: 'kind == "loan"', fieldPath: 'amount', required: true, expression: '$value > 0' };
    expect(validate([rule], { kind: 'card' })).toEqual({ isValid: true, totalRulesEvaluated: 0, failures: [] });
    expect(validate([rule], { kind: 'loan' }).failures.map((f) => f.fieldPath)).toEqual(['amount']);
    expect(validate([{ ...rule, when: '1' }], {}).totalRulesEvaluated).toBe(0);
    expect(validate([{ ...rule, when: 'kind' }], { kind: true }).totalRulesEvaluated).toBe(1);
  });

  it('sees $value', () => {
    const rule = { code: 'R', name: 'n', when: '$value > 10', fieldPath: 'a', expression: '$value < 100' };
    expect(validate([rule], { a: 5 }).totalRulesEvaluated).toBe(0);
    expect(validate([rule], { a: 500 }).failures.length).toBe(1);
  });
});

describe('forEach (2.3)', () => {
  const rule: RuleDefinition = {
    code: 'QTY', name: 'Quantity', forEach: 'items', fieldPath: 'items[].qty', expression: '$value > 0',
    message: 'item {{ $index }} has qty {{ $value }}',
  };

  it('yields one failure per failing element with element-resolved paths', () => {
    const result = validate([rule], { items: [{ qty: 1 }, { qty: 0 }, { qty: 2 }, { qty: -1 }] });
    expect(result.failures).toEqual([
      failure({ ruleCode: 'QTY', ruleName: 'Quantity', message: 'item 1 has qty 0', fieldPath: 'items[1].qty', actualValue: 0, expectedValue: 0 }),
      failure({ ruleCode: 'QTY', ruleName: 'Quantity', message: 'item 3 has qty -1', fieldPath: 'items[3].qty', actualValue: -1, expectedValue: 0 }),
    ]);
    expect(result.totalRulesEvaluated).toBe(1);
  });

  it.each([
    ['missing', {}, 0],
    ['not an array', { items: { 0: { qty: 0 } } }, 0],
    ['a string', { items: 'abc' }, 0],
    ['empty', { items: [] }, 1],
  ])('is skipped when the target is %s, counted when it is an array', (_title, payload, evaluated) => {
    const result = validate([rule], payload);
    expect(result.isValid).toBe(true);
    expect(result.totalRulesEvaluated).toBe(evaluated);
  });

  it('skips elements whose field is missing unless required', () => {
    const payload = { items: [{ qty: 1 }, {}, { qty: null }, 5] };
    expect(validate([rule], payload).isValid).toBe(true);
    const required = validate([{ ...rule, required: true, message: undefined }], payload);
    expect(required.failures.map((f) => [f.fieldPath, f.actualValue])).toEqual([
      ['items[1].qty', null], ['items[2].qty', null], ['items[3].qty', null],
    ]);
  });

  it('evaluates when per element with $item and $index', () => {
    const r = { ...rule, when: '$item.active == true && $index > 0', message: undefined };
    const result = validate([r], { items: [{ qty: 0, active: true }, { qty: 0, active: false }, { qty: 0, active: true }] });
    expect(result.failures.map((f) => f.fieldPath)).toEqual(['items[2].qty']);
  });

  it('renders keys that are not identifiers in brackets, and nested forEach paths', () => {
    const r: RuleDefinition = {
      code: 'N', name: 'n', forEach: 'order["line-items"]', fieldPath: 'order["line-items"][]["unit price"]', expression: '$value > 0',
    };
    const result = validate([r], { order: { 'line-items': [{ 'unit price': 0 }] } });
    expect(result.failures[0].fieldPath).toBe('order["line-items"][0]["unit price"]');
    const top: RuleDefinition = { code: 'T', name: 't', forEach: '$["my items"]', fieldPath: '$["my items"][]', expression: '$value > 0' };
    expect(validate([top], { 'my items': [1, 0] }).failures[0].fieldPath).toBe('$["my items"][1]');
  });

  it('without a fieldPath judges each element through $item', () => {
    const r: RuleDefinition = { code: 'E', name: 'e', forEach: 'list', expression: '$item % 2 == 0' };
    const result = validate([r], { list: [2, 3, 4, 5] });
    expect(result.failures.map((f) => [f.fieldPath, f.actualValue])).toEqual([['', null], ['', null]]);
  });

  it('with a fieldPath outside the array uses it for every element', () => {
    const r: RuleDefinition = { code: 'O', name: 'o', forEach: 'list', fieldPath: 'limit', expression: '$item <= $value' };
    const result = validate([r], { list: [1, 5, 9], limit: 4 });
    expect(result.failures.map((f) => [f.fieldPath, f.actualValue])).toEqual([['limit', 4], ['limit', 4]]);
    expect(validate([r], { list: [1, 5, 9] }).failures).toEqual([]);
  });
});

describe('totalRulesEvaluated (2.1)', () => {
  it('counts enabled rules that were not skipped, each once', () => {
    const rules: RuleDefinition[] = [
      { code: 'A', name: 'n', expression: 'true' },
      { code: 'B', name: 'n', expression: 'false', enabled: false },
      { code: 'C', name: 'n', fieldPath: 'missing', expression: 'false' },
      { code: 'D', name: 'n', fieldPath: 'missing', required: true },
      { code: 'E', name: 'n', when: 'false', expression: 'false' },
      { code: 'F', name: 'n', forEach: 'list', expression: 'false' },
      { code: 'G', name: 'n', forEach: 'nope', expression: 'false' },
      { code: 'H', name: 'n', schema: { type: 'object', required: ['x', 'y'] } },
    ];
    const result = validate(rules, { list: [1, 2, 3] });
    expect(result.totalRulesEvaluated).toBe(4);
    expect(result.failures.map((f) => f.ruleCode)).toEqual(['D', 'F', 'F', 'F', 'H', 'H']);
  });

  it('does not count a forEach rule whose field outside the array is missing, unless it is required', () => {
    const rules: RuleDefinition[] = [
      { code: 'SHARED', name: 'n', forEach: 'list', fieldPath: 'total', expression: 'false' },
      { code: 'SHARED_REQUIRED', name: 'n', forEach: 'list', fieldPath: 'total', required: true },
      { code: 'PER_ELEMENT', name: 'n', forEach: 'list', fieldPath: 'list[].qty', expression: 'false' },
    ];
    const missing = validate(rules, { list: [{}, {}] });
    // SHARED is skipped as a rule without forEach would be; SHARED_REQUIRED fails per element;
    // PER_ELEMENT ran on its array, though every element lacks the field.
    expect(missing.totalRulesEvaluated).toBe(2);
    expect(missing.failures.map((f) => f.ruleCode)).toEqual(['SHARED_REQUIRED', 'SHARED_REQUIRED']);
    const present = validate(rules, { list: [{ qty: 1 }], total: 5 });
    expect(present.totalRulesEvaluated).toBe(3);
    expect(present.failures.map((f) => f.ruleCode)).toEqual(['PER_ELEMENT', 'SHARED']);
  });
});

describe('message templates (3.6)', () => {
  it.each([
    ['{{ s }}', { s: 'text' }, 'text'],
    ['{{ n }}|{{ -n }}|{{ 0.1 + 0.2 }}|{{ 1e21 }}|{{ -0 }}', { n: 5 }, '5|-5|0.30000000000000004|1e+21|0'],
    ['{{ t }} {{ !t }}', { t: true }, 'true false'],
    ['{{ list }} {{ obj }}', { list: [1, 'a', null], obj: { a: { b: [] } } }, '[1,"a",null] {"a":{"b":[]}}'],
    ['[{{ missing }}][{{ nothing }}][{{ n / 0 }}][{{ s - 1 }}]', { nothing: null, n: 1, s: 'x' }, '[][][][]'],
    ['{{ items.map(i => i * 2) }}', { items: [1, 2] }, '[2,4]'],
    ['{{ [n / 0] }}', { n: 1 }, '[null]'],
    ['a {{ s }} b {{ s }} c', { s: '{{ s }}' }, 'a {{ s }} b {{ s }} c'],
    ['no placeholders }} {', {}, 'no placeholders }} {'],
    ['{{ "\u2028" }}', {}, '\u2028'],
    ['{{ upper(name) }} is {{ len(name) }} long', { name: 'zoë😀' }, 'ZOË😀 is 4 long'],
    ['', {}, ''],
  ])('%j renders %j', (message, payload, expected) => {
    const result = validate([{ code: 'M', name: 'n', expression: 'false', message }], payload);
    expect(result.failures[0].message).toBe(expected);
  });

  it('is evaluated only for failures', () => {
    const rule = { code: 'M', name: 'n', fieldPath: 'a', expression: '$value > 0', message: '{{ items.every(x => x.b.every(y => y)) }}' };
    expect(validate([rule], { a: 1, items: 'not evaluated' }).isValid).toBe(true);
  });

  it('binds $value and $expected', () => {
    const rule = { code: 'M', name: 'n', fieldPath: 'amount', expression: '$value <= 10000', message: 'Amount {{ $value }} exceeds {{ $expected }}' };
    expect(validate([rule], { amount: 12000 }).failures[0].message).toBe('Amount 12000 exceeds 10000');
  });
});

describe('expected-value inference (3.6)', () => {
  it.each<[string, Partial<RuleDefinition>, unknown]>([
    ['$value <= 10000', { fieldPath: 'amount' }, 10000],
    ['10000 >= $value', { fieldPath: 'amount' }, 10000],
    ['amount < -5', { fieldPath: 'amount' }, -5],
    ['$.amount != "always fails"', { fieldPath: 'amount' }, 'always fails'],
    ['$["amount"] === null', { fieldPath: 'amount' }, null],
    ['loan.amount > 0', { fieldPath: 'loan.amount' }, 0],
    ['list[0] == 1', { fieldPath: 'list[0]' }, 1],
    ['$value == [1, [2]]', { fieldPath: 'amount' }, [1, [2]]],
    ['["EUR", "USD"].includes($value)', { fieldPath: 'amount' }, ['EUR', 'USD']],
    ['["EUR", "USD"].includes(amount)', { fieldPath: 'amount' }, ['EUR', 'USD']],
    ['$item.qty > 0', { forEach: 'items', fieldPath: 'items[].qty' }, 0],
    ['$value > 0', {}, 0],
    ['other > 0', { fieldPath: 'amount' }, null],
    ['amount > limit', { fieldPath: 'amount' }, null],
    ['amount + 1 > 0', { fieldPath: 'amount' }, null],
    ['amount > 0 && amount < 10', { fieldPath: 'amount' }, null],
    ['[limit].includes(amount)', { fieldPath: 'amount' }, null],
    ['$item.qty > 0', { forEach: 'items', fieldPath: 'total' }, null],
    ['amount > 0', {}, null],
  ])('%s with %j infers %j', (expression, rule, expected) => {
    const r = { code: 'I', name: 'n', expression, ...rule } as RuleDefinition;
    // Every subject holds a string that fails every listed expression.
    const payload = { amount: 'always fails', loan: { amount: 'x' }, list: ['x'], items: [{ qty: 'x' }], total: 'x', other: 'x' };
    const [f] = validate([r], payload).failures;
    expect(f.expectedValue).toEqual(expected);
  });

  it('a given expectedValue wins over inference', () => {
    const [f] = validate([{ code: 'I', name: 'n', fieldPath: 'a', expression: '$value < 5', expectedValue: 'under five' }], { a: 9 }).failures;
    expect(f.expectedValue).toBe('under five');
  });
});

describe('schema rules (2.5)', () => {
  const schema = { type: 'object', required: ['age'], properties: { age: { type: 'integer', minimum: 18 }, name: { type: 'string', maxLength: 3 } } };

  it('yields one failure per ajv error with paths under the fieldPath', () => {
    const result = validate([{ code: 'S', name: 'Applicant', fieldPath: 'applicant', schema }], { applicant: { age: 15, name: 'Alexander' } });
    expect(result.failures).toEqual([
      failure({ ruleCode: 'S', ruleName: 'Applicant', message: 'Applicant: must be >= 18', fieldPath: 'applicant.age', actualValue: 15, expectedValue: 18 }),
      failure({ ruleCode: 'S', ruleName: 'Applicant', message: 'Applicant: must NOT have more than 3 characters', fieldPath: 'applicant.name', actualValue: 'Alexander', expectedValue: 3 }),
    ].slice(0, result.failures.length));
    expect(result.failures[0].fieldPath).toBe('applicant.age');
  });

  it('reports a missing required property with its path and actualValue null', () => {
    const [f] = validate([{ code: 'S', name: 'Applicant', fieldPath: 'applicant', schema }], { applicant: {} }).failures;
    expect(f).toMatchObject({ fieldPath: 'applicant.age', actualValue: null, message: "Applicant: must have required property 'age'" });
  });

  it('renders the message template with $value bound to the offending value', () => {
    const [f] = validate([{ code: 'S', name: 'n', fieldPath: 'applicant', schema, message: 'bad {{ $value }} (want {{ $expected }})' }], { applicant: { age: 15 } }).failures;
    expect(f.message).toBe('bad 15 (want 18)');
  });

  it('applies to the payload without a fieldPath, per element with forEach', () => {
    expect(validate([{ code: 'S', name: 'n', schema: { type: 'object', maxProperties: 1 } }], { a: 1, b: 2 }).failures[0].fieldPath).toBe('');
    const each = validate([{ code: 'S', name: 'n', forEach: 'xs', fieldPath: 'xs[]', schema: { type: 'integer' } }], { xs: [1, 'a', 2.5] });
    expect(each.failures.map((f) => [f.fieldPath, f.actualValue, f.expectedValue])).toEqual([['xs[1]', 'a', 'integer'], ['xs[2]', 2.5, 'integer']]);
  });

  it('checks the expression only when the schema passes', () => {
    const rule = { code: 'S', name: 'n', fieldPath: 'a', schema: { type: 'number' }, expression: '$value > 10' };
    expect(validate([rule], { a: 'x' }).failures.map((f) => f.message)).toEqual(['n: must be number']);
    expect(validate([rule], { a: 5 }).failures.map((f) => f.message)).toEqual(['n failed']);
    expect(validate([rule], { a: 50 }).isValid).toBe(true);
  });

  it('inherited names never satisfy required', () => {
    const result = validate([{ code: 'S', name: 'n', schema: { type: 'object', required: ['toString', 'constructor'] } }], {});
    expect(result.failures.map((f) => f.fieldPath)).toEqual(['toString', 'constructor']);
  });
});

describe('validate never throws (short of the failure bound)', () => {
  const rules: RuleDefinition[] = [
    { code: 'A', name: 'n', expression: 'a.b.c > 1 && len(s) > 0 && items.every(i => i.x.y == 1) && sum(items) > 0' },
    { code: 'B', name: 'n', fieldPath: 'a.b', required: true, message: '{{ $ }} {{ a }} {{ items.map(i => i.x) }}' },
    { code: 'C', name: 'n', forEach: 'items', fieldPath: 'items[].x', expression: 'distinct([$value, $item, $])' },
    {
      code: 'D', name: 'n', fieldPath: 'a',
      schema: { $defs: { node: { type: 'object', properties: { b: { $ref: '#/$defs/node' } } } }, $ref: '#/$defs/node' },
    },
    { code: 'E', name: 'n', expression: 'date(s) > 0 || age(s) > 1 || round(n, 2) > 0 || matches(s, "^a")' },
    { code: 'F', name: 'n', expression: 'x == $ && s + s + s + s != ""', message: '{{ $ }}' },
  ];
  let deep: unknown = 1;
  for (let i = 0; i < 50_000; i++) deep = [deep];
  let deepObject: Record<string, unknown> = {};
  const root = deepObject;
  for (let i = 0; i < 50_000; i++) {
    const next = {};
    deepObject.b = next;
    deepObject = next;
  }
  const payloads: unknown[] = [
    null, undefined, 0, -0, 1e308, 'string', true, [], [1, 2], {}, { a: null }, { a: { b: { c: '2' } } },
    { items: [null, 1, 'x', [], {}, { x: { y: 1 } }] }, { items: 'abc' }, { s: '\uD800', n: Number.MAX_VALUE },
    JSON.parse('{"__proto__": {"a": 1}, "constructor": {"prototype": 1}}'),
    { a: root, x: deep, items: [deep, root] },
    { s: 'x'.repeat(1 << 20) },
  ];
  it.each(payloads.map((p, i) => [i, p]))('payload #%i', (_i, payload) => {
    const compiled = compileRuleset(rules);
    expect(compiled.errors).toEqual([]);
    const result = compiled.validate(payload, NOW);
    expect(typeof result.isValid).toBe('boolean');
    expect(Number.isInteger(result.totalRulesEvaluated)).toBe(true);
  });

  it('uses the wall clock when no now is given', () => {
    const compiled = compileRuleset([{ code: 'N', name: 'n', expression: 'now() > 1700000000000' }]);
    expect((compiled.validate as unknown as (p: unknown) => { isValid: boolean })({})).toMatchObject({ isValid: true });
  });
});

describe('rulesets larger than one generated function', () => {
  it('evaluate every rule in order and count them', () => {
    const rules: RuleDefinition[] = Array.from({ length: 300 }, (_, i) => ({
      code: `R${String(i).padStart(3, '0')}`, name: `Rule ${i}`, fieldPath: 'n', expression: `$value != ${i}`,
    }));
    const compiled = compileRuleset(rules);
    expect(compiled.ruleCount).toBe(300);
    for (const n of [0, 127, 128, 299]) {
      const result = compiled.validate({ n }, NOW);
      expect(result.totalRulesEvaluated).toBe(300);
      expect(result.failures.map((f) => f.ruleCode)).toEqual([`R${String(n).padStart(3, '0')}`]);
    }
    expect(compiled.validate({}, NOW).totalRulesEvaluated).toBe(0);
  });

  it('read back as one factory, the very text the standalone module bundles, that runs alike', () => {
    const rules: RuleDefinition[] = Array.from({ length: 300 }, (_, i) => ({
      code: `R${String(i).padStart(3, '0')}`, name: `Rule ${i}`, fieldPath: 'n', expression: `$value != ${i} && now() > 0`,
      message: `{{ $value }} is taken by rule ${i}`,
    }));
    const compiled = compileRuleset(rules);
    const { source, refs } = generateRuleset(planRuleset(rules).plans);
    expect(compiled.source).toBe(source);
    expect(source.match(/return function rules\d+\(/g)).toHaveLength(3);
    const standalone = (new Function(`return ${source};`)() as (rt: unknown, r: unknown) => typeof compiled.validate)(runtime, refs);
    for (const payload of [{ n: 5 }, { n: 200 }, { n: 'x' }, {}]) {
      expect(standalone(payload, NOW)).toEqual(compiled.validate(payload, NOW));
    }
  });

  it('cut rules of long text into smaller parts, and still run every rule in order', () => {
    // Each rule is about 3,600 characters: a part holds at most 64K of rule text.
    const long = Array.from({ length: 200 }, (_, k) => `$value != ${1000 + k}`).join(' && ');
    const rules: RuleDefinition[] = Array.from({ length: 40 }, (_, i) => ({
      code: `L${String(i).padStart(2, '0')}`, name: `Long ${i}`, fieldPath: 'n', expression: `${long} && $value != ${i}`,
    }));
    const compiled = compileRuleset(rules);
    expect(compiled.errors).toEqual([]);
    expect(compiled.source.match(/return function rules\d+\(/g)?.length).toBeGreaterThanOrEqual(3);
    const result = compiled.validate({ n: 17 }, NOW);
    expect(result.totalRulesEvaluated).toBe(40);
    expect(result.failures.map((f) => f.ruleCode)).toEqual(['L17']);
    expect(compiled.validate({ n: 1003 }, NOW).failures).toHaveLength(40);
  });
});

describe('compiling in steps', () => {
  it('yields between rules, so that a caller can let other work run, and builds the same validator', () => {
    const rules: RuleDefinition[] = Array.from({ length: 300 }, (_, i) => ({
      code: `S${String(i).padStart(3, '0')}`, name: `Step ${i}`, fieldPath: 'n', expression: `$value != ${i}`,
    }));
    const steps = compileRulesetSteps(rules);
    let yields = 0;
    let step = steps.next();
    for (; !step.done; step = steps.next()) yields++;
    const compiled = step.value;
    // At least one step per rule planned and one per rule generated.
    expect(yields).toBeGreaterThanOrEqual(600);
    expect(compiled.ruleCount).toBe(300);
    expect(compiled.compileMs).toBeGreaterThan(0);
    expect(compiled.source).toBe(compileRuleset(rules).source);
    expect(compiled.validate({ n: 42 }, NOW).failures.map((f) => f.ruleCode)).toEqual(['S042']);
  });
});

describe('the size of a ruleset as a whole', () => {
  it('is at most MAX_RULESET_TEXT_LENGTH characters of rule text: planning stops at the rule that passes it', () => {
    // 10,000-character names: text that costs nothing to plan, so the bound is what stops it.
    const rules: RuleDefinition[] = Array.from({ length: 450 }, (_, i) => ({
      code: `T${String(i).padStart(3, '0')}`, name: `${'n'.repeat(9_995)}${String(i).padStart(5, '0')}`, expression: 'true',
    }));
    const compiled = compileRuleset(rules);
    const fits = Math.floor(MAX_RULESET_TEXT_LENGTH / 10_004);
    expect(compiled.ruleCount).toBe(fits);
    expect(compiled.errors).toEqual([expect.objectContaining({
      ruleCode: `T${String(fits).padStart(3, '0')}`, field: 'code', code: 'LIMIT_EXCEEDED',
      message: expect.stringContaining(`the limit is ${MAX_RULESET_TEXT_LENGTH}`),
    })]);
    // Disabled rules are not compiled, so they do not count.
    expect(compileRuleset(rules.map((rule, i) => ({ ...rule, enabled: i < fits }))).errors).toEqual([]);
  });
});

describe('the failures of one validation', () => {
  const rules: RuleDefinition[] = [
    { code: 'A', name: 'a', forEach: 'items', fieldPath: 'items[].x', expression: '$item.x == 1' },
    { code: 'B', name: 'b', forEach: 'items', fieldPath: 'items[].x', expression: '$item.x == 1' },
  ];
  const compiled = compileRuleset(rules);
  const items = (count: number) => ({ items: Array.from({ length: count }, () => ({ x: 2 })) });

  it('are reported up to MAX_FAILURES_PER_VALIDATION', () => {
    const result = compiled.validate(items(MAX_FAILURES_PER_VALIDATION / 2), NOW);
    expect(result.failures).toHaveLength(MAX_FAILURES_PER_VALIDATION);
    expect(result.failures.at(-1)).toMatchObject({ ruleCode: 'B', fieldPath: `items[${MAX_FAILURES_PER_VALIDATION / 2 - 1}].x` });
  });

  it('end the validation with TooManyFailuresError at the one past it, in every part of a large ruleset', () => {
    expect(() => compiled.validate(items(MAX_FAILURES_PER_VALIDATION / 2 + 1), NOW)).toThrow(TooManyFailuresError);
    // 200 rules are built as two parts; the bound counts the failures of both.
    const many = compileRuleset(Array.from({ length: 200 }, (_, i) => ({ code: `R${i}`, name: 'r', forEach: 'items', expression: '$item.x == 1' })));
    expect(many.validate(items(MAX_FAILURES_PER_VALIDATION / 200), NOW).failures).toHaveLength(MAX_FAILURES_PER_VALIDATION);
    expect(() => many.validate(items(MAX_FAILURES_PER_VALIDATION / 200 + 1), NOW)).toThrow(TooManyFailuresError);
  });
});

describe('expectedValue', () => {
  it('is at most maxExpectedValueBytes of JSON, and counts as rule text', () => {
    const rule = (expectedValue: unknown): RuleDefinition => ({ code: 'E', name: 'e', fieldPath: 'a', expression: 'a == 1', expectedValue });
    // UTF-8 bytes of the JSON, quotes included: 32,767 two-byte characters are 65,536 bytes, the most allowed.
    expect(compileRuleset([rule('é'.repeat(32_767))]).errors).toEqual([]);
    expect(compileRuleset([rule('é'.repeat(32_768))]).errors).toEqual([expect.objectContaining({
      field: 'expectedValue', code: 'TOO_LONG', message: 'expectedValue is 65538 bytes of JSON; the limit is 65536',
    })]);
    expect(ruleTextLength(rule([1, 2, 3]))).toBe(ruleTextLength(rule(undefined)) + '[1,2,3]'.length);
  });
});
