/**
 * Checks at save time over HTTP (docs/api.md, "Checking rules";
 * docs/rule-language.md, "Warnings"): every answer that carries a saved or
 * tested rule carries its warnings; POST /rules/check says what a save
 * would say and stores nothing; a context's payload schema is set, read and
 * removed, feeds the warnings and never changes a validation answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { createStorage } from '../../src/storage/create-storage.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

type Json = Record<string, any>;

let t: TestApp;
let validatorKey: string;

const ORDERS_SCHEMA = {
  type: 'object',
  properties: {
    total: { type: 'number' },
    status: { type: 'string' },
    customer: {
      type: 'object',
      properties: {
        type: { enum: ['person', 'business'] },
        email: { type: 'string' },
        vatId: { type: 'string' },
      },
    },
    lines: { type: 'array', items: { type: 'object', properties: { qty: { type: 'integer' } } } },
  },
};

beforeAll(async () => {
  t = await startTestApp();
  const created = await api('POST', '/api-keys', { name: 'validation only', role: 'validator' });
  validatorKey = created.body.key;
  expect((await api('PUT', '/contexts/orders/payload-schema', ORDERS_SCHEMA)).status).toBe(200);
});
afterAll(async () => {
  await t?.close();
});

function api(method: string, path: string, body?: unknown, options: { key?: string; tenant?: string } = {}) {
  return t.request(method, `/api/v1${path}`, { body, ...options });
}

let serial = 0;
function rule(overrides: Json = {}): Json {
  serial += 1;
  return { context: 'orders', code: `RULE_${serial}`, name: 'A rule', expression: 'total > 0', ...overrides };
}

function codesOf(warnings: Array<{ code: string }>): string[] {
  return warnings.map((warning) => warning.code);
}

async function check(body: Json): Promise<Json> {
  const response = await api('POST', '/rules/check', { rule: body });
  expect(response.status, response.text).toBe(200);
  return response.body;
}

async function ruleCount(): Promise<number> {
  const listed = await api('GET', '/rules?status=all&limit=500');
  return listed.body.items.length;
}

/** Each warning code, a rule that gets it in context `orders`, and the warning expected. */
const CASES: Array<[string, Json, Json]> = [
  ['BARE_NAME', { when: 'customer.type == business', fieldPath: 'customer.vatId', required: true, expression: undefined }, {
    code: 'BARE_NAME', path: 'when', line: 1, column: 18, suggestion: '"business"',
  }],
  ['UNKNOWN_FIELD', { fieldPath: 'custmer.email', required: true, expression: undefined }, {
    code: 'UNKNOWN_FIELD', path: 'fieldPath', suggestion: 'customer.email',
  }],
  ['TYPE_MISMATCH', { expression: "total > '5'" }, { code: 'TYPE_MISMATCH', path: 'expression', line: 1, column: 1, suggestion: 'total > 5' }],
  ['CONSTANT', { expression: 'false' }, { code: 'CONSTANT', path: 'expression', line: 1, column: 1 }],
  ['NEVER_EVALUATED', { enabled: false }, { code: 'NEVER_EVALUATED', path: 'enabled' }],
  ['NO_FOREACH', { expression: '$item > 0' }, { code: 'NO_FOREACH', path: 'expression' }],
  ['MISSING_VALUE_MESSAGE', { fieldPath: 'customer.email', required: true, expression: undefined, message: 'Customer: {{ $value }} is not an e-mail address' }, {
    code: 'MISSING_VALUE_MESSAGE', path: 'message', line: 1, column: 14,
  }],
];

