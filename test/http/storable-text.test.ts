/**
 * Text the database cannot keep (src/http/storable-text.ts), over real HTTP
 * on real storage: the NUL character and lone surrogates are 400 naming the
 * field on every route that stores what it is sent, nothing is stored, and
 * the tag filter of GET /rules keeps working. Before, a rule named
 * "a\u0000b" was accepted and made every tag search of its tenant a 500,
 * and a NUL in an API key's name or a searched tag was a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findUnstorableText } from '../../src/http/storable-text.ts';
import { expectProblem, ok } from '../support/expect-response.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

const NUL = 'must not contain the NUL character (U+0000)';
const SURROGATE = 'must be well-formed Unicode (it holds a lone surrogate)';

const RULE = { context: 'orders', code: 'AMOUNT', name: 'Amount', fieldPath: 'amount', expression: 'amount > 0', tags: ['money'] };

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

async function ruleCount(): Promise<number> {
  const page = await ok(t.request('GET', '/api/v1/rules?status=all&limit=500'));
  return page.items.length;
}

describe('text the database cannot store', () => {
  it.each([
    ['a NUL in the name', { name: 'a\u0000b' }, 'name', NUL],
    ['a NUL in a tag', { tags: ['money', 'x\u0000'] }, 'tags[1]', NUL],
    ['a NUL in the message', { message: 'amount \u0000' }, 'message', NUL],
    ['a NUL in the expression', { expression: 'amount > 0 \u0000' }, 'expression', NUL],
    ['a NUL in a schema key', { expression: undefined, schema: { type: 'number', properties: { 'a\u0000': {} } } }, 'schema.properties["a\\u0000"]', `key ${NUL}`],
    ['a NUL deep in expectedValue', { expectedValue: { limits: [1, { note: '\u0000' }] } }, 'expectedValue.limits[1].note', NUL],
    ['a lone high surrogate in the description', { description: 'broken \ud800 text' }, 'description', SURROGATE],
    ['a lone low surrogate in a tag', { tags: ['\udc00'] }, 'tags[0]', SURROGATE],
  ])('refuses %s with 400 naming it, and stores nothing', async (_name, change, path, message) => {
    const before = await ruleCount();
    const problem = await expectProblem(t.request('POST', '/api/v1/rules', { body: { ...RULE, ...change } }), 400, 'INVALID_BODY');
    expect(problem.errors).toEqual([{ path, message }]);
    expect(await ruleCount()).toBe(before);
  });

  it('refuses it in a PUT and in a rule test, and the stored rule stays as it was', async () => {
    const rule = await ok(t.request('POST', '/api/v1/rules', { body: { ...RULE, code: 'PUT_ME' } }), 201);
    const put = await expectProblem(
      t.request('PUT', `/api/v1/rules/${rule.id}`, { body: { ...rule, name: 'renamed\u0000' } }), 400, 'INVALID_BODY',
    );
    expect(put.errors).toEqual([{ path: 'name', message: NUL }]);
    expect(await ok(t.request('GET', `/api/v1/rules/${rule.id}`))).toEqual(rule);

    const tested = await expectProblem(t.request('POST', '/api/v1/rules/test', {
      body: { rule: { ...RULE, message: '\ud800' }, payload: { amount: 1 } },
    }), 400, 'INVALID_BODY');
    expect(tested.errors).toEqual([{ path: 'rule.message', message: SURROGATE }]);
  });

  it('refuses it in an API key name, and makes no key', async () => {
    const before = (await ok(t.request('GET', '/api/v1/api-keys'))).items.length;
    const problem = await expectProblem(
      t.request('POST', '/api/v1/api-keys', { body: { name: 'ci\u0000', role: 'validator' } }), 400, 'INVALID_BODY',
    );
    expect(problem.errors).toEqual([{ path: 'name', message: NUL }]);
    const surrogate = await expectProblem(
      t.request('POST', '/api/v1/api-keys', { body: { name: 'ops\ud800', role: 'validator' } }), 400, 'INVALID_BODY',
    );
    expect(surrogate.errors).toEqual([{ path: 'name', message: SURROGATE }]);
    expect((await ok(t.request('GET', '/api/v1/api-keys'))).items).toHaveLength(before);
  });

  it('refuses it as a searched tag, and the tag search keeps working for the tenant', async () => {
    const problem = await expectProblem(t.request('GET', '/api/v1/rules?tag=%00'), 400, 'INVALID_BODY');
    expect(problem.errors).toEqual([{ path: 'tag', message: NUL }]);
    await ok(t.request('POST', '/api/v1/rules', { body: { ...RULE, code: 'TAGGED', tags: ['findme'] } }), 201);
    const page = await ok(t.request('GET', '/api/v1/rules?tag=findme'));
    expect(page.items.map((rule: { code: string }) => rule.code)).toEqual(['TAGGED']);
  });

  it('keeps well-formed text outside ASCII as sent, surrogate pairs included', async () => {
    const text = 'Betrag \u00e9 \u4e2d \ud83d\ude00';
    const rule = await ok(t.request('POST', '/api/v1/rules', {
      body: { ...RULE, code: 'UNICODE', name: text, tags: [text.slice(-2)], expectedValue: { note: text } },
    }), 201);
    expect(rule).toMatchObject({ name: text, tags: ['\ud83d\ude00'], expectedValue: { note: text } });
    const page = await ok(t.request('GET', `/api/v1/rules?tag=${encodeURIComponent('\ud83d\ude00')}`));
    expect(page.items.map((found: { code: string }) => found.code)).toEqual(['UNICODE']);
  });

  it('leaves validation and rule-test payloads alone: they are never stored', async () => {
    await ok(t.request('POST', '/api/v1/contexts/orders/publish'));
    const payload = { amount: 5, note: 'a\u0000b \ud800' };
    const result = await ok(t.request('POST', '/api/v1/validation/validate', { body: { context: 'orders', payload } }));
    expect(result.isValid).toBe(true);
    const rule = { ...RULE, code: 'NOTE', fieldPath: 'note', expression: '!matches($value, "\\u0000")', message: 'note holds a NUL' };
    const tested = await ok(t.request('POST', '/api/v1/rules/test', { body: { rule, payload } }));
    expect(tested.failures.map((failure: { ruleCode: string }) => failure.ruleCode)).toEqual(['NOTE']);
    const live = await ok(t.request('POST', '/api/v1/rules/test', { body: { context: 'orders', payload } }));
    expect(live.isValid).toBe(true);
  });
});

describe('findUnstorableText', () => {
  it('names the first such string in document order, keys included', () => {
    expect(findUnstorableText({ a: { b: ['ok', 'x\u0000'] }, c: '\u0000' })).toEqual({ path: 'a.b[1]', message: NUL });
    expect(findUnstorableText({ 'k\u0000': 1, z: '\u0000' })).toEqual({ path: '$["k\\u0000"]', message: `key ${NUL}` });
    expect(findUnstorableText(['\udfff'], 'items')).toEqual({ path: 'items[0]', message: SURROGATE });
    expect(findUnstorableText({ fine: ['\ud83d\ude00', 1, null, true, { deeper: 'text' }] })).toBeUndefined();
  });

  it('walks a value nested deeper than the stack', () => {
    let deep: unknown = '\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(findUnstorableText(deep)?.message).toBe(NUL);
  });
});
