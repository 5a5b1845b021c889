/**
 * `explain: true` on POST /rules/test and POST /contexts/{context}/tests/run
 * (docs/api.md): the answer is the one without it plus `trace`, what became
 * of each rule of the ruleset (disabled ones included), in the order
 * failures are reported. Without `explain` the answers have no `trace`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { expectProblem, ok } from '../support/expect-response.ts';

const TEST = '/api/v1/rules/test';
const TESTS = '/api/v1/contexts/loans/tests';

const RULES = [
  { code: 'LIMIT', name: 'Limit', fieldPath: 'amount', required: true, expression: '$value <= 100', priority: 1 },
  { code: 'CURRENCY', name: 'Currency', fieldPath: 'currency', expression: '["EUR", "USD"].includes($value)' },
  { code: 'CO_SIGNER', name: 'Co-signer', fieldPath: 'coSigner', required: true, when: 'amount > 1000', priority: 2 },
  { code: 'ITEMS', name: 'Item quantities', forEach: 'items', fieldPath: 'items[].qty', expression: '$value > 0', priority: 3 },
  { code: 'OLD', name: 'Retired rule', fieldPath: 'amount', expression: 'false', enabled: false, priority: 1 },
];

describe('explain', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
    for (const rule of RULES) await ok(t.request('POST', '/api/v1/rules', { body: { context: 'loans', ...rule } }), 201);
    await ok(t.request('POST', '/api/v1/contexts/loans/publish'));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('traces a rule test of one rule', async () => {
    const rule = { code: 'MAX', name: 'Max', fieldPath: 'amount', expression: 'amount <= 50' };
    const plain = await ok(t.request('POST', TEST, { body: { rule, payload: { amount: 60 } } }));
    expect(Object.keys(plain)).not.toContain('trace');
    const explained = await ok(t.request('POST', TEST, { body: { rule, payload: { amount: 60 }, explain: true } }));
    expect(explained).toMatchObject({ isValid: false, totalRulesEvaluated: 1, failures: plain.failures });
    expect(explained.trace).toEqual([{ ruleCode: 'MAX', outcome: 'failed', fieldPath: 'amount', value: 60, expected: 50 }]);
    const passing = await ok(t.request('POST', TEST, { body: { rule, payload: {}, explain: true } }));
    expect(passing.trace).toEqual([{ ruleCode: 'MAX', outcome: 'skipped', reason: 'field-missing', fieldPath: 'amount', expected: 50 }]);
  });

  it('traces a context, disabled rules included, in the order failures are reported', async () => {
    const payload = { amount: 500, items: [{ qty: 1 }, { qty: 0 }, { qty: -2 }] };
    const plain = await ok(t.request('POST', TEST, { body: { context: 'loans', payload } }));
    expect(Object.keys(plain)).not.toContain('trace');
    const explained = await ok(t.request('POST', TEST, { body: { context: 'loans', payload, explain: true } }));
    expect(explained.isValid).toBe(plain.isValid);
    expect(explained.totalRulesEvaluated).toBe(plain.totalRulesEvaluated);
    expect(explained.failures).toEqual(plain.failures);
    expect(explained.trace).toEqual([
      { ruleCode: 'CURRENCY', outcome: 'skipped', reason: 'field-missing', fieldPath: 'currency', expected: ['EUR', 'USD'] },
      { ruleCode: 'LIMIT', outcome: 'failed', fieldPath: 'amount', value: 500, expected: 100 },
      { ruleCode: 'OLD', outcome: 'skipped', reason: 'disabled', fieldPath: 'amount' },
      { ruleCode: 'CO_SIGNER', outcome: 'skipped', reason: 'when-false', fieldPath: 'coSigner' },
      { ruleCode: 'ITEMS', outcome: 'failed', fieldPath: 'items[].qty', expected: 0, elements: [1, 2] },
    ]);
  });

  it('traces each test of a test run on its result', async () => {
    const small = { name: 'small', payload: { amount: 50, currency: 'EUR' }, expect: { isValid: true } };
    const big = { name: 'big', payload: { amount: 5000, coSigner: 'Ann' }, expect: { isValid: false, failures: ['LIMIT'] } };
    await ok(t.request('PUT', TESTS, { body: { tests: [small, big] } }));
    const plain = await ok(t.request('POST', `${TESTS}/run`, { body: { target: 'live' } }));
    for (const result of plain.results) expect(Object.keys(result)).not.toContain('trace');
    const explained = await ok(t.request('POST', `${TESTS}/run`, { body: { target: 'live', explain: true } }));
    expect(explained).toMatchObject({ target: 'live', passed: 2, failed: 0 });
    expect(explained.results.map((r: { trace: unknown }) => ({ ...r, trace: undefined }))).toEqual(
      plain.results.map((r: object) => ({ ...r, trace: undefined })),
    );
    expect(explained.results[0].trace).toEqual([
      { ruleCode: 'CURRENCY', outcome: 'passed', fieldPath: 'currency', value: 'EUR', expected: ['EUR', 'USD'] },
      { ruleCode: 'LIMIT', outcome: 'passed', fieldPath: 'amount', value: 50, expected: 100 },
      { ruleCode: 'OLD', outcome: 'skipped', reason: 'disabled', fieldPath: 'amount' },
      { ruleCode: 'CO_SIGNER', outcome: 'skipped', reason: 'when-false', fieldPath: 'coSigner' },
      { ruleCode: 'ITEMS', outcome: 'skipped', reason: 'field-missing', fieldPath: 'items[].qty', expected: 0 },
    ]);
    expect(explained.results[1].trace).toEqual([
      { ruleCode: 'CURRENCY', outcome: 'skipped', reason: 'field-missing', fieldPath: 'currency', expected: ['EUR', 'USD'] },
      { ruleCode: 'LIMIT', outcome: 'failed', fieldPath: 'amount', value: 5000, expected: 100 },
      { ruleCode: 'OLD', outcome: 'skipped', reason: 'disabled', fieldPath: 'amount' },
      { ruleCode: 'CO_SIGNER', outcome: 'passed', fieldPath: 'coSigner', value: 'Ann' },
      { ruleCode: 'ITEMS', outcome: 'skipped', reason: 'field-missing', fieldPath: 'items[].qty', expected: 0 },
    ]);
  });
});

describe('explain under the answer-size bound', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ env: { MAX_ANSWER_BYTES: '65536' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('counts the values the trace carries, as those of failures are counted', async () => {
    const rule = { code: 'TEXT', name: 'Text', fieldPath: 'text', expression: 'isString($value)' };
    const payload = { text: 'x'.repeat(70_000) };
    expect(await ok(t.request('POST', TEST, { body: { rule, payload } }))).toMatchObject({ isValid: true });
    const problem = await expectProblem(t.request('POST', TEST, { body: { rule, payload, explain: true } }), 400, 'INVALID_BODY');
    expect(problem.errors[0].path).toBe('payload');
  });
});
