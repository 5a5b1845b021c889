/**
 * Hostile request bodies on every route that reads one (docs/api.md):
 * prototype poisoning (also spelled with \u escapes), 10,000-deep nesting,
 * a million-element array, 10 MB strings (with and without Content-Length),
 * 1e400, invalid UTF-8, wrong content types, empty and non-object bodies.
 * Each gets the problem+json the contract names, quickly, and changes
 * nothing. Meanwhile another tenant validates in a loop: every one of its
 * requests succeeds, and its latency and the process's memory are reported
 * (bounded generously, never compared tightly).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERRORS, type ErrorCode } from '../../src/errors.ts';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.ts';
import { BackgroundLoad, memorySample, report, summarize, UNLIMITED } from './support/measure.ts';

/** A hostile request may take this long at most (generous: a loaded 2-core CI machine). */
const BOUND_MS = 10_000;
const TEN_MB = 10 * 1024 * 1024;

let t: TestApp;
let ruleId: string;
let otherValidatorKey: string;
let background: BackgroundLoad;
let memoryBefore: ReturnType<typeof memorySample>;
const baseline: number[] = [];

/** A route that takes a JSON body, with one slot where hostile JSON goes. */
interface BodyRoute {
  name: string;
  method: 'POST' | 'PUT';
  path: () => string;
  /** The request body with `inner` (raw JSON) in the slot. */
  wrap: (inner: string) => string;
  /** Where the slot is, in error paths. */
  slot: string;
  /** The slot must hold an object (payloads), so other JSON values are 400 too. */
  objectSlot: boolean;
}

const BODY_ROUTES: BodyRoute[] = [
  {
    name: 'validate', method: 'POST', path: () => '/api/v1/validation/validate',
    wrap: (inner) => `{"context":"orders","payload":${inner}}`, slot: 'payload', objectSlot: true,
  },
  {
    name: 'validate-batch', method: 'POST', path: () => '/api/v1/validation/validate-batch',
    wrap: (inner) => `{"context":"orders","items":[{"id":"a","payload":{}},{"id":"b","payload":${inner}}]}`,
    slot: 'items[1].payload', objectSlot: true,
  },
  {
    name: 'validate-transaction', method: 'POST', path: () => '/api/v1/validation/validate-transaction',
    wrap: (inner) => `{"transactionId":"tx","contexts":["orders"],"payload":${inner}}`, slot: 'payload', objectSlot: true,
  },
  {
    name: 'rules/test', method: 'POST', path: () => '/api/v1/rules/test',
    wrap: (inner) => `{"context":"orders","payload":${inner}}`, slot: 'payload', objectSlot: true,
  },
  {
    name: 'create rule', method: 'POST', path: () => '/api/v1/rules',
    wrap: (inner) => `{"context":"orders","code":"HOSTILE","name":"h","expression":"true","expectedValue":${inner}}`,
    slot: 'expectedValue', objectSlot: false,
  },
  {
    name: 'replace rule', method: 'PUT', path: () => `/api/v1/rules/${ruleId}`,
    wrap: (inner) => `{"name":"Hijacked","version":1,"expression":"true","expectedValue":${inner}}`,
    slot: 'expectedValue', objectSlot: false,
  },
  {
    name: 'rollback', method: 'POST', path: () => '/api/v1/contexts/orders/rollback',
    wrap: (inner) => `{"rulesetVersion":${inner}}`, slot: 'rulesetVersion', objectSlot: false,
  },
  {
    name: 'create api key', method: 'POST', path: () => '/api/v1/api-keys',
    wrap: (inner) => `{"name":${inner},"role":"admin"}`, slot: 'name', objectSlot: false,
  },
];

/** Routes that take no body but still parse one if it is sent. */
const BODYLESS_ROUTES: { name: string; method: 'POST'; path: () => string }[] = [
  { name: 'publish rule', method: 'POST', path: () => `/api/v1/rules/${ruleId}/publish` },
  { name: 'publish context', method: 'POST', path: () => '/api/v1/contexts/orders/publish' },
  { name: 'recompile', method: 'POST', path: () => '/api/v1/contexts/orders/recompile' },
];

const ALL_ROUTES = [...BODY_ROUTES, ...BODYLESS_ROUTES];

