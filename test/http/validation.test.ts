/**
 * The three validation operations over real HTTP, held to
 * docs/api.md and docs/api.md: shapes, types and key
 * order of every 200 body, Approved/Rejected, 404 for unknown contexts,
 * executionTimeMs and Server-Timing. Rules are created and published
 * through the management API, as a tenant admin would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.ts';

const VALIDATE = '/api/v1/validation/validate';
const BATCH = '/api/v1/validation/validate-batch';
const TRANSACTION = '/api/v1/validation/validate-transaction';
const FAILURE_KEYS = ['ruleCode', 'ruleName', 'severity', 'message', 'errorCode', 'fieldPath', 'actualValue', 'expectedValue'];
const SERVER_TIMING = /^total;dur=\d+\.\d{3}$/;

let t: TestApp;
let validatorKey: string;

async function ok(response: Promise<TestResponse>, status = 200): Promise<any> {
  const resolved = await response;
  expect(resolved.status, resolved.text).toBe(status);
  return resolved.body;
}

/** Creates the rules of a context and publishes the context. */
async function publish(context: string, rules: Record<string, unknown>[], tenant?: { key: string; tenant: string }): Promise<void> {
  for (const rule of rules) {
    await ok(t.request('POST', '/api/v1/rules', { body: { context, ...rule }, ...tenant }), 201);
  }
  await ok(t.request('POST', `/api/v1/contexts/${context}/publish`, { ...tenant }));
}

beforeAll(async () => {
  t = await startTestApp({ env: { MAX_BATCH_ITEMS: '5', MAX_TRANSACTION_CONTEXTS: '3' } });
  validatorKey = (await ok(t.request('POST', '/api/v1/api-keys', { body: { name: 'checkout', role: 'validator' } }), 201)).key;
  await publish('loan', [
    { code: 'AMOUNT_REQUIRED', name: 'Amount is required', fieldPath: 'amount', required: true, message: 'amount is required' },
    {
      code: 'AMOUNT_MAX',
      name: 'Amount limit',
      fieldPath: 'amount',
      expression: 'amount <= 10000',
      errorCode: 'AMOUNT_TOO_HIGH',
      message: 'Amount {{ $value }} exceeds {{ $expected }}',
      priority: 1,
    },
    {
      code: 'EMAIL',
      name: 'Email is valid',
      fieldPath: 'email',
      expression: 'isEmail(email)',
      severity: 'Warning',
      message: 'bad email',
      priority: 2,
    },
  ]);
  await publish('kyc', [{ code: 'ADULT', name: 'Adult', fieldPath: 'years', expression: 'years >= 18', message: 'too young' }]);
  await publish('archived', [{ code: 'GONE', name: 'Gone', expression: 'false' }]);
  const archived = await ok(t.request('GET', '/api/v1/rules?context=archived'));
  await ok(t.request('DELETE', `/api/v1/rules/${archived.items[0].id}`), 204);
});
afterAll(async () => {
  await t?.close();
});

function validate(body: unknown, key = validatorKey): Promise<TestResponse> {
  return t.request('POST', VALIDATE, { body, key });
}

