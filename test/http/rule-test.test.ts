/**
 * POST /rules/test over HTTP (docs/api.md): one rule checked as a
 * save would check it and evaluated, or a context's draft or live ruleset
 * evaluated; nothing is ever stored or made live.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TUNING } from '../../src/tuning.ts';
import { startTestApp } from '../support/app.ts';
import { ok, expectProblem, type Json, type Response } from '../support/expect-response.ts';

type TestApp = Awaited<ReturnType<typeof startTestApp>>;

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

function api(method: string, path: string, body?: unknown): Promise<Response> {
  return t.request(method, `/api/v1${path}`, { body });
}

const limitRule = {
  code: 'MAX_AMOUNT',
  name: 'Amount limit',
  fieldPath: 'amount',
  expression: 'amount <= 10000',
  message: 'Amount {{ $value }} exceeds {{ $expected }}',
};

describe('{ rule, payload }', () => {
  it('evaluates a failing payload into a full single-validation result', async () => {
    const result = await ok(api('POST', '/rules/test', { rule: limitRule, payload: { amount: 20000 } }));
    expect(Object.keys(result)).toEqual(['isValid', 'totalRulesEvaluated', 'failures', 'warnings', 'executionTimeMs']);
    expect(result.warnings).toEqual([]);
    expect(result).toMatchObject({ isValid: false, totalRulesEvaluated: 1 });
    expect(Number.isInteger(result.executionTimeMs)).toBe(true);
    expect(result.failures).toEqual([{
      ruleCode: 'MAX_AMOUNT',
      ruleName: 'Amount limit',
      severity: 'Error',
      message: 'Amount 20000 exceeds 10000',
      errorCode: 'MAX_AMOUNT',
      fieldPath: 'amount',
      actualValue: 20000,
      expectedValue: 10000,
    }]);
    expect(Object.keys(result.failures[0])).toEqual([
      'ruleCode', 'ruleName', 'severity', 'message', 'errorCode', 'fieldPath', 'actualValue', 'expectedValue',
    ]);
  });

  it('passes a valid payload', async () => {
    const result = await ok(api('POST', '/rules/test', { rule: limitRule, payload: { amount: 5 } }));
    expect(result).toMatchObject({ isValid: true, totalRulesEvaluated: 1, failures: [] });
  });

  it('accepts a rule as GET returned it, context included, and does not check code uniqueness', async () => {
    const saved = await ok(api('POST', '/rules', { context: 'loans', ...limitRule }), 201);
    const result = await ok(api('POST', '/rules/test', { rule: { ...saved, expression: 'amount <= 100' }, payload: { amount: 500 } }));
    expect(result.failures.map((f: Json) => f.ruleCode)).toEqual(['MAX_AMOUNT']);
  });

  it('400 with the rule field, line and column, as a save would', async () => {
    const body = await expectProblem(
      api('POST', '/rules/test', { rule: { ...limitRule, expression: 'amount <= new Limit()' }, payload: {} }),
      400,
      'INVALID_BODY',
    );
    expect(body.errors).toEqual([{ path: 'rule.expression', message: expect.stringMatching(/^line 1, column 11: .*new/) }]);
  });

  it.each([
    ['a rule without code', { rule: { name: 'x', expression: 'true' }, payload: {} }],
    ['an unknown rule field', { rule: { ...limitRule, colour: 'red' }, payload: {} }],
    ['a rule with nothing to check', { rule: { code: 'X', name: 'x' }, payload: {} }],
    ['rule and context together', { rule: limitRule, context: 'loans', payload: {} }],
    ['neither rule nor context', { payload: {} }],
    ['no payload', { rule: limitRule }],
    ['a payload that is not an object', { rule: limitRule, payload: [1, 2] }],
    ['an unknown top-level field', { rule: limitRule, payload: {}, extra: 1 }],
  ])('400 for %s', async (_name, body) => {
    await expectProblem(api('POST', '/rules/test', body), 400, 'INVALID_BODY');
  });

  it('guards the payload as validation does: depth and finite numbers', async () => {
    const deep = JSON.parse('{"a":'.repeat(65) + '1' + '}'.repeat(65));
    const tooDeep = await expectProblem(api('POST', '/rules/test', { rule: limitRule, payload: deep }), 400, 'INVALID_BODY');
    expect(tooDeep.errors[0].path).toMatch(/^payload(\.a)+$/);
    const infinite = await t.request('POST', '/api/v1/rules/test', {
      rawBody: `{"rule":${JSON.stringify(limitRule)},"payload":{"amount":1e400}}`,
    });
    expect(infinite.status).toBe(400);
    expect(infinite.body.errors).toEqual([{ path: 'payload.amount', message: expect.any(String) }]);
  });

  it('stops a slow evaluation at the deadline, as validation does', async () => {
    const slowRule = { code: 'SLOW', name: 'slow', fieldPath: 'a', expression: 'a.every(x => a.every(y => y >= 0))' };
    const numbers = `[${'0,'.repeat(449_999)}0]`;
    const response = await t.request('POST', '/api/v1/rules/test', {
      rawBody: `{"rule":${JSON.stringify(slowRule)},"payload":{"a":${numbers}}}`,
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'INVALID_BODY' });
    expect(response.body.errors).toEqual([{ path: 'payload', message: `took longer than ${TUNING.evaluationDeadlineMs.value} ms to evaluate; send a smaller payload` }]);
  });

  it('stores nothing and makes nothing live', async () => {
    await ok(api('POST', '/rules/test', { rule: { ...limitRule, context: 'test-only', code: 'T' }, payload: {} }));
    const list = await ok(api('GET', '/rules?context=test-only&status=all'));
    expect(list.items).toEqual([]);
    expect((await ok(api('GET', '/contexts'))).items.map((c: Json) => c.context)).not.toContain('test-only');
  });
});

describe('{ context, payload, draft }', () => {
  const context = 'tested';

  beforeAll(async () => {
    const rule = await ok(api('POST', '/rules', { context, ...limitRule }), 201);
    await ok(api('POST', `/rules/${rule.id}/publish`));
    // Live: amount <= 10000. Draft: amount <= 100, plus a new draft rule.
    await ok(api('PUT', `/rules/${rule.id}`, { ...limitRule, expression: 'amount <= 100', version: 1 }));
    await ok(api('POST', '/rules', { context, code: 'HAS_EMAIL', name: 'Email given', fieldPath: 'email', required: true }), 201);
  });

  it('draft: true evaluates the ruleset as a context publish would make it', async () => {
    const result = await ok(api('POST', '/rules/test', { context, draft: true, payload: { amount: 500 } }));
    expect(result.totalRulesEvaluated).toBe(2);
    expect(result.failures.map((f: Json) => f.ruleCode)).toEqual(['HAS_EMAIL', 'MAX_AMOUNT']);
  });

  it('draft: false (and no draft) evaluates the live ruleset', async () => {
    for (const body of [{ context, draft: false, payload: { amount: 500 } }, { context, payload: { amount: 500 } }]) {
      const result = await ok(api('POST', '/rules/test', body));
      expect(result).toMatchObject({ isValid: true, totalRulesEvaluated: 1, failures: [] });
    }
  });

  it('nothing was published by testing', async () => {
    const summary = (await ok(api('GET', '/contexts'))).items.find((c: Json) => c.context === context);
    expect(summary).toMatchObject({ rulesetVersion: 1, rules: { draft: 2, published: 0 } });
  });

  it('404 CONTEXT_NOT_FOUND for a context without rules or without a live version', async () => {
    await expectProblem(api('POST', '/rules/test', { context: 'nowhere', draft: true, payload: {} }), 404, 'CONTEXT_NOT_FOUND');
    await expectProblem(api('POST', '/rules/test', { context: 'nowhere', payload: {} }), 404, 'CONTEXT_NOT_FOUND');
    await ok(api('POST', '/rules', { context: 'drafts', ...limitRule }), 201);
    await expectProblem(api('POST', '/rules/test', { context: 'drafts', draft: false, payload: {} }), 404, 'CONTEXT_NOT_FOUND');
    const draft = await ok(api('POST', '/rules/test', { context: 'drafts', draft: true, payload: { amount: 1e6 } }));
    expect(draft.isValid).toBe(false);
  });
});
