/**
 * Editing rules without traps (docs/api.md), over HTTP on the real service
 * and database: PATCH with a JSON merge patch, POST of a rule read with GET
 * (server-managed fields ignored), and restoring an archived rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestRequestOptions } from '../support/app.ts';
import { expectProblem, ok, type Json } from '../support/expect-response.ts';

const MERGE_PATCH = 'application/merge-patch+json';

let t: TestApp;
let validatorKey: string;

beforeAll(async () => {
  t = await startTestApp({ env: { MAX_RULES_PER_CONTEXT: '3' } });
  validatorKey = (await ok(api('POST', '/api-keys', { body: { name: 'validation only', role: 'validator' } }), 201)).key;
});
afterAll(async () => {
  await t?.close();
});

function api(method: string, path: string, options: TestRequestOptions = {}) {
  return t.request(method, `/api/v1${path}`, options);
}

/** PATCH with a merge patch body, sent as the merge-patch media type unless told otherwise. */
function patch(id: string, body: unknown, options: TestRequestOptions = {}) {
  return api('PATCH', `/rules/${id}`, { body, contentType: MERGE_PATCH, ...options });
}

let serial = 0;
/** A rule with most optional fields set, in its own context unless told otherwise. */
function ruleBody(overrides: Json = {}): Json {
  serial += 1;
  return {
    context: `editing-${serial}`,
    code: `RULE_${serial}`,
    name: 'Amount limit',
    description: 'Keeps loans small',
    severity: 'Warning',
    errorCode: 'AMOUNT_TOO_HIGH',
    fieldPath: 'amount',
    expression: 'amount <= 10000',
    message: 'Amount {{ $value }} is too high',
    priority: 50,
    tags: ['loans', 'limits'],
    ...overrides,
  };
}

async function createRule(overrides: Json = {}): Promise<Json> {
  return ok(api('POST', '/rules', { body: ruleBody(overrides) }), 201);
}

const NOT_CONTENT = ['id', 'context', 'code', 'status', 'version', 'publishedVersion', 'createdAt', 'updatedAt', 'publishedAt', 'warnings'];

/** The content fields of a rule answer: what a POST takes, less context and code. */
function contentOf(rule: Json): Json {
  return Object.fromEntries(Object.entries(rule).filter(([key]) => !NOT_CONTENT.includes(key)));
}

function validate(context: string, payload: unknown) {
  return ok(api('POST', '/validation/validate', { body: { context, payload }, key: validatorKey }));
}

