/**
 * The lifecycle of docs/api.md over HTTP: publish one rule, edit a
 * live rule, archive, publish a context, roll back, and the 409 of each
 * transition. Every step is checked through the validation endpoint too, so
 * a change is proven live at once (the validator is compiled and installed
 * before the management call answers).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../support/app.ts';
import { ok, expectProblem, type Json, type Response } from '../support/expect-response.ts';

type TestApp = Awaited<ReturnType<typeof startTestApp>>;

let t: TestApp;
let validatorKey: string;

beforeAll(async () => {
  t = await startTestApp();
  validatorKey = (await api('POST', '/api-keys', { name: 'validator', role: 'validator' })).body.key;
});
afterAll(async () => {
  await t?.close();
});

function api(method: string, path: string, body?: unknown, options: Json = {}): Promise<Response> {
  return t.request(method, `/api/v1${path}`, { body, ...options });
}

function createRule(context: string, code: string, expression: string, extra: Json = {}): Promise<Json> {
  return ok(api('POST', '/rules', { context, code, name: code, fieldPath: 'amount', expression, ...extra }), 201);
}

async function validate(context: string, payload: Json): Promise<Json> {
  return ok(api('POST', '/validation/validate', { context, payload }, { key: validatorKey }));
}

/** Codes of the failures validation reports now. */
async function failingCodes(context: string, payload: Json): Promise<string[]> {
  return (await validate(context, payload)).failures.map((failure: Json) => failure.ruleCode);
}

async function contextSummary(context: string): Promise<Json | undefined> {
  const list = await ok(api('GET', '/contexts'));
  return list.items.find((item: Json) => item.context === context);
}

async function getRule(id: string): Promise<Json> {
  return ok(api('GET', `/rules/${id}`));
}

describe('one rule: publish, edit, publish, archive', () => {
  const context = 'single';
  let rule: Json;

  beforeAll(async () => {
    rule = await createRule(context, 'MAX_AMOUNT', 'amount <= 100');
  });

  it('a context nothing was published in does not validate', async () => {
    await expectProblem(api('POST', '/validation/validate', { context, payload: {} }, { key: validatorKey }), 404, 'CONTEXT_NOT_FOUND');
    expect(await contextSummary(context)).toMatchObject({ rulesetVersion: null, rules: { draft: 1, published: 0, archived: 0 } });
  });

  it('publish makes the draft live at once, without a body or content type', async () => {
    const published = await ok(api('POST', `/rules/${rule.id}/publish`));
    expect(published).toMatchObject({ id: rule.id, status: 'published', version: 1, publishedVersion: 1 });
    expect(published.publishedAt).toEqual(expect.any(String));
    expect(await contextSummary(context)).toMatchObject({ rulesetVersion: 1, rules: { draft: 0, published: 1, archived: 0 } });
    expect(await failingCodes(context, { amount: 500 })).toEqual(['MAX_AMOUNT']);
    expect(await validate(context, { amount: 50 })).toMatchObject({ isValid: true, totalRulesEvaluated: 1, failures: [] });
  });

  it('409 when the latest version is already live', async () => {
    await expectProblem(api('POST', `/rules/${rule.id}/publish`), 409, 'CONFLICT');
  });

  it('an edit is a draft; the published version stays live until it is published', async () => {
    const edited = await ok(api('PUT', `/rules/${rule.id}`, { name: 'MAX_AMOUNT', fieldPath: 'amount', expression: 'amount <= 1000', version: 1 }));
    expect(edited).toMatchObject({ status: 'draft', version: 2, publishedVersion: 1 });
    expect(await failingCodes(context, { amount: 500 })).toEqual(['MAX_AMOUNT']);

    const versions = (await ok(api('GET', `/rules/${rule.id}/versions`))).items;
    expect(versions.map((v: Json) => [v.version, v.publishedAt === null])).toEqual([[2, true], [1, false]]);

    const published = await ok(api('POST', `/rules/${rule.id}/publish`));
    expect(published).toMatchObject({ status: 'published', version: 2, publishedVersion: 2 });
    expect(await contextSummary(context)).toMatchObject({ rulesetVersion: 2 });
    expect(await failingCodes(context, { amount: 500 })).toEqual([]);
    expect(await failingCodes(context, { amount: 5000 })).toEqual(['MAX_AMOUNT']);
  });

  it('archiving a live rule takes it out of evaluation at once and raises the ruleset version', async () => {
    expect((await api('DELETE', `/rules/${rule.id}`)).status).toBe(204);
    expect(await validate(context, { amount: 5000 })).toMatchObject({ isValid: true, totalRulesEvaluated: 0, failures: [] });
    expect(await contextSummary(context)).toMatchObject({ rulesetVersion: 3, rules: { draft: 0, published: 0, archived: 1 } });
    expect(await getRule(rule.id)).toMatchObject({ status: 'archived', version: 2 });
  });

  it('an archived rule cannot be published or edited (409), and archiving again is 204', async () => {
    await expectProblem(api('POST', `/rules/${rule.id}/publish`), 409, 'CONFLICT');
    await expectProblem(api('PUT', `/rules/${rule.id}`, { name: 'x', expression: 'true', version: 2 }), 409, 'CONFLICT');
    expect((await api('DELETE', `/rules/${rule.id}`)).status).toBe(204);
    expect(await contextSummary(context)).toMatchObject({ rulesetVersion: 3 });
  });

  it('archiving a rule that was never live leaves the ruleset version', async () => {
    const draft = await createRule(context, 'NEVER_LIVE', 'amount > 0');
    expect((await api('DELETE', `/rules/${draft.id}`)).status).toBe(204);
    expect(await contextSummary(context)).toMatchObject({ rulesetVersion: 3, rules: { archived: 2 } });
  });
});

