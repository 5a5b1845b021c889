/**
 * Rate limiting (docs/api.md) on the real server: each tenant spends its
 * own budget (a batch or a transaction once), every response says how much
 * is left, the 429 is the same problem+json as every other error, a stored
 * override replaces the default, and requests refused by authentication
 * are limited per client address without touching any tenant's budget.
 * Shared counters in Redis are in rate-limit-redis.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressBucket } from '../../src/rate-limit/client-address.ts';
import { TUNING } from '../../src/tuning.ts';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.ts';

const BAD_KEY = 'rk_not_a_key_of_anyone_0123456789abcdef';

function budget(response: TestResponse): { limit: number; remaining: number; reset: number } {
  return {
    limit: Number(response.headers.get('ratelimit-limit')),
    remaining: Number(response.headers.get('ratelimit-remaining')),
    reset: Number(response.headers.get('ratelimit-reset')),
  };
}

function expectRateLimited(response: TestResponse, windowSeconds: number): void {
  expect(response.status, response.text).toBe(429);
  expect(response.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
  expect(response.body).toEqual({
    type: '/problems/rate-limited',
    title: 'Too many requests',
    status: 429,
    detail: expect.any(String),
    code: 'RATE_LIMITED',
    requestId: expect.any(String),
  });
  const retryAfter = response.headers.get('retry-after');
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(windowSeconds);
  expect(response.headers.get('ratelimit-remaining')).toBe('0');
}

describe('addressBucket', () => {
  it.each([
    ['192.0.2.7', '192.0.2.7'],
    ['::ffff:192.0.2.7', '192.0.2.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002::9', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:DB8::2', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1:2:3:4', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.1', '64:ff9b:0:0::/64'],
  ])('counts %s as %s', (ip, bucket) => {
    expect(addressBucket(ip)).toBe(bucket);
  });
});

describe('a tenant budget of 6 per minute', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_MAX: '6', RATE_LIMIT_WINDOW_MS: '60000' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('counts every request once, batches and transactions included, then answers 429', async () => {
    const steps: Array<[string, string, unknown, number]> = [
      ['POST', '/api/v1/rules', { context: 'loan', code: 'MAX', name: 'Max', fieldPath: 'amount', expression: 'amount <= 100' }, 201],
      ['POST', '/api/v1/contexts/loan/publish', undefined, 200],
      ['POST', '/api/v1/validation/validate-batch', { context: 'loan', items: [1, 2, 300].map((amount) => ({ id: `i${amount}`, payload: { amount } })) }, 200],
      ['POST', '/api/v1/validation/validate-transaction', { transactionId: 't1', contexts: ['loan'], payload: { amount: 5 } }, 200],
      ['POST', '/api/v1/validation/validate', { context: 'loan', payload: 'not an object' }, 400],
      ['GET', '/api/v1/no-such-route', undefined, 404],
    ];
    for (const [index, [method, path, body, status]] of steps.entries()) {
      const response = await t.request(method, path, { body });
      expect(response.status, `${method} ${path}: ${response.text}`).toBe(status);
      // Errors carry the headers too: a client learns its budget from any answer.
      expect(budget(response)).toEqual({ limit: 6, remaining: 5 - index, reset: expect.any(Number) });
      expect(budget(response).reset).toBeGreaterThanOrEqual(1);
      expect(budget(response).reset).toBeLessThanOrEqual(60);
    }
    const refused = await t.request('POST', '/api/v1/validation/validate', { body: { context: 'loan', payload: { amount: 1 } } });
    expectRateLimited(refused, 60);
    expect(refused.body.detail).toMatch(/budget/);
    expect(budget(refused).limit).toBe(6);
    // Still refused, whatever the operation.
    expectRateLimited(await t.request('GET', '/api/v1/rules'), 60);
  });

  it('leaves another tenant its whole budget', async () => {
    const response = await t.request('GET', '/api/v1/rules', { key: t.otherAdminKey, tenant: t.otherTenantId });
    expect(response.status).toBe(200);
    expect(budget(response)).toMatchObject({ limit: 6, remaining: 5 });
  });

  it('does not limit or label routes outside /api/v1', async () => {
    for (const path of ['/health/live', '/metrics', '/docs/json']) {
      const response = await t.request('GET', path, { key: null, tenant: null });
      expect(response.status, path).toBe(200);
      expect(response.headers.get('ratelimit-limit'), path).toBeNull();
    }
  });

  it('counts refusals in rules_rate_limited_total', async () => {
    const metrics = await t.request('GET', '/metrics', { key: null, tenant: null });
    expect(metrics.text).toMatch(/^rules_rate_limited_total\{scope="tenant"\} 2$/m);
  });
});

describe('a per-tenant override', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_MAX: '100' } });
    // Stored before the tenants' first requests, as the CLI would.
    await t.storage.tenants.setRateLimit(t.tenantId, { max: 2, windowMs: 60_000 });
    await t.storage.tenants.setRateLimit(t.otherTenantId, { max: 1, windowMs: 1_000 });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('replaces the default budget for that tenant only', async () => {
    const first = await t.request('GET', '/api/v1/rules');
    expect(budget(first)).toMatchObject({ limit: 2, remaining: 1 });
    expect((await t.request('GET', '/api/v1/rules')).status).toBe(200);
    expectRateLimited(await t.request('GET', '/api/v1/rules'), 60);
  });

  it('uses the override window: a spent one-second budget is back once the window ends', async () => {
    const other = { key: t.otherAdminKey, tenant: t.otherTenantId };
    const first = await t.request('GET', '/api/v1/rules', other);
    expect(budget(first)).toMatchObject({ limit: 1, remaining: 0 });
    let response = await t.request('GET', '/api/v1/rules', other);
    if (response.status === 429) {
      expectRateLimited(response, 1);
      while (response.status === 429) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        response = await t.request('GET', '/api/v1/rules', other);
      }
    }
    expect(response.status).toBe(200);
    expect(budget(response)).toMatchObject({ limit: 1, remaining: 0 });
  });

  it('is raised for the first request after an idle spell, not only for the one after it', async () => {
    // The tenant's budget of 2 is spent (the first test); an operator raises it, and the tenant stays idle past the TTL.
    expectRateLimited(await t.request('GET', '/api/v1/rules'), 60);
    await t.storage.tenants.setRateLimit(t.tenantId, { max: 1000, windowMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, TUNING.policyTtlMs.value + 500));
    const first = await t.request('GET', '/api/v1/rules');
    expect(first.status, first.text).toBe(200);
    expect(budget(first).limit).toBe(1000);
  });

  it('is lowered at once on PostgreSQL (its change notice), else once read: the first request after the idle spell admitted on the cached budget, the next refused', async () => {
    await t.storage.tenants.setRateLimit(t.tenantId, { max: 3, windowMs: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, TUNING.policyTtlMs.value + 500));
    const first = await t.request('GET', '/api/v1/rules');
    if (process.env.DATABASE_URL !== undefined) {
      // On PostgreSQL the change's notice had the budget read again at once: no request is admitted on the old one.
      expect(budget(first).limit).toBe(3);
      expectRateLimited(first, 60);
      return;
    }
    // The embedded database sends no notices: the first request still admits on the cached budget of 1000
    // while the new one is read in the background.
    expect(first.status).toBe(200);
    const next = await t.request('GET', '/api/v1/rules');
    expect(budget(next).limit).toBe(3);
    expectRateLimited(next, 60);
  });
});

describe('requests refused by authentication', () => {
  let t: TestApp;
  beforeAll(async () => {
    // TRUST_PROXY lets the test speak for several client addresses.
    t = await startTestApp({ env: { RATE_LIMIT_MAX: '3', TRUST_PROXY: 'true' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  const from = (address: string): Record<string, string> => ({ 'x-forwarded-for': address });

  it('are limited per client address and never spend the tenant they name', async () => {
    const refusals: Array<{ key?: string | null; tenant?: string | null }> = [
      { key: BAD_KEY },
      { key: null },
      { tenant: t.otherTenantId },
    ];
    for (const [index, credentials] of refusals.entries()) {
      const response = await t.request('GET', '/api/v1/rules', { ...credentials, headers: from('203.0.113.7') });
      expect(response.status).toBe(401);
      expect(budget(response)).toMatchObject({ limit: 3, remaining: 2 - index });
    }
    const flooded = await t.request('POST', '/api/v1/validation/validate', {
      key: BAD_KEY,
      body: { context: 'loan', payload: {} },
      headers: from('203.0.113.7'),
    });
    expectRateLimited(flooded, 60);
    expect(flooded.body.detail).toMatch(/unauthenticated/);

    // A valid key from the same address: the tenant's budget is untouched.
    const valid = await t.request('GET', '/api/v1/rules', { headers: from('203.0.113.7') });
    expect(valid.status).toBe(200);
    expect(budget(valid)).toMatchObject({ limit: 3, remaining: 2 });

    // Another address has its own budget.
    expect((await t.request('GET', '/api/v1/rules', { key: BAD_KEY, headers: from('203.0.113.8') })).status).toBe(401);
  });

  it('count the addresses of one IPv6 /64 together', async () => {
    for (const address of ['2001:db8:5:6::1', '2001:db8:5:6::2', '2001:db8:5:6:aaaa::3']) {
      expect((await t.request('GET', '/api/v1/rules', { key: BAD_KEY, headers: from(address) })).status).toBe(401);
    }
    expectRateLimited(await t.request('GET', '/api/v1/rules', { key: BAD_KEY, headers: from('2001:db8:5:6::ffff') }), 60);
    expect((await t.request('GET', '/api/v1/rules', { key: BAD_KEY, headers: from('2001:db8:5:7::1') })).status).toBe(401);
  });

  it('are counted in rules_rate_limited_total by address', async () => {
    const metrics = await t.request('GET', '/metrics', { key: null, tenant: null });
    expect(metrics.text).toMatch(/^rules_rate_limited_total\{scope="address"\} 2$/m);
    expect(metrics.text).toMatch(/^rules_rate_limited_total\{scope="tenant"\} 0$/m);
  });
});

describe('without TRUST_PROXY', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_MAX: '2' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('ignores X-Forwarded-For, so a client cannot escape its budget by inventing addresses', async () => {
    for (const address of ['198.51.100.1', '198.51.100.2']) {
      expect((await t.request('GET', '/api/v1/rules', { key: BAD_KEY, headers: { 'x-forwarded-for': address } })).status).toBe(401);
    }
    expectRateLimited(await t.request('GET', '/api/v1/rules', { key: BAD_KEY, headers: { 'x-forwarded-for': '198.51.100.3' } }), 60);
  });
});
