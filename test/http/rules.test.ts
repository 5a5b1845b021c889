/**
 * The rule resource over HTTP (docs/rule-language.md): create, read,
 * list with cursors, replace, archive, versions, and every 400 a rule body
 * can get, each naming its field (with line and column for expressions).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../support/app.ts';

type TestApp = Awaited<ReturnType<typeof startTestApp>>;
type Json = Record<string, any>;

let t: TestApp;
let validatorKey: string;

beforeAll(async () => {
  t = await startTestApp();
  const created = await api('POST', '/api-keys', { name: 'validation only', role: 'validator' });
  validatorKey = created.body.key;
});
afterAll(async () => {
  await t?.close();
});

async function api(method: string, path: string, body?: unknown, key?: string) {
  return t.request(method, `/api/v1${path}`, { body, key }) as Promise<{ status: number; headers: Headers; body: any }>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

let serial = 0;
/** A valid rule body with a fresh code. */
function ruleBody(overrides: Json = {}): Json {
  serial += 1;
  return {
    context: 'loans',
    code: `RULE_${serial}`,
    name: 'Amount limit',
    fieldPath: 'amount',
    expression: 'amount <= 10000',
    ...overrides,
  };
}

async function createRule(overrides: Json = {}): Promise<Json> {
  const response = await api('POST', '/rules', ruleBody(overrides));
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body;
}

function expectProblem(response: { status: number; body: any }, status: number, code: string): void {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.code).toBe(code);
  expect(response.body.status).toBe(status);
}

/** The 400's error entry for `path`, failing the test when there is none. */
function errorAt(response: { status: number; body: any }, path: string): { path: string; message: string } {
  expectProblem(response, 400, 'INVALID_BODY');
  const entry = (response.body.errors ?? []).find((error: { path: string }) => error.path === path);
  expect(entry, `no error at "${path}" in ${JSON.stringify(response.body)}`).toBeDefined();
  return entry;
}

