/**
 * What the language's records (compiler/language/) give authors, over HTTP:
 * a function added as one record and one helper (`between`) works in a
 * published rule, and an unknown function or method is answered with the
 * name the author probably meant (docs/rule-language.md, "Functions and
 * methods" in section 14).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

function api(method: string, path: string, body?: unknown) {
  return t.request(method, `/api/v1${path}`, { body });
}

let serial = 0;
function rule(expression: string, context = 'did-you-mean'): Record<string, unknown> {
  serial += 1;
  return { context, code: `RULE_${serial}`, name: 'A rule', expression };
}

describe('"did you mean" for an unknown function or method', () => {
  it.each([
    ['date(expiry) > today()', 16, 'unknown function `today`; did you mean `now()`?'],
    ["note.contains('urgent')", 6, 'unknown method `.contains()`; did you mean `.includes()`?'],
    ["iban.startWith('DE')", 6, 'unknown method `.startWith()`; did you mean `.startsWith()`?'],
    ['size(items) > 0', 1, 'unknown function `size`; did you mean `len()`?'],
    ["contains(name, 'Ltd')", 1, 'unknown function `contains`; did you mean the method `.includes()`?'],
    ['name.isEmpty()', 6, 'unknown method `.isEmpty()`; did you mean the function `isEmpty()`?'],
  ])('POST /rules/check on %s says where and what was meant', async (expression, column, message) => {
    const response = await api('POST', '/rules/check', { rule: rule(expression) });
    expect(response.status, response.text).toBe(200);
    expect(response.body.ok).toBe(false);
    expect(response.body.errors).toEqual([{ path: 'expression', message, line: 1, column }]);
  });

  it('a save is refused with the same suggestion, as problem+json', async () => {
    const response = await api('POST', '/rules', rule('date(expiry) > today()'));
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(response.body.errors).toEqual([{ path: 'expression', message: 'line 1, column 16: unknown function `today`; did you mean `now()`?' }]);
  });

  it('a name near nothing the language has gets no guess', async () => {
    const response = await api('POST', '/rules/check', { rule: rule('require("fs")') });
    expect(response.body.errors).toEqual([{ path: 'expression', message: 'unknown function `require`', line: 1, column: 1 }]);
  });
});

describe('between(x, low, high), a function defined by one record and one helper', () => {
  it('holds for values in the range, ends included, and for ISO dates; fails outside it and for mixed types', async () => {
    const context = 'between';
    const created = await api('POST', '/rules', {
      ...rule('between(termMonths, 6, 360) && between(startDate, "2024-01-01", "2024-12-31")', context),
      code: 'TERM', message: 'term or start date out of range',
    });
    expect(created.status, created.text).toBe(201);
    expect((await api('POST', `/contexts/${context}/publish`)).status).toBe(200);
    const failing = async (payload: unknown): Promise<string[]> => {
      const answer = await api('POST', '/validation/validate', { context, payload });
      expect(answer.status, answer.text).toBe(200);
      return (answer.body.failures as { ruleCode: string }[]).map((failure) => failure.ruleCode);
    };
    expect(await failing({ termMonths: 6, startDate: '2024-01-01' })).toEqual([]);
    expect(await failing({ termMonths: 360, startDate: '2024-12-31' })).toEqual([]);
    expect(await failing({ termMonths: 361, startDate: '2024-06-01' })).toEqual(['TERM']);
    expect(await failing({ termMonths: 12, startDate: '2025-01-01' })).toEqual(['TERM']);
    expect(await failing({ termMonths: '12', startDate: '2024-06-01' })).toEqual(['TERM']);
    expect(await failing({ startDate: '2024-06-01' })).toEqual(['TERM']);
  });
});