const deepArrays = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);
const deepObjects = (levels: number): string => '{"a":'.repeat(levels) + '{}' + '}'.repeat(levels);

/** Sends a raw body and checks the bound; returns the response. */
async function send(
  route: { method: string; path: () => string },
  rawBody: string | Uint8Array | undefined,
  contentType?: string | null,
): Promise<TestResponse> {
  const started = performance.now();
  const response = await t.request(route.method, route.path(), rawBody === undefined ? { contentType } : { rawBody, contentType });
  const elapsed = performance.now() - started;
  expect(elapsed, `${route.method} ${route.path()} took ${elapsed} ms`).toBeLessThan(BOUND_MS);
  return response;
}

/** The problem+json of docs/api.md, with this status and code; returns the body. */
function expectProblem(response: TestResponse, code: ErrorCode): Record<string, any> {
  expect(response.status, response.text.slice(0, 500)).toBe(ERRORS[code].status);
  expect(response.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
  expect(response.body.code).toBe(code);
  // Nothing of the hostile input is echoed at length, and nothing internal leaks.
  expect(response.text.length).toBeLessThan(4096);
  for (const leak of [' at ', '.ts:', 'SELECT', 'stack']) expect(response.text).not.toContain(leak);
  return response.body;
}

function expectInvalidAt(response: TestResponse, path: string): void {
  const body = expectProblem(response, 'INVALID_BODY');
  const paths = (body.errors ?? []).map((error: { path: string }) => error.path);
  expect(paths.some((p: string) => p === path || p.startsWith(`${path}.`) || p.startsWith(`${path}[`)), `${JSON.stringify(paths)} at ${path}`).toBe(true);
}

async function validateOther(): Promise<TestResponse> {
  return t.request('POST', '/api/v1/validation/validate', {
    key: otherValidatorKey,
    tenant: t.otherTenantId,
    body: { context: 'steady', payload: { amount: 5, items: [{ qty: 1 }, { qty: 2 }] } },
  });
}

beforeAll(async () => {
  t = await startTestApp({ env: UNLIMITED });
  const rule = await t.request('POST', '/api/v1/rules', {
    body: { context: 'orders', code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100', message: 'over' },
  });
  ruleId = rule.body.id;
  expect((await t.request('POST', '/api/v1/contexts/orders/publish')).status).toBe(200);

  const other = { key: t.otherAdminKey, tenant: t.otherTenantId };
  await t.request('POST', '/api/v1/rules', {
    ...other,
    body: { context: 'steady', code: 'QTY', name: 'Qty', forEach: 'items', expression: '$item.qty > 0' },
  });
  expect((await t.request('POST', '/api/v1/contexts/steady/publish', other)).status).toBe(200);
  otherValidatorKey = (await t.request('POST', '/api/v1/api-keys', { ...other, body: { name: 'steady', role: 'validator' } })).body.key;

  // Warm up, then a quiet baseline of the other tenant's latency.
  for (let i = 0; i < 50; i++) await validateOther();
  for (let i = 0; i < 200; i++) {
    const started = performance.now();
    expect((await validateOther()).status).toBe(200);
    baseline.push(performance.now() - started);
  }
  memoryBefore = memorySample();
  background = new BackgroundLoad(async () => {
    const response = await validateOther();
    return response.status === 200 && response.body.isValid === true && response.body.totalRulesEvaluated === 1;
  }, 2);
  background.start();
});

afterAll(async () => {
  await background?.stop();
  await t?.close();
});

describe.each(BODY_ROUTES)('$method $name: hostile values in the body', (route) => {
  it.each([
    ['10,000 nested arrays', deepArrays(10_000)],
    ['10,000 nested objects', deepObjects(10_000)],
  ])('%s: 400 naming the slot, the process survives', async (_name, inner) => {
    expectInvalidAt(await send(route, route.wrap(inner)), route.slot);
  });

  it('1e400: 400 naming where it is', async () => {
    expectInvalidAt(await send(route, route.wrap('{"n":1e400}')), route.slot);
  });

  it.each([
    ['__proto__', '{"a":{"__proto__":{"polluted":1}}}', 'a.__proto__'],
    ['__proto__ spelled \\u005f_proto__', '{"a":{"\\u005f_proto__":{"polluted":1}}}', 'a.__proto__'],
    ['__proto__ spelled entirely in escapes', '{"\\u005f\\u005f\\u0070\\u0072\\u006f\\u0074\\u006f\\u005f\\u005f":{"polluted":1}}', '__proto__'],
    ['constructor.prototype', '{"constructor":{"prototype":{"polluted":1}}}', 'constructor.prototype'],
    ['constructor.prototype in escapes', '{"x":[{"\\u0063onstructor":{"prot\\u006ftype":{"polluted":1}}}]}', 'x[0].constructor.prototype'],
  ])('prototype poisoning with %s: 400 naming the key', async (_name, inner, where) => {
    const response = await send(route, route.wrap(inner));
    expectInvalidAt(response, `${route.slot}.${where}`);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.runIf(route.objectSlot).each([
    ['an array', '[]'],
    ['a string', '"constructor"'],
    ['a number', '42'],
    ['null', 'null'],
    ['a boolean', 'true'],
  ])('a payload that is %s: 400 naming it', async (_name, inner) => {
    expectInvalidAt(await send(route, route.wrap(inner)), route.slot);
  });
});

describe.each(ALL_ROUTES)('$method $name: hostile bodies', (route) => {
  const withBody = BODY_ROUTES.includes(route as BodyRoute);

  it.each([
    ['__proto__', '{"__proto__":{"polluted":1}}', '__proto__'],
    ['\\u005f_proto__', '{"\\u005f_proto__":{"polluted":1}}', '__proto__'],
    ['constructor.prototype', '{"constructor":{"prototype":{"polluted":1}}}', 'constructor.prototype'],
    ['\\u0063onstructor.prototype', '{"\\u0063onstructor":{"prototype":{"polluted":1}}}', 'constructor.prototype'],
  ])('top-level %s: 400 naming the key', async (_name, body, where) => {
    expectInvalidAt(await send(route, body), where);
  });

  it('invalid UTF-8: 400', async () => {
    const body = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xed, 0xa0, 0x80]), Buffer.from('"}')]);
    const problem = expectProblem(await send(route, body), 'INVALID_BODY');
    expect(problem.errors).toEqual([{ path: '', message: 'must be valid UTF-8' }]);
  });

  it.each([
    ['truncated', '{"context":'],
    ['NaN', '{"a":NaN}'],
    ['an unterminated string after an escape', '{"a":"\\ud800'],
  ])('malformed JSON (%s): 400', async (_name, body) => {
    expectProblem(await send(route, body), 'INVALID_BODY');
  });

  it('a 10 MB string: 413', async () => {
    expectProblem(await send(route, `{"name":"${'x'.repeat(TEN_MB)}"}`), 'PAYLOAD_TOO_LARGE');
  });

  it('a 10 MB body sent without Content-Length (chunked): 413', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(1024 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"name":"'));
        if (sent++ < 10) controller.enqueue(chunk);
        else {
          controller.enqueue(new TextEncoder().encode('"}'));
          controller.close();
        }
      },
    });
    const started = performance.now();
    const response = await fetch(t.baseUrl + route.path(), {
      method: route.method,
      body: stream,
      duplex: 'half',
      headers: { 'content-type': 'application/json', 'x-api-key': t.adminKey, 'x-tenant-id': t.tenantId },
    });
    const text = await response.text();
    expect(performance.now() - started).toBeLessThan(BOUND_MS);
    expect(response.status).toBe(413);
    expect(JSON.parse(text).code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('a 1,000,000-element array: 413 (MAX_BODY_BYTES bounds array sizes)', async () => {
    expectProblem(await send(route, `{"a":[${'0,'.repeat(999_999)}0]}`), 'PAYLOAD_TOO_LARGE');
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['multipart', 'multipart/form-data; boundary=x'],
    ['no Content-Type', null],
    ['JSON smuggled into a parameter', 'text/plain; content-type="application/json"'],
  ])('a JSON body as %s: 415', async (_name, contentType) => {
    expectProblem(await send(route, '{"context":"orders","payload":{}}', contentType), 'UNSUPPORTED_MEDIA_TYPE');
  });

  it.runIf(withBody).each([
    ['an empty body', ''],
    ['no body at all', undefined],
    ['an array', '[]'],
    ['a string', '"x"'],
    ['a number', '1'],
    ['null', 'null'],
    ['a boolean', 'false'],
  ])('%s where an object is required: 400', async (_name, body) => {
    expectProblem(await send(route, body), 'INVALID_BODY');
  });
});