describe('warnings on every answer that carries a saved or tested rule', () => {
  it('a rule with nothing to say gets an empty list, on create, read and replace', async () => {
    const created = await api('POST', '/rules', rule({ fieldPath: 'total', expression: 'total > 0' }));
    expect(created.status, created.text).toBe(201);
    expect(created.body.warnings).toEqual([]);
    const read = await api('GET', `/rules/${created.body.id}`);
    expect(read.body.warnings).toEqual([]);
    const replaced = await api('PUT', `/rules/${created.body.id}`, { ...read.body, expression: 'total >= 1' });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body.warnings).toEqual([]);
    expect(replaced.body.version).toBe(2);
  });

  it.each(CASES)('%s through POST /rules, GET, PUT, /rules/test and /rules/check', async (_code, fields, expected) => {
    const body = rule(fields);
    const created = await api('POST', '/rules', body);
    expect(created.status, created.text).toBe(201);
    expect(created.body.warnings).toEqual([expect.objectContaining(expected)]);
    expect(created.body.warnings[0].message).toEqual(expect.any(String));

    const read = await api('GET', `/rules/${created.body.id}`);
    expect(read.body.warnings).toEqual(created.body.warnings);

    // A clean rule replaced by the warned one warns on PUT.
    const clean = await api('POST', '/rules', rule({ fieldPath: 'total', expression: 'total > 0' }));
    expect(clean.body.warnings).toEqual([]);
    const { context: _c, code: _k, ...content } = body;
    const replaced = await api('PUT', `/rules/${clean.body.id}`, { ...content, version: 1 });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body.warnings).toEqual(created.body.warnings);

    const tested = await api('POST', '/rules/test', { rule: body, payload: { total: 3, customer: { type: 'business', vatId: 'X' } } });
    expect(tested.status, tested.text).toBe(200);
    expect(tested.body.warnings).toEqual(created.body.warnings);

    const checked = await check(body);
    expect(checked).toEqual({ ok: true, errors: [], warnings: created.body.warnings });
  });

  it('MISSING_VALUE_MESSAGE: $value in a required rule\'s message renders empty for the missing field it fails on', async () => {
    const body = rule({ fieldPath: 'customer.email', required: true, expression: '$value.includes("@")', message: '{{ $value }} is not an e-mail address' });
    const created = await api('POST', '/rules', body);
    expect(created.body.warnings).toEqual([expect.objectContaining({ code: 'MISSING_VALUE_MESSAGE', path: 'message', line: 1, column: 4 })]);
    // What the warning is about: the failure for a missing field reads as nothing.
    const tested = await api('POST', '/rules/test', { rule: body, payload: { customer: {} } });
    expect(tested.body.failures.map((failure: Json) => failure.message)).toEqual([' is not an e-mail address']);
    // Not required, a placeholder that decides what to show without a value, or no $value at all: nothing to say.
    for (const fields of [
      { required: false, message: '{{ $value }} is not an e-mail address' },
      { message: "{{ $value ?? 'nothing' }} is not an e-mail address" },
      { message: "{{ $value ? $value : 'no e-mail' }} is not an e-mail address" },
      { message: 'the e-mail address is missing or wrong' },
      { message: 'at {{ $path }}: wrong' },
    ]) {
      const checked = await check({ ...body, ...fields });
      expect(codesOf(checked.warnings), JSON.stringify(fields)).toEqual([]);
    }
  });

  it('warnings never block a save, and a rule read with GET can be sent back with its warnings', async () => {
    const created = await api('POST', '/rules', rule({ expression: '1 > 0' }));
    expect(created.status).toBe(201);
    expect(codesOf(created.body.warnings)).toEqual(['CONSTANT']);
    const read = await api('GET', `/rules/${created.body.id}`);
    const replaced = await api('PUT', `/rules/${created.body.id}`, { ...read.body, name: 'Renamed' });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body.name).toBe('Renamed');
    expect(codesOf(replaced.body.warnings)).toEqual(['CONSTANT']);
    const tested = await api('POST', '/rules/test', { rule: read.body, payload: {} });
    expect(tested.status, tested.text).toBe(200);
    expect(codesOf(tested.body.warnings)).toEqual(['CONSTANT']);
  });

  it('a context without a payload schema gets no UNKNOWN_FIELD or BARE_NAME warnings, but the others', async () => {
    const bare = await check(rule({ context: 'no-schema', when: 'customer.type == business', fieldPath: 'custmer.email', required: true }));
    expect(bare).toEqual({ ok: true, errors: [], warnings: [] });
    const constant = await check(rule({ context: 'no-schema', expression: 'false' }));
    expect(codesOf(constant.warnings)).toEqual(['CONSTANT']);
    // Without a context, there is no payload schema either.
    const { context: _c, ...withoutContext } = rule({ fieldPath: 'custmer.email', required: true });
    expect(await check(withoutContext)).toEqual({ ok: true, errors: [], warnings: [] });
  });

  it('rules are listed without warnings; a context test answers an empty list', async () => {
    const listed = await api('GET', '/rules?context=orders');
    expect(listed.status).toBe(200);
    for (const item of listed.body.items) expect(item).not.toHaveProperty('warnings');
    const published = await api('POST', '/contexts/orders/publish');
    expect(published.status, published.text).toBe(200);
    const tested = await api('POST', '/rules/test', { context: 'orders', payload: { total: 1 } });
    expect(tested.status, tested.text).toBe(200);
    expect(tested.body.warnings).toEqual([]);
  });

  it('warnings follow the payload schema as it is now', async () => {
    const created = await api('POST', '/rules', rule({ context: 'evolving', fieldPath: 'amount', required: true, expression: undefined }));
    expect(created.body.warnings).toEqual([]);
    const set = await api('PUT', '/contexts/evolving/payload-schema', { type: 'object', properties: { amount2: { type: 'number' } } });
    expect(set.status, set.text).toBe(200);
    const read = await api('GET', `/rules/${created.body.id}`);
    expect(read.body.warnings).toEqual([expect.objectContaining({ code: 'UNKNOWN_FIELD', path: 'fieldPath', suggestion: 'amount2' })]);
    await api('PUT', '/contexts/evolving/payload-schema', { type: 'object', properties: { amount: { type: 'number' } } });
    expect((await api('GET', `/rules/${created.body.id}`)).body.warnings).toEqual([]);
    expect((await api('DELETE', '/contexts/evolving/payload-schema')).status).toBe(204);
    expect((await api('GET', `/rules/${created.body.id}`)).body.warnings).toEqual([]);
  });
});