describe('POST /rules', () => {
  it('creates a draft at version 1 with the defaults of docs/rule-language.md', async () => {
    const response = await api('POST', '/rules', ruleBody({ code: 'DEFAULTS' }));
    expect(response.status).toBe(201);
    const rule = response.body;
    expect(rule).toMatchObject({
      context: 'loans',
      code: 'DEFAULTS',
      name: 'Amount limit',
      severity: 'Error',
      fieldPath: 'amount',
      required: false,
      expression: 'amount <= 10000',
      priority: 0,
      enabled: true,
      tags: [],
      status: 'draft',
      version: 1,
      publishedVersion: null,
      publishedAt: null,
    });
    expect(rule.id).toMatch(UUID);
    expect(rule.createdAt).toMatch(ISO);
    expect(rule.updatedAt).toMatch(ISO);
    // Derived defaults stay absent so that they keep following name and code.
    expect(rule).not.toHaveProperty('errorCode');
    expect(rule).not.toHaveProperty('message');
    expect(Object.keys(rule)).toEqual([
      'id', 'context', 'code', 'name', 'severity', 'fieldPath', 'required', 'expression',
      'priority', 'enabled', 'tags', 'status', 'version', 'publishedVersion', 'createdAt', 'updatedAt', 'publishedAt', 'warnings',
    ]);
    expect(rule.warnings).toEqual([]);
  });

  it('keeps every field it was given', async () => {
    const body = ruleBody({
      description: 'Loans above the limit need a manual review.',
      severity: 'Warning',
      errorCode: 'AMOUNT_TOO_HIGH',
      required: true,
      message: 'Amount {{ $value }} exceeds {{ $expected }}',
      expectedValue: 10000,
      priority: -3,
      enabled: false,
      tags: ['limits', 'review'],
      when: 'exists(amount)',
    });
    const response = await api('POST', '/rules', body);
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    const { context, code, ...content } = body;
    expect(response.body).toMatchObject({ context, code, ...content });
  });

  it('accepts schema rules, forEach rules and required-only rules', async () => {
    const schema = { type: 'string', format: 'email', maxLength: 200 };
    const schemaRule = await createRule({ expression: undefined, fieldPath: 'email', schema, expectedValue: { any: ['json', 1] } });
    expect(schemaRule).toMatchObject({ schema, expectedValue: { any: ['json', 1] } });
    await createRule({ expression: 'items.every(i => i.qty > 0)', fieldPath: undefined });
    await createRule({ fieldPath: 'items[].qty', forEach: 'items', expression: '$item.qty > 0' });
    await createRule({ expression: undefined, required: true });
  });

  it('refuses a code already used in the context with 409, but not in another context', async () => {
    await createRule({ code: 'UNIQUE_CODE' });
    expectProblem(await api('POST', '/rules', ruleBody({ code: 'UNIQUE_CODE' })), 409, 'CONFLICT');
    await createRule({ code: 'UNIQUE_CODE', context: 'other-context' });
  });

  it('frees the code of an archived rule', async () => {
    const rule = await createRule({ code: 'REUSED_CODE' });
    expect((await api('DELETE', `/rules/${rule.id}`)).status).toBe(204);
    await createRule({ code: 'REUSED_CODE' });
  });

  it('accepts the longest context and code and a null expectedValue', async () => {
    await createRule({ context: `a${'b'.repeat(99)}`, code: 'c'.repeat(64), expectedValue: null });
    await createRule({ context: 'Acme:loans.v2_x-y', code: 'a.b-c_D' });
  });

  const tooLong = 'a == 1 && '.repeat(410) + 'true';
  const badBodies: { name: string; body: Json; path: string; says?: RegExp }[] = [
    { name: 'missing name', body: { name: undefined }, path: 'name' },
    { name: 'empty name', body: { name: '' }, path: 'name' },
    { name: 'name over 200 chars', body: { name: 'n'.repeat(201) }, path: 'name' },
    { name: 'missing context', body: { context: undefined }, path: 'context' },
    { name: 'context starting with a dash', body: { context: '-loans' }, path: 'context' },
    { name: 'context with a space', body: { context: 'my loans' }, path: 'context' },
    { name: 'context over 100 chars', body: { context: 'c'.repeat(101) }, path: 'context' },
    { name: 'missing code', body: { code: undefined }, path: 'code' },
    { name: 'code with a colon', body: { code: 'A:B' }, path: 'code' },
    { name: 'code over 64 chars', body: { code: 'C'.repeat(65) }, path: 'code' },
    { name: 'unknown severity', body: { severity: 'Fatal' }, path: 'severity' },
    { name: 'description over 2000 chars', body: { description: 'd'.repeat(2001) }, path: 'description' },
    { name: 'errorCode over 100 chars', body: { errorCode: 'E'.repeat(101) }, path: 'errorCode' },
    { name: 'message over 2000 chars', body: { message: 'm'.repeat(2001) }, path: 'message' },
    { name: 'priority not an integer', body: { priority: 1.5 }, path: 'priority' },
    { name: 'priority as a string (no coercion)', body: { priority: '1' }, path: 'priority' },
    { name: 'enabled as a string (no coercion)', body: { enabled: 'true' }, path: 'enabled' },
    { name: 'required as a number', body: { required: 1 }, path: 'required' },
    { name: 'expression not a string', body: { expression: 42 }, path: 'expression' },
    { name: 'schema not an object', body: { schema: [] }, path: 'schema' },
    { name: 'more than 20 tags', body: { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, path: 'tags' },
    { name: 'a tag over 50 chars', body: { tags: ['ok', 't'.repeat(51)] }, path: 'tags[1]' },
    {
      name: 'none of expression, schema, required',
      body: { expression: undefined },
      path: 'expression',
      says: /at least one of/,
    },
    { name: 'expression over MAX_EXPRESSION_LENGTH', body: { expression: tooLong }, path: 'expression', says: /4096/ },
    { name: 'when over MAX_EXPRESSION_LENGTH', body: { when: tooLong }, path: 'when', says: /4096/ },
    { name: 'expectedValue nested 40 deep', body: { expectedValue: JSON.parse('['.repeat(40) + ']'.repeat(40)) }, path: 'expectedValue' },
    { name: 'bad fieldPath grammar', body: { fieldPath: 'a..b' }, path: 'fieldPath' },
    { name: 'bad forEach grammar', body: { forEach: 'items[', fieldPath: undefined }, path: 'forEach' },
    {
      name: 'schema unknown keyword (strict), placed and with the keyword meant',
      body: { expression: undefined, schema: { type: 'string', maxlength: 3 } },
      path: 'schema.maxlength',
      says: /unknown keyword: "maxlength" at "#"; did you mean "maxLength"\?/,
    },
    {
      name: 'schema unknown keyword deep inside the schema',
      body: { fieldPath: 'address', expression: undefined, schema: { type: 'object', properties: { street: { type: 'string', minLenght: 3 } } } },
      path: 'schema.properties.street.minLenght',
      says: /did you mean "minLength"\?/,
    },
    { name: 'schema meta-schema error', body: { expression: undefined, schema: { type: 'array', items: { minItems: 'x' } } }, path: 'schema.items.minItems' },
    { name: 'schema with $id', body: { expression: undefined, schema: { $id: 'https://example.com/s', type: 'string' } }, path: 'schema' },
  ];

  it.each(badBodies)('400 naming the field: $name', async ({ body, path, says }) => {
    const response = await api('POST', '/rules', ruleBody(body));
    const entry = errorAt(response, path);
    if (says !== undefined) expect(entry.message).toMatch(says);
  });

  it.each([
    ['an empty body', ''],
    ['null', 'null'],
    ['an array', '[]'],
    ['a string', '"rule"'],
  ])('400 for %s as the body', async (_name, rawBody) => {
    const response = await t.request('POST', '/api/v1/rules', { rawBody });
    expectProblem(response, 400, 'INVALID_BODY');
  });

  it('400 naming an unknown field', async () => {
    for (const field of ['colour', 'tenantId', 'archivedAt']) {
      const response = await api('POST', '/rules', { ...ruleBody(), [field]: 'x' });
      expectProblem(response, 400, 'INVALID_BODY');
      expect(JSON.stringify(response.body.errors)).toContain(field);
    }
  });

  it('ignores server-managed fields, so a rule read with GET can be posted as it is', async () => {
    const managed = {
      id: '00000000-0000-0000-0000-000000000000', status: 'published', version: 7, publishedVersion: 7,
      createdAt: '2000-01-01T00:00:00.000Z', updatedAt: 'x', publishedAt: null, warnings: [{ code: 'CONSTANT' }],
    };
    const response = await api('POST', '/rules', { ...ruleBody({ code: 'MANAGED_IGNORED' }), ...managed });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body).toMatchObject({ code: 'MANAGED_IGNORED', status: 'draft', version: 1, publishedVersion: null, publishedAt: null });
    expect(response.body.id).not.toBe(managed.id);
    expect(response.body.createdAt).not.toBe(managed.createdAt);
  });

  const badExpressions: { field: string; text: string; line: number; column: number; says: RegExp }[] = [
    { field: 'expression', text: 'new Date()', line: 1, column: 1, says: /new/ },
    { field: 'expression', text: 'amount > 1 &&\n  this.x', line: 2, column: 3, says: /this/ },
    { field: 'expression', text: 'amount = 1', line: 1, column: 1, says: /./ },
    { field: 'expression', text: 'amount > 1; process.exit()', line: 1, column: 11, says: /./ },
    { field: 'expression', text: 'eval("1")', line: 1, column: 1, says: /eval/ },
    { field: 'expression', text: 'amount >', line: 1, column: 9, says: /./ },
    { field: 'when', text: 'x.constructor.constructor("return process")()', line: 1, column: 1, says: /./ },
    { field: 'message', text: 'Too much: {{ new X() }}', line: 1, column: 14, says: /new/ },
  ];

  it.each(badExpressions)('400 with line and column for $field `$text`', async ({ field, text, line, says }) => {
    const response = await api('POST', '/rules', ruleBody({ [field]: text }));
    const entry = errorAt(response, field);
    expect(entry.message).toMatch(new RegExp(`^line ${line}, column \\d+: `));
    expect(entry.message).toMatch(says);
  });

  it('points at the offending column', async () => {
    const response = await api('POST', '/rules', ruleBody({ expression: 'amount > new Date()' }));
    expect(errorAt(response, 'expression').message).toMatch(/^line 1, column 10: .*new/);
  });

  it('stores nothing when the rule does not compile', async () => {
    const code = 'NEVER_STORED';
    await api('POST', '/rules', ruleBody({ code, expression: 'new Date()' }));
    const list = await api('GET', '/rules?context=loans&status=all&limit=500');
    expect(list.body.items.map((rule: Json) => rule.code)).not.toContain(code);
  });

  it('415 for a body that is not JSON', async () => {
    const response = await t.request('POST', '/api/v1/rules', {
      rawBody: JSON.stringify(ruleBody()),
      contentType: 'text/plain',
    });
    expect(response.status).toBe(415);
    expect(response.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });
});

describe('GET /rules/{id}', () => {
  it('returns the rule', async () => {
    const rule = await createRule({ tags: ['x'] });
    const response = await api('GET', `/rules/${rule.id}`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(rule);
  });

  it.each([
    ['an unknown uuid', '3f0c4a52-1c1b-4b8e-9a53-7a8d2c7e9f10'],
    ['a malformed id', 'not-a-uuid'],
    ['a uuid with trailing text', '3f0c4a52-1c1b-4b8e-9a53-7a8d2c7e9f10x'],
    ['an SQL-looking id', "1' OR '1'='1"],
    ['an id of 5,000 characters (over the router\'s default bound of 100)', 'a'.repeat(5000)],
  ])('404 for %s on every rule route, never 500, each saying the same', async (_name, id) => {
    const path = `/rules/${encodeURIComponent(id)}`;
    const responses = [
      await api('GET', path),
      await api('PUT', path, { name: 'x', expression: 'true', version: 1 }),
      await api('DELETE', path),
      await api('POST', `${path}/publish`),
      await api('GET', `${path}/versions`),
    ];
    for (const response of responses) {
      expectProblem(response, 404, 'NOT_FOUND');
      expect(response.body.detail).toBe('Rule was not found.');
    }
  });
});

describe('PUT /rules/{id}', () => {
  it('GET, edit, PUT works: a new draft version, server-managed fields ignored', async () => {
    const rule = await createRule();
    const fetched = (await api('GET', `/rules/${rule.id}`)).body;
    const response = await api('PUT', `/rules/${rule.id}`, {
      ...fetched,
      expression: 'amount <= 20000',
      status: 'published',
      publishedVersion: 7,
      id: '00000000-0000-0000-0000-000000000000',
      createdAt: '2000-01-01T00:00:00.000Z',
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({
      id: rule.id,
      expression: 'amount <= 20000',
      version: 2,
      status: 'draft',
      publishedVersion: null,
      createdAt: rule.createdAt,
    });
    expect(Date.parse(response.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(rule.updatedAt));
    expect((await api('GET', `/rules/${rule.id}`)).body).toEqual(response.body);
  });

  it('puts omitted optional fields back to their defaults', async () => {
    const rule = await createRule({
      severity: 'Warning', tags: ['a'], description: 'd', priority: 5, enabled: false,
      errorCode: 'E1', message: 'm', when: 'true', expectedValue: 3,
    });
    const response = await api('PUT', `/rules/${rule.id}`, { name: 'Renamed', expression: 'amount > 0', version: 1 });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ name: 'Renamed', severity: 'Error', tags: [], priority: 0, enabled: true, required: false });
    for (const field of ['description', 'errorCode', 'message', 'when', 'expectedValue', 'fieldPath']) {
      expect(response.body).not.toHaveProperty(field);
    }
  });

  it('a PUT that changes nothing makes no version: a published rule stays published, and the PUT can be repeated', async () => {
    const rule = await createRule({ tags: ['b', 'a'], expectedValue: { max: 10000 } });
    expect((await api('POST', `/rules/${rule.id}/publish`)).status).toBe(200);
    const published = (await api('GET', `/rules/${rule.id}`)).body;
    expect(published).toMatchObject({ status: 'published', version: 1, publishedVersion: 1 });
    for (let i = 0; i < 2; i++) {
      // The same content as GET shows it, defaults spelled out and object keys in another order.
      const response = await api('PUT', `/rules/${rule.id}`, {
        ...published,
        expectedValue: { max: 10000 },
        severity: 'Error',
        version: 1,
      });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body).toEqual(published);
    }
    expect((await api('GET', `/rules/${rule.id}/versions`)).body.items).toHaveLength(1);
    // Any change at all is a new version.
    const renamed = await api('PUT', `/rules/${rule.id}`, { ...published, tags: ['a', 'b'], version: 1 });
    expect(renamed.body).toMatchObject({ version: 2, status: 'draft', publishedVersion: 1, tags: ['a', 'b'] });
  });

  it('400 when version is missing', async () => {
    const rule = await createRule();
    errorAt(await api('PUT', `/rules/${rule.id}`, { name: 'x', expression: 'true' }), 'version');
  });

  it('409 when version is stale, and nothing changes', async () => {
    const rule = await createRule();
    expect((await api('PUT', `/rules/${rule.id}`, { name: 'v2', expression: 'true', version: 1 })).status).toBe(200);
    const stale = await api('PUT', `/rules/${rule.id}`, { name: 'v3', expression: 'true', version: 1 });
    expectProblem(stale, 409, 'CONFLICT');
    expect(stale.body.detail).toBe('the rule is at version 2, not 1');
    expect((await api('GET', `/rules/${rule.id}`)).body).toMatchObject({ name: 'v2', version: 2 });
  });

  it('accepts the stored context and code, refuses others with 400 naming them', async () => {
    const rule = await createRule();
    const same = await api('PUT', `/rules/${rule.id}`, { context: rule.context, code: rule.code, name: 'n', expression: 'true', version: 1 });
    expect(same.status).toBe(200);
    errorAt(await api('PUT', `/rules/${rule.id}`, { context: 'elsewhere', name: 'n', expression: 'true', version: 2 }), 'context');
    errorAt(await api('PUT', `/rules/${rule.id}`, { code: 'OTHER', name: 'n', expression: 'true', version: 2 }), 'code');
    expect((await api('GET', `/rules/${rule.id}`)).body).toMatchObject({ context: rule.context, code: rule.code, version: 2 });
  });

  it('400 with line and column for an expression that does not compile; the version stays', async () => {
    const rule = await createRule();
    const response = await api('PUT', `/rules/${rule.id}`, { name: 'n', expression: 'amount >\n new Foo()', version: 1 });
    expect(errorAt(response, 'expression').message).toMatch(/^line 2, column 2: .*new/);
    expect((await api('GET', `/rules/${rule.id}`)).body.version).toBe(1);
  });

  it('400 for unknown fields', async () => {
    const rule = await createRule();
    const response = await api('PUT', `/rules/${rule.id}`, { name: 'n', expression: 'true', version: 1, colour: 'red' });
    expectProblem(response, 400, 'INVALID_BODY');
  });

  it('409 on an archived rule, for an edit and a publish alike', async () => {
    const rule = await createRule();
    await api('DELETE', `/rules/${rule.id}`);
    for (const response of [
      await api('PUT', `/rules/${rule.id}`, { name: 'n', expression: 'true', version: 1 }),
      await api('POST', `/rules/${rule.id}/publish`),
    ]) {
      expectProblem(response, 409, 'CONFLICT');
      expect(response.body.detail).toBe('the rule is archived');
    }
  });
});

describe('DELETE /rules/{id}', () => {
  it('archives (204), again 204, and the rule reads archived', async () => {
    const rule = await createRule();
    const first = await api('DELETE', `/rules/${rule.id}`);
    expect(first.status).toBe(204);
    expect(first.body === '' || first.body === undefined || first.body === null).toBe(true);
    expect((await api('DELETE', `/rules/${rule.id}`)).status).toBe(204);
    const fetched = (await api('GET', `/rules/${rule.id}`)).body;
    expect(fetched).toMatchObject({ status: 'archived', version: 1 });
  });
});

describe('GET /rules/{id}/versions', () => {
  it('lists immutable versions newest first with their content', async () => {
    const rule = await createRule({ expression: 'amount < 1' });
    await api('PUT', `/rules/${rule.id}`, { name: 'Second', fieldPath: 'amount', expression: 'amount < 2', version: 1 });
    await api('PUT', `/rules/${rule.id}`, { name: 'Third', fieldPath: 'amount', expression: 'amount < 3', tags: ['t'], version: 2 });
    const response = await api('GET', `/rules/${rule.id}/versions`);
    expect(response.status).toBe(200);
    const items = response.body.items;
    expect(items.map((v: Json) => v.version)).toEqual([3, 2, 1]);
    expect(items.map((v: Json) => v.expression)).toEqual(['amount < 3', 'amount < 2', 'amount < 1']);
    expect(items[0]).toMatchObject({ name: 'Third', tags: ['t'], publishedAt: null });
    expect(items[2]).toMatchObject({ name: 'Amount limit', fieldPath: 'amount' });
    for (const item of items) {
      expect(item.createdAt).toMatch(ISO);
      expect(item).not.toHaveProperty('id');
      expect(item).not.toHaveProperty('status');
    }
  });
});

describe('GET /rules', () => {
  let listed: Json[];

  beforeAll(async () => {
    listed = [];
    listed.push(await createRule({ context: 'listing', tags: ['red'] }));
    listed.push(await createRule({ context: 'listing', tags: ['blue', 'red'] }));
    listed.push(await createRule({ context: 'listing' }));
    const archived = await createRule({ context: 'listing', tags: ['red'] });
    await api('DELETE', `/rules/${archived.id}`);
    listed.push({ ...archived, status: 'archived' });
  });

  const codes = (response: { body: any }) => response.body.items.map((rule: Json) => rule.code);

  it('filters by context and hides archived rules by default', async () => {
    const response = await api('GET', '/rules?context=listing');
    expect(response.status).toBe(200);
    expect(codes(response)).toEqual(listed.slice(0, 3).map((rule) => rule.code));
    expect(response.body.nextCursor).toBeNull();
  });

  it.each([
    ['all', [0, 1, 2, 3]],
    ['archived', [3]],
    ['draft', [0, 1, 2]],
    ['published', []],
  ])('status=%s', async (status, indexes) => {
    const response = await api('GET', `/rules?context=listing&status=${status}`);
    expect(codes(response)).toEqual((indexes).map((i) => listed[i].code));
  });

  it('filters by tag', async () => {
    expect(codes(await api('GET', '/rules?context=listing&tag=red'))).toEqual([listed[0].code, listed[1].code]);
    expect(codes(await api('GET', '/rules?context=listing&tag=red&status=all'))).toEqual([listed[0].code, listed[1].code, listed[3].code]);
    expect(codes(await api('GET', '/rules?context=listing&tag=green'))).toEqual([]);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=501', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=1.5', 'limit'],
    ['status=deleted', 'status'],
    ['context=-bad', 'context'],
    ['cursor=not!base64', 'cursor'],
    ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
    ['colour=red', 'colour'],
  ])('400 for %s', async (query, field) => {
    const response = await api('GET', `/rules?${query}`);
    expectProblem(response, 400, 'INVALID_BODY');
    expect(JSON.stringify(response.body.errors ?? response.body.detail)).toContain(field);
  });

  it('accepts limit=500', async () => {
    expect((await api('GET', '/rules?limit=500')).status).toBe(200);
  });

  it('pages with stable cursors while rules are inserted', async () => {
    const context = 'paging';
    const first: Json[] = [];
    for (let i = 0; i < 5; i++) first.push(await createRule({ context }));

    const seen: string[] = [];
    let page = await api('GET', `/rules?context=${context}&limit=2`);
    expect(page.body.items).toHaveLength(2);
    seen.push(...codes(page));
    // Rules created between pages sort after every existing one: they show
    // up at the end, and nothing is skipped or repeated.
    const later = [await createRule({ context }), await createRule({ context })];
    while (page.body.nextCursor !== null) {
      expect(typeof page.body.nextCursor).toBe('string');
      page = await api('GET', `/rules?context=${context}&limit=2&cursor=${encodeURIComponent(page.body.nextCursor)}`);
      expect(page.status).toBe(200);
      seen.push(...codes(page));
    }
    expect(seen).toEqual([...first, ...later].map((rule) => rule.code));
  });

  it('orders by createdAt then id ascending', async () => {
    const items = (await api('GET', '/rules?status=all&limit=500')).body.items as Json[];
    for (let i = 1; i < items.length; i++) {
      const a = items[i - 1];
      const b = items[i];
      const ordered = a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id);
      expect(ordered, `${a.code} before ${b.code}`).toBe(true);
    }
  });

  it('defaults to 50 per page', async () => {
    for (let i = 0; i < 51; i++) await createRule({ context: 'many' });
    const page = await api('GET', '/rules?context=many');
    expect(page.body.items).toHaveLength(50);
    expect(page.body.nextCursor).not.toBeNull();
    const rest = await api('GET', `/rules?context=many&cursor=${encodeURIComponent(page.body.nextCursor)}`);
    expect(rest.body.items).toHaveLength(1);
    expect(rest.body.nextCursor).toBeNull();
  });
});