describe('duplicate keys: the last one wins (docs/api.md, "Conventions")', () => {
  it.each([
    ['the failing value last', '{"context":"orders","payload":{"amount":1,"amount":1000}}', false],
    ['the passing value last', '{"context":"orders","payload":{"amount":1000,"amount":1}}', true],
    ['a duplicate context', '{"context":"no-such-context","payload":{"amount":1000},"context":"orders"}', false],
  ])('%s', async (_name, body, isValid) => {
    const response = await send(BODY_ROUTES[0], body);
    expect(response.status, response.text).toBe(200);
    expect(response.body.isValid).toBe(isValid);
    if (!isValid) expect(response.body.failures[0]).toMatchObject({ ruleCode: 'LIMIT', actualValue: 1000 });
  });

  it('applies inside batch items too', async () => {
    const response = await send(BODY_ROUTES[1], '{"context":"orders","items":[{"id":"a","id":"b","payload":{"amount":1,"amount":500}}]}');
    expect(response.status, response.text).toBe(200);
    expect(response.body.results).toEqual([{ id: 'b', isValid: false, failures: [{ ruleCode: 'LIMIT', message: 'over' }] }]);
  });
});

describe('accepted extremes stay cheap', () => {
  it('ignores a 10,000-deep unknown top-level field of a validation body without walking it', async () => {
    const response = await send(BODY_ROUTES[0], `{"context":"orders","payload":{"amount":1},"extra":${deepArrays(10_000)}}`);
    expect(response.status, response.text).toBe(200);
    expect(response.body.isValid).toBe(true);
  });

  it('validates a payload with a 400,000-element array just under MAX_BODY_BYTES', async () => {
    const body = `{"context":"orders","payload":{"amount":1,"a":[${'0,'.repeat(399_999)}0]}}`;
    expect(body.length).toBeLessThan(1024 * 1024);
    const response = await send(BODY_ROUTES[0], body);
    expect(response.status, response.text.slice(0, 300)).toBe(200);
    expect(response.body.isValid).toBe(true);
  });

  it('validates a payload exactly 64 levels deep', async () => {
    const response = await send(BODY_ROUTES[0], `{"context":"orders","payload":{"amount":1,"d":${deepArrays(63)}}}`);
    expect(response.status, response.text).toBe(200);
  });
});