describe('POST /rules/check', () => {
  it('stores nothing', async () => {
    const before = await ruleCount();
    const body = rule({ code: 'CHECKED_ONLY' });
    expect(await check(body)).toEqual({ ok: true, errors: [], warnings: [] });
    expect(await ruleCount()).toBe(before);
    // The code is still free: a save after the check succeeds.
    const created = await api('POST', '/rules', body);
    expect(created.status, created.text).toBe(201);
  });

  it('answers the errors a save would refuse with, 200 with ok: false, each with field, line and column', async () => {
    const body = rule({ expression: 'total > 0 &&\n  new Date()', when: 'false' });
    const saved = await api('POST', '/rules', body);
    expect(saved.status).toBe(400);
    expect(saved.body.errors).toEqual([{ path: 'expression', message: 'line 2, column 3: `new` is not allowed' }]);
    const checked = await check(body);
    expect(checked.ok).toBe(false);
    expect(checked.errors).toEqual([{ path: 'expression', message: '`new` is not allowed', line: 2, column: 3 }]);
    // The fields that compile are still warned about.
    expect(checked.warnings).toEqual([expect.objectContaining({ code: 'NEVER_EVALUATED', path: 'when' })]);
  });

  it('a problem with a field as a whole is placed at its start', async () => {
    const checked = await check(rule({ expression: undefined }));
    expect(checked).toEqual({
      ok: false,
      errors: [{ path: 'expression', message: 'a rule needs at least one of `expression`, `schema`, `table` or `required: true`', line: 1, column: 1 }],
      warnings: [],
    });
  });

  it('a rule of the wrong shape is answered 200 with its errors, not 400', async () => {
    const checked = await check({ code: 'HALF', name: '', severity: 'Fatal', expression: 'total > 0' });
    expect(checked.ok).toBe(false);
    expect(checked.errors).toEqual(expect.arrayContaining([
      expect.objectContaining({ path: 'name', line: 1, column: 1 }),
      expect.objectContaining({ path: 'severity', line: 1, column: 1 }),
    ]));
    const missing = await check({ name: 'No code' });
    expect(missing.errors).toEqual([{ path: 'code', message: 'is required', line: 1, column: 1 }]);
    const unstorable = await check({ code: 'NUL', name: 'a\u0000b', expression: 'true' });
    expect(unstorable.errors).toEqual([expect.objectContaining({ path: 'name', line: 1, column: 1 })]);
  });

  it('a body that is not `{ rule }` is 400', async () => {
    const response = await api('POST', '/rules/check', { code: 'X', name: 'X' });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('INVALID_BODY');
  });

  it('needs an admin key', async () => {
    const response = await api('POST', '/rules/check', { rule: rule() }, { key: validatorKey });
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('FORBIDDEN');
  });

  it('uses the payload schema of the rule\'s own tenant only', async () => {
    const body = rule({ fieldPath: 'custmer.email', required: true, expression: undefined });
    const other = await api('POST', '/rules/check', { rule: body }, { key: t.otherAdminKey, tenant: t.otherTenantId });
    expect(other.status).toBe(200);
    expect(other.body).toEqual({ ok: true, errors: [], warnings: [] });
    expect(codesOf((await check(body)).warnings)).toEqual(['UNKNOWN_FIELD']);
  });

  it('handles a 200-line expression', async () => {
    const lines = Array.from({ length: 200 }, (_, i) => `total != ${i}`);
    const checked = await check(rule({ expression: lines.join(' &&\n') }));
    expect(checked).toEqual({ ok: true, errors: [], warnings: [] });
  });
});