describe('context publish', () => {
  const context = 'whole';
  let a: Json;
  let b: Json;

  beforeAll(async () => {
    a = await createRule(context, 'A', 'amount <= 100');
    b = await createRule(context, 'B', 'amount >= 10');
  });

  it('publishes every draft in one step', async () => {
    const result = await ok(api('POST', `/contexts/${context}/publish`));
    expect(result.context).toBe(context);
    expect(result.rulesetVersion).toBe(1);
    expect([...result.published].sort()).toEqual([a.id, b.id].sort());
    expect(await getRule(a.id)).toMatchObject({ status: 'published', publishedVersion: 1 });
    expect(await failingCodes(context, { amount: 500 })).toEqual(['A']);
    expect(await failingCodes(context, { amount: 5 })).toEqual(['B']);
  });

  it('with no drafts: published [] and the version unchanged (a JSON content type without body is fine)', async () => {
    const result = await ok(api('POST', `/contexts/${context}/publish`, undefined, { headers: { 'content-type': 'application/json' } }));
    expect(result).toEqual({ context, rulesetVersion: 1, published: [], changes: { added: [], changed: [], removed: [] } });
  });

  it('publishes only what changed', async () => {
    await ok(api('PUT', `/rules/${a.id}`, { name: 'A', fieldPath: 'amount', expression: 'amount <= 1000', version: 1 }));
    const result = await ok(api('POST', `/contexts/${context}/publish`));
    expect(result).toEqual({ context, rulesetVersion: 2, published: [a.id], changes: { added: [], changed: ['A'], removed: [] } });
    expect(await failingCodes(context, { amount: 500 })).toEqual([]);
  });

  it('404 CONTEXT_NOT_FOUND for a context without rules, or a name that cannot exist', async () => {
    await expectProblem(api('POST', '/contexts/nothing-here/publish'), 404, 'CONTEXT_NOT_FOUND');
    await expectProblem(api('POST', `/contexts/${encodeURIComponent('-bad name')}/publish`), 404, 'CONTEXT_NOT_FOUND');
  });
});