describe('after the barrage', () => {
  it('changed nothing: the rule, the keys and the live ruleset are as before', async () => {
    const rule = await t.request('GET', `/api/v1/rules/${ruleId}`);
    expect(rule.body).toMatchObject({ name: 'Limit', version: 1, status: 'published', expression: 'amount <= 100' });
    const rules = await t.request('GET', '/api/v1/rules?status=all');
    expect(rules.body.items.map((r: { code: string }) => r.code)).toEqual(['LIMIT']);
    const keys = await t.request('GET', '/api/v1/api-keys');
    expect(keys.body.items.every((key: { name: string }) => !key.name.includes('['))).toBe(true);
    const contexts = await t.request('GET', '/api/v1/contexts');
    expect(contexts.body.items).toEqual([expect.objectContaining({ context: 'orders', rulesetVersion: 1 })]);
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
  });

  it("the other tenant's validations all succeeded meanwhile, with normal latency and memory", async () => {
    const { latencies, failures } = await background.stop();
    const memoryAfter = memorySample();
    const during = summarize(latencies);
    const quiet = summarize(baseline);
    report('hostile payloads: other tenant latency ms, quiet', quiet);
    report('hostile payloads: other tenant latency ms, during the barrage', during);
    report('hostile payloads: memory MiB before/after (after full GC)', { before: memoryBefore, after: memoryAfter });
    expect(failures).toEqual([]);
    expect(latencies.length).toBeGreaterThan(50);
    // Generous: a hostile request may hold the event loop for a moment
    // (parsing 1 MiB), never for seconds.
    expect(during.p50).toBeLessThan(1000);
    expect(during.max).toBeLessThan(BOUND_MS);
    expect(memoryAfter.heapUsedMiB - memoryBefore.heapUsedMiB).toBeLessThan(200);
  });
});