describe('POST /validation/validate', () => {
  it('returns isValid true and no failures for a passing payload', async () => {
    const response = await validate({ context: 'loan', payload: { amount: 500, email: 'a@example.com' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Object.keys(response.body)).toEqual(['isValid', 'totalRulesEvaluated', 'failures', 'executionTimeMs']);
    expect(response.body).toMatchObject({ isValid: true, totalRulesEvaluated: 3, failures: [] });
    expect(Number.isInteger(response.body.executionTimeMs)).toBe(true);
    expect(response.body.executionTimeMs).toBeGreaterThanOrEqual(0);
    expect(response.headers.get('server-timing')).toMatch(SERVER_TIMING);
  });

  it('returns one failure record per failed rule, all eight fields in order', async () => {
    const body = await ok(validate({ context: 'loan', payload: { amount: 20000, email: 'nope' } }));
    expect(body.isValid).toBe(false);
    expect(body.totalRulesEvaluated).toBe(3);
    expect(body.failures).toEqual([
      {
        ruleCode: 'AMOUNT_MAX',
        ruleName: 'Amount limit',
        severity: 'Error',
        message: 'Amount 20000 exceeds 10000',
        errorCode: 'AMOUNT_TOO_HIGH',
        fieldPath: 'amount',
        actualValue: 20000,
        expectedValue: 10000,
      },
      {
        ruleCode: 'EMAIL',
        ruleName: 'Email is valid',
        severity: 'Warning',
        message: 'bad email',
        errorCode: 'EMAIL',
        fieldPath: 'email',
        actualValue: 'nope',
        expectedValue: null,
      },
    ]);
    for (const failure of body.failures) expect(Object.keys(failure)).toEqual(FAILURE_KEYS);
  });

  it('reports a missing required field once, with actualValue null', async () => {
    const body = await ok(validate({ context: 'loan', payload: { email: 'a@example.com' } }));
    expect(body.failures.map((f: { ruleCode: string }) => f.ruleCode)).toEqual(['AMOUNT_REQUIRED']);
    expect(body.failures[0].actualValue).toBeNull();
  });

  it('validates a context whose rules were all archived with no rules', async () => {
    const body = await ok(validate({ context: 'archived', payload: {} }));
    expect(body).toMatchObject({ isValid: true, totalRulesEvaluated: 0, failures: [] });
  });

  it('ignores unknown top-level fields', async () => {
    const body = await ok(validate({ context: 'kyc', payload: { years: 30 }, extra: true, tenantId: 'globex' }));
    expect(body.isValid).toBe(true);
  });

  it('accepts an admin key too', async () => {
    await ok(validate({ context: 'kyc', payload: { years: 30 } }, t.adminKey));
  });

  it('answers 404 CONTEXT_NOT_FOUND naming an unknown context', async () => {
    const response = await validate({ context: 'mortgage', payload: {} });
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ code: 'CONTEXT_NOT_FOUND', status: 404 });
    expect(response.body.detail).toContain('mortgage');
    expect(response.body.errors).toEqual([{ path: 'context', message: expect.any(String) }]);
  });

  it('keeps tenants apart: another tenant\'s context is unknown', async () => {
    const response = await t.request('POST', VALIDATE, {
      body: { context: 'loan', payload: { amount: 1 } },
      key: t.otherAdminKey,
      tenant: t.otherTenantId,
    });
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('CONTEXT_NOT_FOUND');
  });

  it.each([
    ['no context', { payload: {} }, 'context'],
    ['a numeric context', { context: 5, payload: {} }, 'context'],
    ['an empty context', { context: '', payload: {} }, 'context'],
    ['a context with spaces', { context: 'a b', payload: {} }, 'context'],
    ['no payload', { context: 'loan' }, 'payload'],
    ['an array payload', { context: 'loan', payload: [] }, 'payload'],
    ['a null payload', { context: 'loan', payload: null }, 'payload'],
    ['a string payload', { context: 'loan', payload: '{}' }, 'payload'],
    ['a number body', 5, ''],
    ['an array body', [], ''],
  ])('answers 400 INVALID_BODY for %s, naming the path', async (_name, body, path) => {
    const response = await validate(body);
    expect(response.status, response.text).toBe(400);
    expect(response.body.code).toBe('INVALID_BODY');
    expect(response.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    for (const error of response.body.errors) expect(Object.keys(error)).toEqual(['path', 'message']);
  });

  it('does not coerce types', async () => {
    const response = await validate({ context: 'loan', payload: '5' });
    expect(response.status).toBe(400);
  });
});

describe('POST /validation/validate-batch', () => {
  it('reports each item under its id, in request order, with only ruleCode and message', async () => {
    const body = await ok(
      t.request('POST', BATCH, {
        key: validatorKey,
        body: {
          context: 'loan',
          items: [
            { id: 'b', payload: { amount: 1, email: 'a@example.com' } },
            { id: 'a', payload: { amount: 99999, email: 'a@example.com' } },
            { id: 'c', payload: {} },
          ],
        },
      }),
    );
    expect(Object.keys(body)).toEqual(['results', 'totalProcessed', 'totalFailed', 'executionTimeMs']);
    expect(body.results).toEqual([
      { id: 'b', isValid: true, failures: [] },
      { id: 'a', isValid: false, failures: [{ ruleCode: 'AMOUNT_MAX', message: 'Amount 99999 exceeds 10000' }] },
      { id: 'c', isValid: false, failures: [{ ruleCode: 'AMOUNT_REQUIRED', message: 'amount is required' }] },
    ]);
    for (const result of body.results) expect(Object.keys(result)).toEqual(['id', 'isValid', 'failures']);
    expect(body.totalProcessed).toBe(3);
    expect(body.totalFailed).toBe(2);
    expect(Number.isInteger(body.executionTimeMs)).toBe(true);
  });

  it('counts a Warning as a failed item', async () => {
    const body = await ok(
      t.request('POST', BATCH, { key: validatorKey, body: { context: 'loan', items: [{ id: 'w', payload: { amount: 1, email: 'x' } }] } }),
    );
    expect(body.totalFailed).toBe(1);
    expect(body.results[0].failures).toEqual([{ ruleCode: 'EMAIL', message: 'bad email' }]);
  });

  const items = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `i${i}`, payload: {} }));

  it('accepts MAX_BATCH_ITEMS items', async () => {
    const body = await ok(t.request('POST', BATCH, { key: validatorKey, body: { context: 'kyc', items: items(5) } }));
    expect(body.totalProcessed).toBe(5);
  });

  it.each([
    ['no items', { context: 'kyc', items: [] }, 'items'],
    ['too many items', { context: 'kyc', items: items(6) }, 'items'],
    ['items not an array', { context: 'kyc', items: {} }, 'items'],
    ['no items field', { context: 'kyc' }, 'items'],
    ['an item without id', { context: 'kyc', items: [{ payload: {} }] }, 'items[0].id'],
    ['an empty id', { context: 'kyc', items: [{ id: '', payload: {} }] }, 'items[0].id'],
    ['an id over 200 chars', { context: 'kyc', items: [{ id: 'x'.repeat(201), payload: {} }] }, 'items[0].id'],
    ['a numeric id', { context: 'kyc', items: [{ id: 1, payload: {} }] }, 'items[0].id'],
    ['an array payload', { context: 'kyc', items: [{ id: 'a', payload: {} }, { id: 'b', payload: [] }] }, 'items[1].payload'],
    ['a missing payload', { context: 'kyc', items: [{ id: 'a' }] }, 'items[0].payload'],
    ['duplicate ids', { context: 'kyc', items: [{ id: 'a', payload: {} }, { id: 'b', payload: {} }, { id: 'a', payload: {} }] }, 'items[2].id'],
  ])('answers 400 for %s, naming %s', async (_name, body, path) => {
    const response = await t.request('POST', BATCH, { key: validatorKey, body });
    expect(response.status, response.text).toBe(400);
    expect(response.body.code).toBe('INVALID_BODY');
    expect(response.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  it('evaluates every item at one now()', async () => {
    await publish('clock', [{ code: 'NOW', name: 'Now', expression: 'now() < 0', message: '{{ now() }}' }]);
    const before = Date.now();
    const body = await ok(
      t.request('POST', BATCH, { key: validatorKey, body: { context: 'clock', items: items(5).map((item) => ({ ...item, payload: { big: 'x'.repeat(50) } })) } }),
    );
    const stamps = new Set(body.results.map((r: any) => r.failures[0].message));
    expect(stamps.size).toBe(1);
    const [stamp] = stamps as Set<string>;
    expect(Number(stamp)).toBeGreaterThanOrEqual(before);
    expect(Number(stamp)).toBeLessThanOrEqual(Date.now());
  });

  it('accepts an id of exactly 200 chars', async () => {
    await ok(t.request('POST', BATCH, { key: validatorKey, body: { context: 'kyc', items: [{ id: 'x'.repeat(200), payload: {} }] } }));
  });

  it('answers 404 for an unknown context', async () => {
    const response = await t.request('POST', BATCH, { key: validatorKey, body: { context: 'nope', items: items(1) } });
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('CONTEXT_NOT_FOUND');
    expect(response.body.detail).toContain('nope');
  });
});

describe('POST /validation/validate-transaction', () => {
  function transaction(body: unknown): Promise<TestResponse> {
    return t.request('POST', TRANSACTION, { key: validatorKey, body });
  }

  it('is Approved when every context passes, listing contexts in request order', async () => {
    const body = await ok(transaction({ transactionId: 'tx-1', contexts: ['kyc', 'loan'], payload: { years: 40, amount: 10, email: 'a@b.co' } }));
    expect(Object.keys(body)).toEqual(['transactionId', 'overallResult', 'contextResults', 'executionTimeMs']);
    expect(body).toMatchObject({
      transactionId: 'tx-1',
      overallResult: 'Approved',
      contextResults: [
        { context: 'kyc', isValid: true, failures: [] },
        { context: 'loan', isValid: true, failures: [] },
      ],
    });
    for (const result of body.contextResults) expect(Object.keys(result)).toEqual(['context', 'isValid', 'failures']);
    expect(Number.isInteger(body.executionTimeMs)).toBe(true);
  });

  it('is Rejected, still 200, when one context fails; failures carry only ruleCode and message', async () => {
    const body = await ok(transaction({ transactionId: 'tx-2', contexts: ['loan', 'kyc'], payload: { years: 12, amount: 10, email: 'a@b.co' } }));
    expect(body.overallResult).toBe('Rejected');
    expect(body.contextResults).toEqual([
      { context: 'loan', isValid: true, failures: [] },
      { context: 'kyc', isValid: false, failures: [{ ruleCode: 'ADULT', message: 'too young' }] },
    ]);
  });

  it('answers 404 naming every unknown context, each at its path', async () => {
    const response = await transaction({ transactionId: 'tx-3', contexts: ['ghost', 'kyc', 'phantom'], payload: {} });
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('CONTEXT_NOT_FOUND');
    expect(response.body.detail).toBe('Contexts "ghost", "phantom" have no published rules.');
    expect(response.body.errors).toEqual([
      { path: 'contexts[0]', message: 'names no published ruleset' },
      { path: 'contexts[2]', message: 'names no published ruleset' },
    ]);
  });

  it('answers 404 in the singular for one unknown context', async () => {
    const response = await transaction({ transactionId: 'tx-4', contexts: ['kyc', 'ghost'], payload: {} });
    expect(response.status).toBe(404);
    expect(response.body.detail).toBe('Context "ghost" has no published rules.');
    expect(response.body.errors).toEqual([{ path: 'contexts[1]', message: 'names no published ruleset' }]);
  });

  it.each([
    ['no transactionId', { contexts: ['kyc'], payload: {} }, 'transactionId'],
    ['an empty transactionId', { transactionId: '', contexts: ['kyc'], payload: {} }, 'transactionId'],
    ['a transactionId over 200 chars', { transactionId: 'x'.repeat(201), contexts: ['kyc'], payload: {} }, 'transactionId'],
    ['no contexts', { transactionId: 't', contexts: [], payload: {} }, 'contexts'],
    ['too many contexts', { transactionId: 't', contexts: ['a', 'b', 'c', 'd'], payload: {} }, 'contexts'],
    ['a non-string context', { transactionId: 't', contexts: ['kyc', 7], payload: {} }, 'contexts[1]'],
    ['duplicate contexts', { transactionId: 't', contexts: ['kyc', 'loan', 'kyc'], payload: {} }, 'contexts[2]'],
    ['no payload', { transactionId: 't', contexts: ['kyc'] }, 'payload'],
    ['an array payload', { transactionId: 't', contexts: ['kyc'], payload: [1] }, 'payload'],
  ])('answers 400 for %s, naming %s', async (_name, body, path) => {
    const response = await transaction(body);
    expect(response.status, response.text).toBe(400);
    expect(response.body.code).toBe('INVALID_BODY');
    expect(response.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });
});

describe('executionTimeMs', () => {
  /** Server-Timing's duration, in ms. */
  const serverTimingMs = (response: TestResponse): number => Number(/dur=([0-9.]+)/.exec(response.headers.get('server-timing') ?? '')![1]);

  it('covers serializing the answer: a 20,000-failure body agrees with Server-Timing', async () => {
    await publish('lines', [
      { code: 'QTY', name: 'Quantity', forEach: 'items', fieldPath: 'items[].qty', expression: '$value > 0', message: 'qty {{ $value }} at item {{ $index }}' },
    ]);
    const payload = { items: Array.from({ length: 20_000 }, () => ({ qty: 0 })) };
    const response = await validate({ context: 'lines', payload });
    expect(response.status, response.text).toBe(200);
    expect(response.body.failures).toHaveLength(20_000);
    // Read as the serializer reaches it (the last field), so it includes
    // serializing the 20,000 records before it; Server-Timing is taken just
    // after. Read before serializing, it was about half of Server-Timing.
    const total = serverTimingMs(response);
    expect(response.body.executionTimeMs).toBeLessThanOrEqual(Math.round(total));
    expect(response.body.executionTimeMs).toBeGreaterThanOrEqual(Math.floor(total * 0.8) - 1);
  });
});

describe('payload guard', () => {
  /** `{"a":{"a":...{}}}` with `levels` objects in all, the payload itself being level 1. */
  function nested(levels: number): string {
    return '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);
  }

  function raw(path: string, rawBody: string): Promise<TestResponse> {
    return t.request('POST', path, { key: validatorKey, rawBody });
  }

  it('accepts a payload 64 levels deep', async () => {
    await ok(raw(VALIDATE, `{"context":"kyc","payload":${nested(64)}}`));
  });

  it('refuses a payload 65 levels deep, naming the level that is too deep', async () => {
    const response = await raw(VALIDATE, `{"context":"kyc","payload":${nested(65)}}`);
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ path: `payload${'.a'.repeat(64)}`, message: expect.stringContaining('64') }]);
  });

  it('counts arrays as levels too', async () => {
    const deep = '['.repeat(64) + ']'.repeat(64);
    const response = await raw(VALIDATE, `{"context":"kyc","payload":{"x":${deep}}}`);
    expect(response.status).toBe(400);
    expect(response.body.errors[0].path).toBe(`payload.x${'[0]'.repeat(63)}`);
  });

  it('survives a payload 100000 levels deep', async () => {
    const response = await raw(VALIDATE, `{"context":"kyc","payload":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`);
    expect([400, 413]).toContain(response.status);
  });

  it.each([
    ['1e400', '{"a":1e400}', 'payload.a'],
    ['-1e400 in an array', '{"list":[1,2,-1e400]}', 'payload.list[2]'],
    ['a huge number under an odd key', '{"first-name":{"x":1e999}}', 'payload["first-name"].x'],
  ])('refuses %s naming its path', async (_name, payload, path) => {
    const response = await raw(VALIDATE, `{"context":"kyc","payload":${payload}}`);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('INVALID_BODY');
    expect(response.body.errors).toEqual([{ path, message: 'must be a finite number' }]);
  });

  it.each([
    ['__proto__', '{"__proto__":{"admin":true}}', 'payload.__proto__'],
    ['nested __proto__', '{"a":[{"__proto__":{}}]}', 'payload.a[0].__proto__'],
    ['constructor.prototype', '{"constructor":{"prototype":{"admin":true}}}', 'payload.constructor.prototype'],
    ['unicode-escaped __proto__', '{"\\u005f_proto__":{"admin":true}}', 'payload.__proto__'],
    ['fully escaped __proto__', '{"\\u005f\\u005f\\u0070roto__":{}}', 'payload.__proto__'],
  ])('refuses %s with 400', async (_name, payload, path) => {
    const response = await raw(VALIDATE, `{"context":"kyc","payload":${payload}}`);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('INVALID_BODY');
    expect(response.body.errors).toEqual([{ path, message: expect.any(String) }]);
  });

  it('accepts a plain constructor field', async () => {
    await ok(raw(VALIDATE, '{"context":"kyc","payload":{"constructor":"x","years":20}}'));
  });

  it('lets the last of duplicate keys win, as JSON.parse does', async () => {
    const body = await ok(raw(VALIDATE, '{"context":"kyc","payload":{"years":30,"years":3}}'));
    expect(body.isValid).toBe(false);
    const again = await ok(raw(VALIDATE, '{"context":"kyc","payload":{"years":3,"years":30}}'));
    expect(again.isValid).toBe(true);
  });

  it('names the item of a batch', async () => {
    const response = await raw(BATCH, '{"context":"kyc","items":[{"id":"a","payload":{}},{"id":"b","payload":{"n":[1e400]}}]}');
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ path: 'items[1].payload.n[0]', message: 'must be a finite number' }]);
  });

  it('applies to transactions', async () => {
    const response = await raw(TRANSACTION, `{"transactionId":"t","contexts":["kyc"],"payload":${nested(65)}}`);
    expect(response.status).toBe(400);
    expect(response.body.errors[0].path).toMatch(/^payload(\.a)+$/);
  });
});