describe('PATCH /rules/{id} with a JSON merge patch', () => {
  it('changes the fields sent and keeps the others: a new draft version', async () => {
    const rule = await createRule();
    const patched = await ok(patch(rule.id, { expression: 'amount <= 20000', version: 1 }));
    expect(patched).toMatchObject({ id: rule.id, version: 2, status: 'draft', expression: 'amount <= 20000' });
    expect(contentOf(patched)).toEqual({ ...contentOf(rule), expression: 'amount <= 20000' });
    expect(patched.priority).toBe(50);
    expect(await ok(api('GET', `/rules/${rule.id}`))).toEqual(patched);
  });

  it('removes an optional field sent as null: it returns to its default', async () => {
    const rule = await createRule();
    const patched = await ok(patch(rule.id, { description: null, message: null, priority: null, tags: null, severity: null, version: 1 }));
    expect(patched).not.toHaveProperty('description');
    expect(patched).not.toHaveProperty('message');
    expect(patched).toMatchObject({ priority: 0, tags: [], severity: 'Error', errorCode: 'AMOUNT_TOO_HIGH', version: 2 });
    // The default message follows the name again.
    await ok(api('POST', `/rules/${rule.id}/publish`));
    const answer = await validate(rule.context, { amount: 50000 });
    expect(answer.failures).toEqual([expect.objectContaining({ message: 'Amount limit failed', severity: 'Error' })]);
  });

  it('merges a nested object (a JSON Schema) key by key, and replaces arrays', async () => {
    const schema = { type: 'object', properties: { qty: { type: 'integer', maximum: 5 } }, required: ['qty'] };
    const rule = await createRule({ fieldPath: 'item', expression: undefined, schema, tags: ['a', 'b'] });
    const patched = await ok(patch(rule.id, {
      schema: { properties: { qty: { maximum: 10 }, sku: { type: 'string' } }, required: null },
      tags: ['c'],
      version: 1,
    }));
    expect(patched.schema).toEqual({ type: 'object', properties: { qty: { type: 'integer', maximum: 10 }, sku: { type: 'string' } } });
    expect(patched.tags).toEqual(['c']);
  });

  it('answers as PUT does: a patch that changes nothing keeps the version, a GET body sent back as a patch too', async () => {
    const rule = await createRule();
    expect(await ok(patch(rule.id, { version: 1 }))).toEqual(rule);
    expect(await ok(patch(rule.id, { priority: 50, version: 1 }))).toEqual(rule);
    // Server-managed fields, context and code may be sent as they were read.
    expect(await ok(patch(rule.id, rule))).toEqual(rule);
  });

  it('409 for a stale version, and nothing changes', async () => {
    const rule = await createRule();
    await ok(patch(rule.id, { priority: 1, version: 1 }));
    const refused = await expectProblem(patch(rule.id, { priority: 2, version: 1 }), 409, 'CONFLICT');
    expect(refused.detail).toContain('version 2');
    expect((await ok(api('GET', `/rules/${rule.id}`))).priority).toBe(1);
  });

  it('of six parallel edits (PUT or PATCH) based on version 1, one is saved and the five others are 409 naming the current version', async () => {
    const edits = {
      PUT: (rule: Json, priority: number) => api('PUT', `/rules/${rule.id}`, { body: { ...rule, priority, version: 1 } }),
      PATCH: (rule: Json, priority: number) => patch(rule.id, { priority, version: 1 }),
    };
    for (const [method, edit] of Object.entries(edits)) {
      const rule = await createRule();
      const answers = await Promise.all([1, 2, 3, 4, 5, 6].map((priority) => edit(rule, priority)));
      expect(answers.map((answer) => answer.status).sort(), method).toEqual([200, 409, 409, 409, 409, 409]);
      const saved = answers.find((answer) => answer.status === 200)!.body;
      expect(saved.version, method).toBe(2);
      for (const lost of answers.filter((answer) => answer.status === 409)) {
        expect(lost.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(lost.body, method).toMatchObject({ code: 'CONFLICT', currentVersion: 2, detail: 'the rule is at version 2, not 1' });
      }
      expect(await ok(api('GET', `/rules/${rule.id}`)), method).toEqual(saved);
    }
  });

  it('400 naming version when it is missing or null', async () => {
    const rule = await createRule();
    for (const body of [{ priority: 1 }, { priority: 1, version: null }]) {
      const refused = await expectProblem(patch(rule.id, body), 400, 'INVALID_BODY');
      expect(refused.errors).toEqual([expect.objectContaining({ path: 'version' })]);
    }
  });

  it('400 naming a required field set to null', async () => {
    const rule = await createRule();
    const refused = await expectProblem(patch(rule.id, { name: null, version: 1 }), 400, 'INVALID_BODY');
    expect(refused.errors).toEqual([{ path: 'name', message: expect.stringMatching(/required/) }]);
    const both = await expectProblem(patch(rule.id, { context: null, code: null, version: 1 }), 400, 'INVALID_BODY');
    expect(both.errors.map((error: Json) => error.path)).toEqual(['context', 'code']);
  });

  it('400 for a patch that leaves the rule without a check, or that does not compile, or that changes the code', async () => {
    const rule = await createRule();
    const empty = await expectProblem(patch(rule.id, { expression: null, version: 1 }), 400, 'INVALID_BODY');
    expect(empty.errors).toEqual([expect.objectContaining({ path: 'expression' })]);
    const broken = await expectProblem(patch(rule.id, { expression: 'amount > 1 &&\n  this.x', version: 1 }), 400, 'INVALID_BODY');
    expect(broken.errors).toEqual([expect.objectContaining({ path: 'expression', message: expect.stringMatching(/^line 2, column 3/) })]);
    const renamed = await expectProblem(patch(rule.id, { code: 'OTHER', version: 1 }), 400, 'INVALID_BODY');
    expect(renamed.errors).toEqual([expect.objectContaining({ path: 'code' })]);
    const unstorable = await expectProblem(patch(rule.id, { description: 'a\u0000b', version: 1 }), 400, 'INVALID_BODY');
    expect(unstorable.errors).toEqual([expect.objectContaining({ path: 'description' })]);
    const typed = await expectProblem(patch(rule.id, { priority: 'high', colour: 'red', version: 1 }), 400, 'INVALID_BODY');
    expect(typed.errors.map((error: Json) => error.path).sort()).toEqual(['colour', 'priority']);
    expect((await ok(api('GET', `/rules/${rule.id}`))).version).toBe(1);
  });

  it('400 naming the nesting limit and where it is passed for expectedValue or schema nested 5,000 levels, as PUT refuses them', async () => {
    const rule = await createRule();
    const deep = (key: string): string => `${`{"${key}":`.repeat(5000)}1${'}'.repeat(5000)}`;
    for (const [field, key] of [['expectedValue', 'a'], ['schema', 'not']]) {
      const rawBody = `{"version":1,"${field}":${deep(key)}}`;
      const refused = await expectProblem(patch(rule.id, undefined, { rawBody }), 400, 'INVALID_BODY');
      expect(refused.errors, field).toEqual([{ path: `${field}${`.${key}`.repeat(32)}`, message: 'is nested deeper than 32 levels' }]);
      const put = await expectProblem(api('PUT', `/rules/${rule.id}`, { rawBody: `{"name":"Amount limit","expression":"amount <= 10000","version":1,"${field}":${deep(key)}}` }), 400, 'INVALID_BODY');
      // A schema's place is inside it, as for any schema error; expectedValue's is the field.
      expect(put.errors[0].path, field).toBe(field === 'schema' ? refused.errors[0].path : field);
      expect(put.errors[0].message, field).toMatch(/nested deeper than 32 levels/);
    }
    expect(await ok(api('GET', `/rules/${rule.id}`))).toEqual(rule);
  });

  it('409 for an archived rule', async () => {
    const rule = await createRule();
    await ok(api('DELETE', `/rules/${rule.id}`), 204);
    await expectProblem(patch(rule.id, { priority: 1, version: 1 }), 409, 'CONFLICT');
  });

  it('415 for any other content type, application/json included; the merge-patch type with a charset is fine', async () => {
    const rule = await createRule();
    const body = { priority: 7, version: 1 };
    for (const contentType of ['application/json', 'text/plain', 'application/merge-patch', 'application/merge-patch+json whatever']) {
      const refused = await expectProblem(patch(rule.id, body, { contentType }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(refused.detail, contentType).toContain(MERGE_PATCH);
    }
    await expectProblem(patch(rule.id, body, { contentType: null }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    await expectProblem(patch(rule.id, body, { headers: { 'content-encoding': 'gzip' } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect((await ok(patch(rule.id, body, { contentType: 'Application/Merge-Patch+JSON; charset=utf-8' }))).priority).toBe(7);
  });

  it('merge patches are accepted by PATCH only: POST and PUT still take application/json alone', async () => {
    const rule = await createRule();
    await expectProblem(api('POST', '/rules', { body: ruleBody(), contentType: MERGE_PATCH }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    await expectProblem(api('PUT', `/rules/${rule.id}`, { body: { ...rule, version: 1 }, contentType: MERGE_PATCH }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('refuses prototype-poisoning keys and malformed JSON as JSON bodies are refused', async () => {
    const rule = await createRule();
    const poisoned = [
      ['{"version":1,"__proto__":{"priority":9}}', '__proto__'],
      ['{"version":1,"schema":{"\\u005f_proto__":{"type":"string"}}}', 'schema.__proto__'],
      ['{"version":1,"expectedValue":{"constructor":{"prototype":{"x":1}}}}', 'expectedValue.constructor.prototype'],
    ] as const;
    for (const [rawBody, path] of poisoned) {
      const refused = await expectProblem(patch(rule.id, undefined, { rawBody }), 400, 'INVALID_BODY');
      expect(refused.errors).toEqual([{ path, message: expect.stringMatching(/forbidden key/) }]);
    }
    await expectProblem(patch(rule.id, undefined, { rawBody: '{"version":1,' }), 400, 'INVALID_BODY');
    await expectProblem(patch(rule.id, undefined, { rawBody: '[]' }), 400, 'INVALID_BODY');
    await expectProblem(patch(rule.id, undefined, { rawBody: new Uint8Array([0x7b, 0xff, 0x7d]) }), 400, 'INVALID_BODY');
    const stored = await ok(api('GET', `/rules/${rule.id}`));
    expect(stored).toEqual(rule);
    expect(Object.prototype).not.toHaveProperty('priority');
  });

  it('413 for a body over MAX_BODY_BYTES, as for JSON', async () => {
    const rule = await createRule();
    const description = 'x'.repeat(t.config.maxBodyBytes);
    await expectProblem(patch(rule.id, { description, version: 1 }), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('403 with a validator key; 404 for an unknown id, an id that is not a UUID, another tenant\'s rule', async () => {
    const rule = await createRule();
    await expectProblem(patch(rule.id, { priority: 1, version: 1 }, { key: validatorKey }), 403, 'FORBIDDEN');
    await expectProblem(patch('0f8d6c3e-8a47-4b8e-9a55-3b1c2d4e5f60', { priority: 1, version: 1 }), 404, 'NOT_FOUND');
    await expectProblem(patch('not-a-uuid', { priority: 1, version: 1 }), 404, 'NOT_FOUND');
    await expectProblem(patch(rule.id, { priority: 1, version: 1 }, { key: t.otherAdminKey, tenant: t.otherTenantId }), 404, 'NOT_FOUND');
    expect((await ok(api('GET', `/rules/${rule.id}`))).version).toBe(1);
  });
});

describe('POST /rules with a rule read by GET', () => {
  it('ignores the server-managed fields: the rule copies into another context with the same content', async () => {
    const original = await createRule({ when: 'amount > 0', expectedValue: 10000, enabled: false });
    await ok(api('POST', `/rules/${original.id}/publish`));
    await ok(api('PUT', `/rules/${original.id}`, { body: { ...original, priority: 3, version: 1 } }));
    const read = await ok(api('GET', `/rules/${original.id}`));
    expect(read).toMatchObject({ status: 'draft', version: 2, publishedVersion: 1 });

    const copy = await ok(api('POST', '/rules', { body: { ...read, context: 'editing-copies', warnings: [] } }), 201);
    expect(copy.id).not.toBe(read.id);
    expect(copy).toMatchObject({ context: 'editing-copies', code: read.code, status: 'draft', version: 1, publishedVersion: null, publishedAt: null });
    expect(contentOf(copy)).toEqual(contentOf(read));
    expect(await ok(api('GET', `/rules/${copy.id}`))).toEqual(copy);
  });

  it('still refuses a field the rule resource does not have', async () => {
    for (const field of ['colour', 'tenantId', 'archivedAt']) {
      const refused = await expectProblem(api('POST', '/rules', { body: { ...ruleBody(), [field]: 'x' } }), 400, 'INVALID_BODY');
      expect(refused.errors).toEqual([{ path: field, message: 'is not an allowed field' }]);
    }
  });
});

describe('POST /rules/{id}/restore', () => {
  it('makes an archived rule a draft again, with a new version copying its content; earlier versions stay', async () => {
    const rule = await createRule();
    const published = await ok(api('POST', `/rules/${rule.id}/publish`));
    await ok(api('DELETE', `/rules/${rule.id}`), 204);
    const restored = await ok(api('POST', `/rules/${rule.id}/restore`));
    expect(restored).toMatchObject({ id: rule.id, status: 'draft', version: 2, publishedVersion: null, publishedAt: published.publishedAt });
    expect(contentOf(restored)).toEqual(contentOf(rule));
    expect(await ok(api('GET', `/rules/${rule.id}`))).toEqual(restored);

    const { items } = await ok(api('GET', `/rules/${rule.id}/versions`));
    expect(items.map((version: Json) => version.version)).toEqual([2, 1]);
    expect(items[0].publishedAt).toBeNull();
    expect(items[1].publishedAt).toBe(published.publishedAt);
    const { version: _v2, createdAt: _c2, publishedAt: _p2, ...content2 } = items[0];
    const { version: _v1, createdAt: _c1, publishedAt: _p1, ...content1 } = items[1];
    expect(content2).toEqual(content1);

    // Listed as a draft again, and editable from its new version.
    const drafts = await ok(api('GET', `/rules?context=${rule.context}&status=draft`));
    expect(drafts.items.map((item: Json) => item.id)).toEqual([rule.id]);
    await expectProblem(patch(rule.id, { priority: 1, version: 1 }), 409, 'CONFLICT');
    expect(await ok(patch(rule.id, { priority: 1, version: 2 }))).toMatchObject({ version: 3, priority: 1 });
  });

  it('a restored rule published goes live again and validation uses it', async () => {
    const rule = await createRule({ severity: 'Error', priority: 0 });
    const payload = { amount: 50000 };
    await ok(api('POST', `/rules/${rule.id}/publish`));
    expect((await validate(rule.context, payload)).failures.map((f: Json) => f.ruleCode)).toEqual([rule.code]);
    await ok(api('DELETE', `/rules/${rule.id}`), 204);
    expect(await validate(rule.context, payload)).toMatchObject({ isValid: true, totalRulesEvaluated: 0 });

    await ok(api('POST', `/rules/${rule.id}/restore`));
    // A draft: nothing goes live until it is published.
    expect(await validate(rule.context, payload)).toMatchObject({ isValid: true, totalRulesEvaluated: 0 });
    const drafts = await ok(api('POST', '/rules/test', { body: { context: rule.context, draft: true, payload } }));
    expect(drafts.failures.map((f: Json) => f.ruleCode)).toEqual([rule.code]);
    const republished = await ok(api('POST', `/rules/${rule.id}/publish`));
    expect(republished).toMatchObject({ status: 'published', version: 2, publishedVersion: 2 });
    const answer = await validate(rule.context, payload);
    expect(answer).toMatchObject({ isValid: false, totalRulesEvaluated: 1 });
    expect(answer.failures.map((f: Json) => f.ruleCode)).toEqual([rule.code]);
  });

  it('a context publish publishes a restored rule with the other drafts', async () => {
    const rule = await createRule();
    await ok(api('POST', `/rules/${rule.id}/publish`));
    await ok(api('DELETE', `/rules/${rule.id}`), 204);
    await ok(api('POST', `/rules/${rule.id}/restore`));
    const other = await createRule({ context: rule.context });
    const published = await ok(api('POST', `/contexts/${rule.context}/publish`));
    expect([...published.published].sort()).toEqual([rule.id, other.id].sort());
    expect(await ok(api('GET', `/rules/${rule.id}`))).toMatchObject({ status: 'published', version: 2, publishedVersion: 2 });
  });

  it('409 when another rule of the context now has its code; the rule stays archived', async () => {
    const rule = await createRule();
    await ok(api('DELETE', `/rules/${rule.id}`), 204);
    await createRule({ context: rule.context, code: rule.code });
    const refused = await expectProblem(api('POST', `/rules/${rule.id}/restore`), 409, 'CONFLICT');
    expect(refused.detail).toContain(rule.code);
    expect((await ok(api('GET', `/rules/${rule.id}`))).status).toBe('archived');
  });

  it('the same code in another context, or held by an archived rule, is no obstacle', async () => {
    const rule = await createRule();
    await ok(api('DELETE', `/rules/${rule.id}`), 204);
    const twin = await createRule({ context: rule.context, code: rule.code });
    await ok(api('DELETE', `/rules/${twin.id}`), 204);
    await createRule({ context: `${rule.context}-elsewhere`, code: rule.code });
    expect((await ok(api('POST', `/rules/${rule.id}/restore`))).status).toBe('draft');
    // Now the twin's code is taken.
    await expectProblem(api('POST', `/rules/${twin.id}/restore`), 409, 'CONFLICT');
  });

  it('of two archived rules with one code restored at once, one comes back and the other is 409', async () => {
    const first = await createRule();
    await ok(api('DELETE', `/rules/${first.id}`), 204);
    const second = await createRule({ context: first.context, code: first.code });
    await ok(api('DELETE', `/rules/${second.id}`), 204);
    const answers = await Promise.all([first, second].map((rule) => api('POST', `/rules/${rule.id}/restore`)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    const active = await ok(api('GET', `/rules?context=${first.context}`));
    expect(active.items).toHaveLength(1);
  });

  it('409 for a rule that is not archived (draft or published)', async () => {
    const rule = await createRule();
    const refused = await expectProblem(api('POST', `/rules/${rule.id}/restore`), 409, 'CONFLICT');
    expect(refused.detail).toBe('the rule is not archived');
    await ok(api('POST', `/rules/${rule.id}/publish`));
    await expectProblem(api('POST', `/rules/${rule.id}/restore`), 409, 'CONFLICT');
    expect(await ok(api('GET', `/rules/${rule.id}`))).toMatchObject({ status: 'published', version: 1 });
  });

  it('409 LIMIT_EXCEEDED when the context already has MAX_RULES_PER_CONTEXT rules', async () => {
    const context = 'editing-full';
    const archived = await createRule({ context });
    await ok(api('DELETE', `/rules/${archived.id}`), 204);
    for (let i = 0; i < t.config.maxRulesPerContext; i++) await createRule({ context });
    await expectProblem(api('POST', `/rules/${archived.id}/restore`), 409, 'LIMIT_EXCEEDED');
  });

  it('403 with a validator key; 404 for an unknown id, an id that is not a UUID, another tenant\'s rule', async () => {
    const rule = await createRule();
    await ok(api('DELETE', `/rules/${rule.id}`), 204);
    await expectProblem(api('POST', `/rules/${rule.id}/restore`, { key: validatorKey }), 403, 'FORBIDDEN');
    await expectProblem(api('POST', `/rules/${rule.id}/restore`, { key: t.otherAdminKey, tenant: t.otherTenantId }), 404, 'NOT_FOUND');
    await expectProblem(api('POST', '/rules/0f8d6c3e-8a47-4b8e-9a55-3b1c2d4e5f60/restore'), 404, 'NOT_FOUND');
    await expectProblem(api('POST', '/rules/not-a-uuid/restore'), 404, 'NOT_FOUND');
    expect((await ok(api('GET', `/rules/${rule.id}`))).status).toBe('archived');
  });
});