describe('roles', () => {
  const someId = '3f0c4a52-1c1b-4b8e-9a53-7a8d2c7e9f10';
  const managementRoutes: [string, string, unknown?][] = [
    ['POST', '/rules', { context: 'loans', code: 'X', name: 'x', expression: 'true' }],
    ['GET', '/rules'],
    ['GET', `/rules/${someId}`],
    ['PUT', `/rules/${someId}`, { name: 'x', expression: 'true', version: 1 }],
    ['DELETE', `/rules/${someId}`],
    ['POST', `/rules/${someId}/publish`],
    ['GET', `/rules/${someId}/versions`],
    ['POST', '/rules/test', { rule: { code: 'X', name: 'x', expression: 'true' }, payload: {} }],
    ['POST', '/contexts/loans/publish'],
    ['POST', '/contexts/loans/rollback', { rulesetVersion: 1 }],
    ['GET', '/contexts'],
    ['POST', '/contexts/loans/recompile'],
    ['GET', '/contexts/loans/validator'],
    ['POST', '/api-keys', { name: 'k', role: 'admin' }],
    ['GET', '/api-keys'],
    ['DELETE', `/api-keys/${someId}`],
  ];

  it.each(managementRoutes)('403 for a validator key: %s %s', async (method, path, body) => {
    const response = await api(method, path, body, validatorKey);
    expectProblem(response, 403, 'FORBIDDEN');
  });
});
