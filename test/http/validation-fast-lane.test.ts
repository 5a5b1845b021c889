/**
 * The validation fast lane (src/validation/fast-lane.ts) over real
 * HTTP. The same request is sent to the exact path, which the fast lane may
 * take, and with a query string, which only Fastify's route answers; the
 * client must not be able to tell the two apart, on the happy path and on
 * every refusal. The fast lane's counters say which path answered.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, ok } from '../support/expect-response.ts';
import { startTestApp, type TestApp, type TestRequestOptions, type TestResponse } from '../support/app.ts';
import { metricSample } from '../support/metrics.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const VALIDATE = '/api/v1/validation/validate';
/** Validator lookups answered from memory (GET /metrics). */
const CACHE_HITS = 'rules_validator_cache_hits_total';
/** The same route, reached only through Fastify (the fast lane takes the exact URL alone). */
const VALIDATE_VIA_FASTIFY = `${VALIDATE}?via=fastify`;
/** Headers that differ between any two responses. */
const PER_RESPONSE_HEADERS = new Set(['date', 'server-timing', 'ratelimit-remaining', 'ratelimit-reset']);

const RULES = [
  { code: 'AMOUNT_REQUIRED', name: 'Amount is required', fieldPath: 'amount', required: true, message: 'amount is required' },
  { code: 'AMOUNT_MAX', name: 'Amount limit', fieldPath: 'amount', expression: 'amount <= 10000', message: 'Amount {{ $value }} exceeds {{ $expected }}' },
  { code: 'ITEMS', name: 'Item quantities', forEach: 'items', fieldPath: 'items[].qty', expression: '$item.qty > 0', message: 'qty {{ $value }}' },
  { code: 'NAME', name: 'Name shape', fieldPath: 'name', schema: { type: 'string', minLength: 2, pattern: '^[A-Z]' } },
];

async function publishLoanRules(t: TestApp): Promise<void> {
  for (const rule of RULES) await ok(t.request('POST', '/api/v1/rules', { body: { context: 'loan', ...rule } }), 201);
  await ok(t.request('POST', '/api/v1/contexts/loan/publish'));
}

function stats(t: TestApp): { answered: number; handedBack: number } {
  const fastLane = t.app.internals.fastLane;
  if (fastLane === undefined) throw new Error('the fast lane is not installed');
  return { ...fastLane };
}

/**
 * Header names and the values that do not change from one response to the
 * next. Content-Length follows the body, whose executionTimeMs may have
 * one digit more on one path than on the other (a slow moment of the
 * machine): it must state the body's own length, and is then compared
 * like the other headers by name only.
 */
function stableHeaders(response: TestResponse): Record<string, string> {
  expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(response.text)));
  const kept: Record<string, string> = {};
  for (const [name, value] of response.headers) {
    if (name === 'content-length') kept[name] = 'the body\'s length';
    else if (!PER_RESPONSE_HEADERS.has(name)) kept[name] = value;
  }
  return kept;
}

/** The body with what differs per response (timing, request id) blanked. */
function stableBody(response: TestResponse): string {
  return response.text.replace(/"executionTimeMs":\d+/, '"executionTimeMs":0').replace(/"requestId":"[^"]*"/, '"requestId":""');
}

/** Writes `text` on a new connection and returns everything the server sent until it closed it. */
function rawExchange(baseUrl: string, text: string): Promise<string> {
  const { port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(text));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
}

/** Sends the request to both paths and returns the two answers, fast lane first. */
async function bothPaths(t: TestApp, options: TestRequestOptions): Promise<{ fast: TestResponse; fastify: TestResponse }> {
  const fast = await t.request('POST', VALIDATE, options);
  const fastify = await t.request('POST', VALIDATE_VIA_FASTIFY, options);
  return { fast, fastify };
}