describe('payload schema of a context', () => {
  const schema = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { b: { type: 'string' }, a: { type: 'number' } } };

  it('PUT answers the schema, GET answers it as set (keys in order), DELETE removes it', async () => {
    expect((await api('GET', '/contexts/crud/payload-schema')).status).toBe(404);
    const set = await api('PUT', '/contexts/crud/payload-schema', schema);
    expect(set.status, set.text).toBe(200);
    expect(set.text).toBe(JSON.stringify(schema));
    const read = await api('GET', '/contexts/crud/payload-schema');
    expect(read.status).toBe(200);
    expect(read.text).toBe(JSON.stringify(schema));
    const replaced = await api('PUT', '/contexts/crud/payload-schema', { type: 'object' });
    expect(replaced.body).toEqual({ type: 'object' });
    expect((await api('GET', '/contexts/crud/payload-schema')).body).toEqual({ type: 'object' });
    expect((await api('DELETE', '/contexts/crud/payload-schema')).status).toBe(204);
    const gone = await api('GET', '/contexts/crud/payload-schema');
    expect(gone.status).toBe(404);
    expect(gone.body.code).toBe('NOT_FOUND');
    expect(gone.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const again = await api('DELETE', '/contexts/crud/payload-schema');
    expect(again.status).toBe(404);
  });

  it('an invalid schema is 400 naming where, and changes nothing', async () => {
    await api('PUT', '/contexts/invalid/payload-schema', schema);
    const cases: Array<[unknown, string]> = [
      [{ type: 'object', properties: { total: { type: 'number', minimum: 'zero' } } }, 'properties.total.minimum'],
      [{ type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } }, 'properties.a'],
      [{ type: 'objet' }, 'type'],
      [{ type: 'object', properties: { a: { typo: 1 } } }, 'properties.a.typo'],
      [{ type: 'object', properties: { a: { type: 'string', minimum: 1 } } }, 'properties.a.minimum'],
      [{ type: 'object', properties: { a: { type: 'string', format: 'emial' } } }, 'properties.a.format'],
      [{ type: 'object', allOf: [{ typo: 1 }] }, 'allOf[0].typo'],
    ];
    for (const [body, path] of cases) {
      const response = await api('PUT', '/contexts/invalid/payload-schema', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.code).toBe('INVALID_BODY');
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(response.body.errors).toEqual([{ path, message: expect.any(String) }]);
    }
    const tooDeep = { type: 'object', properties: {} as Json };
    let at = tooDeep.properties;
    for (let i = 0; i < 40; i++) {
      at.x = { type: 'object', properties: {} };
      at = at.x.properties;
    }
    const deep = await api('PUT', '/contexts/invalid/payload-schema', tooDeep);
    expect(deep.status).toBe(400);
    expect(deep.body.errors[0].message).toMatch(/deeper than 32/);
    const notObject = await api('PUT', '/contexts/invalid/payload-schema', [1]);
    expect(notObject.status).toBe(400);
    expect((await api('GET', '/contexts/invalid/payload-schema')).body).toEqual(schema);
  });

  it('a misspelt keyword is placed in the schema, with the keyword Ajv knows that was probably meant', async () => {
    const response = await api('PUT', '/contexts/invalid/payload-schema', {
      type: 'object',
      properties: { street: { type: 'string', minLenght: 3 } },
    });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      {
        path: 'properties.street.minLenght',
        message: 'strict mode: unknown keyword: "minLenght" at "#/properties/street"; did you mean "minLength"?',
      },
    ]);
    // Nothing near: no suggestion, still placed.
    const far = await api('PUT', '/contexts/invalid/payload-schema', { type: 'object', properties: { street: { zzz: 1 } } });
    expect(far.body.errors).toEqual([{ path: 'properties.street.zzz', message: 'strict mode: unknown keyword: "zzz" at "#/properties/street"' }]);
  });

  it('needs an admin key (403 for a validator key)', async () => {
    for (const method of ['PUT', 'GET', 'DELETE']) {
      const response = await api(method, '/contexts/orders/payload-schema', method === 'PUT' ? schema : undefined, { key: validatorKey });
      expect(response.status, method).toBe(403);
      expect(response.body.code).toBe('FORBIDDEN');
    }
  });

  it('is the tenant\'s own: another tenant sees none (404) and cannot remove it', async () => {
    const other = { key: t.otherAdminKey, tenant: t.otherTenantId };
    expect((await api('GET', '/contexts/orders/payload-schema', undefined, other)).status).toBe(404);
    expect((await api('DELETE', '/contexts/orders/payload-schema', undefined, other)).status).toBe(404);
    // Its own schema of the same name is another one.
    expect((await api('PUT', '/contexts/orders/payload-schema', { type: 'object' }, other)).status).toBe(200);
    expect((await api('GET', '/contexts/orders/payload-schema')).body).toEqual(ORDERS_SCHEMA);
    expect((await api('GET', '/contexts/orders/payload-schema', undefined, other)).body).toEqual({ type: 'object' });
  });

  it('setting and removing it are audited, with the schema before and after', async () => {
    await api('PUT', '/contexts/audited/payload-schema', { type: 'object' });
    await api('PUT', '/contexts/audited/payload-schema', schema);
    expect((await api('PUT', '/contexts/audited/payload-schema', { type: 'objet' })).status).toBe(400);
    await api('DELETE', '/contexts/audited/payload-schema');
    const audit = await api('GET', '/audit?context=audited&action=context.payload-schema');
    expect(audit.status, audit.text).toBe(200);
    // No schema before the first, none after the removal: those keys are absent.
    expect(audit.body.items.map((entry: Json) => [entry.before ?? null, entry.after ?? null])).toEqual([
      [schema, null],
      [{ type: 'object' }, schema],
      [null, { type: 'object' }],
    ]);
    expect(audit.body.items[0]).toMatchObject({ action: 'context.payload-schema', context: 'audited', actor: { role: 'admin' } });
  });

  it('a name no context can have is 404', async () => {
    const response = await api('GET', '/contexts/-bad/payload-schema');
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('CONTEXT_NOT_FOUND');
  });

  it('survives a restart', async () => {
    await api('PUT', '/contexts/durable/payload-schema', schema);
    await t.restart();
    expect((await api('GET', '/contexts/durable/payload-schema')).body).toEqual(schema);
  });

  it('never changes a validation answer', async () => {
    const context = 'answers';
    const rules = [
      rule({ context, code: 'TOTAL', fieldPath: 'total', expression: 'total > 0' }),
      rule({ context, code: 'EMAIL', fieldPath: 'custmer.email', required: true, expression: undefined }),
      rule({ context, code: 'VAT', when: 'customer.type == business', fieldPath: 'customer.vatId', required: true, expression: undefined }),
    ];
    for (const body of rules) expect((await api('POST', '/rules', body)).status).toBe(201);
    expect((await api('POST', `/contexts/${context}/publish`)).status).toBe(200);
    const payloads = [{ total: 0 }, { total: 5, customer: { type: 'business' }, custmer: { email: 'a@b' } }, { customer: { type: 'person' } }];
    const answers = async (): Promise<unknown[]> => Promise.all(payloads.map(async (payload) => {
      const response = await api('POST', '/validation/validate', { context, payload }, { key: validatorKey });
      expect(response.status).toBe(200);
      const { executionTimeMs: _ms, ...answer } = response.body;
      return answer;
    }));
    const without = await answers();
    expect((await api('PUT', `/contexts/${context}/payload-schema`, ORDERS_SCHEMA)).status).toBe(200);
    expect(await answers()).toEqual(without);
    const tested = await api('POST', '/rules/test', { context, payload: payloads[1] });
    const { executionTimeMs: _ms, warnings, ...testAnswer } = tested.body;
    expect(testAnswer).toEqual(without[1]);
    expect(warnings).toEqual([]);
  });
});