describe('rollback', () => {
  const context = 'rollback';
  let a: Json;
  let b: Json;
  let c: Json;

  beforeAll(async () => {
    a = await createRule(context, 'A', 'amount <= 100');
    b = await createRule(context, 'B', 'amount >= 10');
    await ok(api('POST', `/contexts/${context}/publish`)); // 1: A v1, B v1
    await ok(api('PUT', `/rules/${a.id}`, { name: 'A', fieldPath: 'amount', expression: 'amount <= 1000', version: 1 }));
    await ok(api('POST', `/rules/${a.id}/publish`)); // 2: A v2, B v1
    expect((await api('DELETE', `/rules/${b.id}`)).status).toBe(204); // 3: A v2
    c = await createRule(context, 'C', 'amount != 42');
    await ok(api('POST', `/rules/${c.id}/publish`)); // 4: A v2, C v1
  });

  it('validates on version 4 before the rollback', async () => {
    expect(await contextSummary(context)).toMatchObject({ rulesetVersion: 4 });
    expect(await failingCodes(context, { amount: 500 })).toEqual([]);
    expect(await failingCodes(context, { amount: 42 })).toEqual(['C']);
  });

  it('409 for the current version, 404 for an unknown one, 400 for a bad body', async () => {
    await expectProblem(api('POST', `/contexts/${context}/rollback`, { rulesetVersion: 4 }), 409, 'CONFLICT');
    await expectProblem(api('POST', `/contexts/${context}/rollback`, { rulesetVersion: 99 }), 404, 'NOT_FOUND');
    await expectProblem(api('POST', '/contexts/no-such-context/rollback', { rulesetVersion: 1 }), 404, 'NOT_FOUND');
    for (const body of [{}, { rulesetVersion: '1' }, { rulesetVersion: 0 }, { rulesetVersion: 1.5 }, { rulesetVersion: 1, extra: true }]) {
      const response = await api('POST', `/contexts/${context}/rollback`, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.code).toBe('INVALID_BODY');
    }
    expect(await contextSummary(context)).toMatchObject({ rulesetVersion: 4 });
  });

  it('makes version 1 live again as new versions: revives, archives, and validation sees it at once', async () => {
    const result = await ok(api('POST', `/contexts/${context}/rollback`, { rulesetVersion: 1 }));
    expect(result.context).toBe(context);
    expect(result.rulesetVersion).toBe(5);
    expect([...result.published].sort()).toEqual([a.id, b.id].sort());

    expect(await getRule(a.id)).toMatchObject({ status: 'published', version: 3, publishedVersion: 3, expression: 'amount <= 100' });
    expect(await getRule(b.id)).toMatchObject({ status: 'published', expression: 'amount >= 10' });
    expect(await getRule(c.id)).toMatchObject({ status: 'archived' });
    expect((await ok(api('GET', `/rules/${a.id}/versions`))).items[0]).toMatchObject({ version: 3, expression: 'amount <= 100' });

    expect(await failingCodes(context, { amount: 500 })).toEqual(['A']);
    expect(await failingCodes(context, { amount: 5 })).toEqual(['B']);
    expect(await failingCodes(context, { amount: 42 })).toEqual([]);
    expect(await contextSummary(context)).toMatchObject({ rulesetVersion: 5, rules: { draft: 0, published: 2, archived: 1 } });
  });

  it('a later publish does not quietly re-apply what was rolled back', async () => {
    const result = await ok(api('POST', `/contexts/${context}/publish`));
    expect(result).toEqual({ context, rulesetVersion: 5, published: [], changes: { added: [], changed: [], removed: [] } });
    expect(await failingCodes(context, { amount: 500 })).toEqual(['A']);
  });

  it('rolls forward too: back to version 4', async () => {
    const result = await ok(api('POST', `/contexts/${context}/rollback`, { rulesetVersion: 4 }));
    expect(result.rulesetVersion).toBe(6);
    expect(await failingCodes(context, { amount: 500 })).toEqual([]);
    expect(await failingCodes(context, { amount: 42 })).toEqual(['C']);
    expect(await getRule(b.id)).toMatchObject({ status: 'archived' });
  });

  it('409 when a revived code clashes with another rule, and nothing changes', async () => {
    const clashContext = 'rollback-clash';
    const original = await createRule(clashContext, 'SAME', 'amount > 0');
    await ok(api('POST', `/rules/${original.id}/publish`)); // 1
    expect((await api('DELETE', `/rules/${original.id}`)).status).toBe(204); // 2
    const replacement = await createRule(clashContext, 'SAME', 'amount > 1');
    await expectProblem(api('POST', `/contexts/${clashContext}/rollback`, { rulesetVersion: 1 }), 409, 'CONFLICT');
    expect(await getRule(original.id)).toMatchObject({ status: 'archived' });
    expect(await getRule(replacement.id)).toMatchObject({ status: 'draft' });
    expect(await contextSummary(clashContext)).toMatchObject({ rulesetVersion: 2 });
    expect(await validate(clashContext, { amount: -1 })).toMatchObject({ totalRulesEvaluated: 0 });
  });
});