describe('validation fast lane', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
    await publishLoanRules(t);
    // The fast lane takes only keys the auth hook has seen: this request introduces the admin key.
    await ok(t.request('POST', VALIDATE, { body: { context: 'loan', payload: { amount: 1 } } }));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers a known key itself, with the bytes and headers of Fastify\'s route', async () => {
    const payloads = [
      { amount: 500, name: 'Ada', items: [{ qty: 1 }] },
      { amount: 20000, name: 'x', items: [{ qty: 1 }, { qty: 0 }, { qty: -2 }] },
      { name: 'Ada', note: 'caf\u00e9 \u2028 \ud83d\ude00' },
    ];
    for (const payload of payloads) {
      const before = stats(t);
      const { fast, fastify } = await bothPaths(t, { body: { context: 'loan', payload } });
      expect(stats(t)).toEqual({ answered: before.answered + 1, handedBack: before.handedBack });
      expect(fast.status).toBe(200);
      expect(fastify.status).toBe(200);
      expect(stableBody(fast)).toBe(stableBody(fastify));
      expect(stableHeaders(fast)).toEqual(stableHeaders(fastify));
      expect(fast.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(fast.headers.get('server-timing')).toMatch(/^total;dur=\d+\.\d{3}$/);
      expect(Number(fast.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
      expect(Number.isInteger(fast.body.executionTimeMs)).toBe(true);
    }
    const failing = (await t.request('POST', VALIDATE, { body: { context: 'loan', payload: payloads[1] } })).body;
    expect(failing.isValid).toBe(false);
    expect(failing.failures.map((f: { ruleCode: string; fieldPath: string }) => `${f.ruleCode}:${f.fieldPath}`)).toEqual([
      'AMOUNT_MAX:amount', 'ITEMS:items[1].qty', 'ITEMS:items[2].qty', 'NAME:name', 'NAME:name',
    ]);
  });

  it('hands every refusal to Fastify, which answers it exactly as on its own path', async () => {
    const deep: Record<string, unknown> = {};
    let level = deep;
    for (let i = 0; i < 70; i++) level = (level.next = {});
    const cases: { name: string; request: TestRequestOptions; status: number; code: string }[] = [
      { name: 'not JSON', request: { rawBody: '{"context":"loan","payload":' }, status: 400, code: 'INVALID_BODY' },
      { name: 'not UTF-8', request: { rawBody: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]) }, status: 400, code: 'INVALID_BODY' },
      { name: 'prototype poisoning', request: { rawBody: '{"context":"loan","payload":{"__proto__":{"isAdmin":true}}}' }, status: 400, code: 'INVALID_BODY' },
      { name: 'payload not an object', request: { body: { context: 'loan', payload: [1, 2] } }, status: 400, code: 'INVALID_BODY' },
      { name: 'payload missing', request: { body: { context: 'loan' } }, status: 400, code: 'INVALID_BODY' },
      { name: 'context malformed', request: { body: { context: '../loan', payload: {} } }, status: 400, code: 'INVALID_BODY' },
      { name: 'payload too deep', request: { body: { context: 'loan', payload: deep } }, status: 400, code: 'INVALID_BODY' },
      { name: 'number out of range', request: { rawBody: '{"context":"loan","payload":{"amount":1e400}}' }, status: 400, code: 'INVALID_BODY' },
      { name: 'unknown context', request: { body: { context: 'nope', payload: {} } }, status: 404, code: 'CONTEXT_NOT_FOUND' },
    ];
    for (const { name, request, status, code } of cases) {
      const before = stats(t);
      const { fast, fastify } = await bothPaths(t, request);
      expect(stats(t), name).toEqual({ answered: before.answered, handedBack: before.handedBack + 1 });
      await expectProblem(Promise.resolve(fast), status, code);
      expect(stableBody(fast), name).toBe(stableBody(fastify));
      expect(stableHeaders(fast), name).toEqual(stableHeaders(fastify));
      expect(fast.headers.get('server-timing'), name).toMatch(/^total;dur=\d+\.\d{3}$/);
    }
  });

  it('counts one cache hit per validation, also for an evaluation large enough to run under the deadline', async () => {
    const answered = stats(t);
    let hits = await metricSample(t, CACHE_HITS);
    await ok(t.request('POST', VALIDATE, { body: { context: 'loan', payload: { amount: 1 } } }));
    expect(stats(t).answered).toBe(answered.answered + 1);
    expect(await metricSample(t, CACHE_HITS)).toBe(hits + 1);
    // 2000 items make the ITEMS rule's estimated cost (n^2) too large to run unguarded: the
    // route's core runs it within the evaluation deadline, on the fast lane as on Fastify's path.
    const large = { amount: 1, name: 'Ada', items: Array.from({ length: 2000 }, () => ({ qty: 1 })) };
    const before = stats(t);
    hits = await metricSample(t, CACHE_HITS);
    const body = await ok(t.request('POST', VALIDATE, { body: { context: 'loan', payload: large } }));
    expect(body.isValid).toBe(true);
    expect(stats(t)).toEqual({ answered: before.answered + 1, handedBack: before.handedBack });
    expect(await metricSample(t, CACHE_HITS)).toBe(hits + 1);
    const viaFastify = await ok(t.request('POST', VALIDATE_VIA_FASTIFY, { body: { context: 'loan', payload: large } }));
    expect(viaFastify.isValid).toBe(true);
    expect(await metricSample(t, CACHE_HITS)).toBe(hits + 2);
  });

  it('leaves alone what it does not take: other keys, content types and URLs', async () => {
    const before = stats(t);
    const body = { context: 'loan', payload: { amount: 1 } };
    await expectProblem(t.request('POST', VALIDATE, { body, key: 'rk_never_issued_aaaaaaaaaaaaaaaa' }), 401, 'UNAUTHORIZED');
    await expectProblem(t.request('POST', VALIDATE, { body, tenant: t.otherTenantId }), 401, 'UNAUTHORIZED');
    await expectProblem(t.request('POST', VALIDATE, { body, tenant: null }), 401, 'UNAUTHORIZED');
    await expectProblem(t.request('POST', VALIDATE, { body, contentType: 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    await expectProblem(t.request('POST', VALIDATE, { body, contentType: 'application/json whatever' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    await expectProblem(t.request('PUT', VALIDATE, { body }), 404, 'NOT_FOUND');
    await expectProblem(t.request('POST', VALIDATE, { body, headers: { 'content-encoding': 'gzip' } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(stats(t)).toEqual(before);
    // A JSON type the body parser accepts, written differently: the fast lane takes it too.
    await ok(t.request('POST', VALIDATE, { body, headers: { 'content-type': 'Application/JSON; charset=UTF-8' } }));
    expect(stats(t)).toEqual({ answered: before.answered + 1, handedBack: before.handedBack });
  });

  it('reads header names in any letter case, and answers repeated headers as Fastify does', async () => {
    const body = JSON.stringify({ context: 'loan', payload: { amount: 1, name: 'Ada' } });
    const send = (url: string, headerLines: string[]): Promise<string> => rawExchange(t.baseUrl, `POST ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\n`
      + `${headerLines.join('\r\n')}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    const before = stats(t);
    const answer = await send(VALIDATE, ['Content-Type: application/json', `X-API-Key: ${t.adminKey}`, `X-Tenant-ID: ${t.tenantId}`]);
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer).toContain('"isValid":true');
    expect(stats(t)).toEqual({ answered: before.answered + 1, handedBack: before.handedBack });

    // Node joins a repeated X-API-Key into one value ("k, k"), which is no key: 401 on both paths.
    const twice = ['content-type: application/json', `x-api-key: ${t.adminKey}`, `X-Api-Key: ${t.adminKey}`, `x-tenant-id: ${t.tenantId}`];
    const [fast, fastify] = [await send(VALIDATE, twice), await send(VALIDATE_VIA_FASTIFY, twice)];
    expect(fast).toMatch(/^HTTP\/1\.1 401 /);
    const problem = (answer: string): string => answer.slice(answer.indexOf('\r\n\r\n')).replace(/"requestId":"[^"]*"/, '"requestId":""');
    expect(problem(fast)).toBe(problem(fastify));
    expect(problem(fast)).toContain('"code":"UNAUTHORIZED"');
    // Node keeps the first of two Content-Types: the fast lane takes it, and Fastify's path answers it alike.
    const twoTypes = ['content-type: application/json', 'content-type: text/plain', `x-api-key: ${t.adminKey}`, `x-tenant-id: ${t.tenantId}`];
    for (const url of [VALIDATE, VALIDATE_VIA_FASTIFY]) {
      const reply = await send(url, twoTypes);
      expect(reply, url).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(reply, url).toContain('"isValid":true');
    }
    expect(stats(t)).toEqual({ answered: before.answered + 2, handedBack: before.handedBack });
  });

  it('refuses a revoked key at once', async () => {
    const created = await ok(t.request('POST', '/api/v1/api-keys', { body: { name: 'short-lived', role: 'validator' } }), 201);
    const body = { context: 'loan', payload: { amount: 1 } };
    await ok(t.request('POST', VALIDATE, { body, key: created.key }));
    const before = stats(t);
    await ok(t.request('POST', VALIDATE, { body, key: created.key }));
    expect(stats(t).answered).toBe(before.answered + 1);
    await ok(t.request('DELETE', `/api/v1/api-keys/${created.id}`), 204);
    await expectProblem(t.request('POST', VALIDATE, { body, key: created.key }), 401, 'UNAUTHORIZED');
    expect(stats(t).answered).toBe(before.answered + 1);
  });

  it('survives a client that leaves halfway through its body', async () => {
    const { port } = new URL(t.baseUrl);
    const body = JSON.stringify({ context: 'loan', payload: { amount: 1, name: 'Ada' } });
    await new Promise<void>((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `POST ${VALIDATE} HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
          `x-api-key: ${t.adminKey}\r\nx-tenant-id: ${t.tenantId}\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
          () => {
            socket.destroy();
            resolve();
          },
        );
      });
      socket.on('error', reject);
    });
    const before = stats(t);
    const answer = await ok(t.request('POST', VALIDATE, { body: JSON.parse(body) }));
    expect(answer.isValid).toBe(true);
    expect(stats(t).answered).toBe(before.answered + 1);
  });
});

describe('validation fast lane and the rate limit', () => {
  let t: TestApp;
  const BUDGET = 6;

  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_MAX: String(BUDGET), RATE_LIMIT_WINDOW_MS: '600000' } });
    await publishLoanRules(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('spends one unit per request, and over budget Fastify answers 429', async () => {
    // Publishing spent 5 units of the budget of 6: one is left, taken by this request (which introduces the key).
    const first = await t.request('POST', VALIDATE, { body: { context: 'loan', payload: { amount: 1 } } });
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-remaining')).toBe('0');
    const before = stats(t);
    const over = await t.request('POST', VALIDATE, { body: { context: 'loan', payload: { amount: 1 } } });
    await expectProblem(Promise.resolve(over), 429, 'RATE_LIMITED');
    expect(over.headers.get('ratelimit-limit')).toBe(String(BUDGET));
    expect(over.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(stats(t)).toEqual({ answered: before.answered, handedBack: before.handedBack + 1 });
  });

  it('counts no cache hit for a request refused over budget, as Fastify\'s route (never reached) does not', async () => {
    const before = stats(t);
    const hits = await metricSample(t, CACHE_HITS);
    const over = await t.request('POST', VALIDATE, { body: { context: 'loan', payload: { amount: 1 } } });
    await expectProblem(Promise.resolve(over), 429, 'RATE_LIMITED');
    // The fast lane took it and looked the validator up before handing it back: the case that used to count.
    expect(stats(t)).toEqual({ answered: before.answered, handedBack: before.handedBack + 1 });
    expect(await metricSample(t, CACHE_HITS)).toBe(hits);
  });
});

describe('validation fast lane and a budget with room', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_MAX: '100', RATE_LIMIT_WINDOW_MS: '600000' } });
    await publishLoanRules(t);
    await ok(t.request('POST', VALIDATE, { body: { context: 'loan', payload: { amount: 1 } } }));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('counts each answered request once, as Fastify\'s hook does', async () => {
    const remaining: number[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await t.request('POST', VALIDATE, { body: { context: 'loan', payload: { amount: i } } });
      expect(response.status).toBe(200);
      remaining.push(Number(response.headers.get('ratelimit-remaining')));
    }
    const viaFastify = await t.request('POST', VALIDATE_VIA_FASTIFY, { body: { context: 'loan', payload: { amount: 9 } } });
    remaining.push(Number(viaFastify.headers.get('ratelimit-remaining')));
    expect(remaining.slice(1).map((r, i) => remaining[i] - r)).toEqual([1, 1, 1, 1]);
  });
});

describe('validation fast lane and a refusal after the validation ran', () => {
  let t: TestApp;

  beforeAll(async () => {
    // The smallest answer bound: 2000 failures of the ITEMS rule make an answer over it.
    t = await startTestApp({ env: { MAX_ANSWER_BYTES: '65536', RATE_LIMIT_MAX: '100', RATE_LIMIT_WINDOW_MS: '600000' } });
    await publishLoanRules(t);
    await ok(t.request('POST', VALIDATE, { body: { context: 'loan', payload: { amount: 1 } } }));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('hands the refusal to Fastify, which answers it without evaluating again, spending one unit and counting one hit', async () => {
    const payload = { amount: 1, name: 'Ada', items: Array.from({ length: 2000 }, () => ({ qty: 0 })) };
    const before = stats(t);
    const hits = await metricSample(t, CACHE_HITS);
    const first = await t.request('POST', VALIDATE, { body: { context: 'loan', payload: { amount: 1 } } });
    const { fast, fastify } = await bothPaths(t, { body: { context: 'loan', payload } });
    expect(stats(t)).toEqual({ answered: before.answered + 1, handedBack: before.handedBack + 1 });
    await expectProblem(Promise.resolve(fast), 400, 'INVALID_BODY');
    expect(fast.body.errors[0].message).toContain('MAX_ANSWER_BYTES');
    expect(stableBody(fast)).toBe(stableBody(fastify));
    expect(stableHeaders(fast)).toEqual(stableHeaders(fastify));
    expect(await metricSample(t, CACHE_HITS)).toBe(hits + 3);
    const remaining = [first, fast, fastify].map((response) => Number(response.headers.get('ratelimit-remaining')));
    expect([remaining[0] - remaining[1], remaining[1] - remaining[2]]).toEqual([1, 1]);
  });
});

describe('validation fast lane with the budget in Redis', () => {
  let t: TestApp;
  const BUDGET = 12;
  const prefix = `test-fast-lane-${randomBytes(6).toString('hex')}:`;

  beforeAll(async () => {
    t = await startTestApp({
      env: { REDIS_URL, REDIS_KEY_PREFIX: prefix, RATE_LIMIT_MAX: String(BUDGET), RATE_LIMIT_WINDOW_MS: '600000' },
    });
    await publishLoanRules(t);
  });
  afterAll(async () => {
    await t?.close();
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('waits for the shared counter, spends one unit per request, and leaves the 429 to Fastify', async () => {
    const body = { context: 'loan', payload: { amount: 1, name: 'Ada' } };
    const first = await t.request('POST', VALIDATE, { body });
    expect(first.status).toBe(200);
    const before = stats(t);
    const remaining = [Number(first.headers.get('ratelimit-remaining'))];
    while (remaining[remaining.length - 1] > 0) {
      const response = await t.request('POST', VALIDATE, { body });
      expect(response.status).toBe(200);
      expect(response.body.isValid).toBe(true);
      remaining.push(Number(response.headers.get('ratelimit-remaining')));
    }
    expect(remaining.slice(1).map((r, i) => remaining[i] - r)).toEqual(Array(remaining.length - 1).fill(1));
    expect(stats(t)).toEqual({ answered: before.answered + remaining.length - 1, handedBack: before.handedBack });
    const over = await t.request('POST', VALIDATE, { body });
    await expectProblem(Promise.resolve(over), 429, 'RATE_LIMITED');
    expect(over.headers.get('ratelimit-limit')).toBe(String(BUDGET));
    expect(stats(t).handedBack).toBe(before.handedBack + 1);
  });
});

describe('validation fast lane with request logging on', () => {
  let t: TestApp;
  const lines: string[] = [];

  beforeAll(async () => {
    t = await startTestApp({ env: { LOG_LEVEL: 'debug' }, logStream: { write: (line) => void lines.push(line) } });
    await publishLoanRules(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is off, so every request is logged by Fastify', async () => {
    expect(t.app.internals.fastLane).toBeUndefined();
    for (let i = 0; i < 2; i++) await ok(t.request('POST', VALIDATE, { body: { context: 'loan', payload: { amount: 1 } } }));
    const logged = lines.map((line) => JSON.parse(line)).filter((entry) => entry.req?.url === VALIDATE && entry.msg === 'incoming request');
    expect(logged).toHaveLength(2);
  });
});