describe.runIf(process.env.DATABASE_URL !== undefined)('two instances on one PostgreSQL database', () => {
  it('a payload schema changed through one is used by the other within a second or so', async () => {
    const storage = await createStorage({ databaseUrl: t.config.databaseUrl, dataDir: t.config.dataDir });
    const second = await buildApp({ config: t.config, storage });
    try {
      const base = await second.listen({ host: '127.0.0.1', port: 0 });
      const checkOnSecond = async (body: Json): Promise<Json> => {
        const response = await fetch(`${base}/api/v1/rules/check`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': t.adminKey, 'x-tenant-id': t.tenantId },
          body: JSON.stringify({ rule: body }),
        });
        expect(response.status).toBe(200);
        return (await response.json()) as Json;
      };
      const body = rule({ context: 'shared', fieldPath: 'amount', required: true, expression: undefined });
      await api('PUT', '/contexts/shared/payload-schema', { type: 'object', properties: { amount: { type: 'number' } } });
      expect((await checkOnSecond(body)).warnings).toEqual([]);
      // Changed through the first instance: the second holds the old one for at most its recheck interval.
      await api('PUT', '/contexts/shared/payload-schema', { type: 'object', properties: { amount2: { type: 'number' } } });
      const deadline = Date.now() + 10_000;
      let warnings: Json[] = [];
      while (Date.now() < deadline) {
        warnings = (await checkOnSecond(body)).warnings;
        if (warnings.length > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(warnings).toEqual([expect.objectContaining({ code: 'UNKNOWN_FIELD', suggestion: 'amount2' })]);
      // And removed through the first: the second stops warning.
      await api('DELETE', '/contexts/shared/payload-schema');
      const removedBy = Date.now() + 10_000;
      while (Date.now() < removedBy && warnings.length > 0) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        warnings = (await checkOnSecond(body)).warnings;
      }
      expect(warnings).toEqual([]);
    } finally {
      await second.close();
      await storage.close();
    }
  });
});
