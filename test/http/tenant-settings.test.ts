/**
 * Tenant settings over the API (docs/api.md): an admin reads the tenant's
 * rate-limit budget and sampling state, gives the tenant a budget of its
 * own that the very next request is counted against, and puts it back on
 * the default; the CLI sees the same setting. Bodies that say neither a
 * budget nor a reset are refused with the field at fault; a validator key
 * gets 403, and one tenant's setting leaves the other's alone. (Other
 * instances following within a second: test/sync/instances.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../src/cli/run-command.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { expectProblem, ok } from '../support/expect-response.ts';

const VALIDATE = '/api/v1/validation/validate';
/** Sampling as a tenant that never set it sees it: off, with the default bounds. */
const SAMPLING_OFF = { rate: 0, maxSamples: 10_000, retentionHours: 168 };

describe('tenant settings', () => {
  let t: TestApp;
  let validatorKey: string;

  const budgetSeen = async (tenant?: string, key?: string) => {
    const response = await t.request('POST', VALIDATE, { body: { context: 'orders', payload: { amount: 1 } }, tenant, key });
    return { status: response.status, limit: Number(response.headers.get('ratelimit-limit')) };
  };

  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_MAX: '500', RATE_LIMIT_WINDOW_MS: '60000' } });
    await ok(t.request('POST', '/api/v1/rules', { body: { context: 'orders', code: 'LIMIT', name: 'Limit', expression: 'amount <= 10' } }), 201);
    await ok(t.request('POST', '/api/v1/contexts/orders/publish'));
    validatorKey = (await ok(t.request('POST', '/api/v1/api-keys', { body: { name: 'v', role: 'validator' } }), 201)).key;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('shows the default budget, and sampling off, for a tenant without one of its own', async () => {
    expect(await ok(t.request('GET', '/api/v1/tenant'))).toEqual({
      id: t.tenantId,
      rateLimit: { max: 500, windowMs: 60000, default: true },
      sampling: SAMPLING_OFF,
      corsOrigins: [],
    });
  });

  it('counts the very next request against a budget set over the API, and shows it', async () => {
    expect((await budgetSeen()).limit).toBe(500);
    expect(await ok(t.request('PUT', '/api/v1/tenant/rate-limit', { body: { max: 400, windowMs: 60000 } })))
      .toEqual({ max: 400, windowMs: 60000, default: false });
    expect((await budgetSeen()).limit).toBe(400);
    expect((await ok(t.request('GET', '/api/v1/tenant'))).rateLimit).toEqual({ max: 400, windowMs: 60000, default: false });
    // The CLI reads what the API wrote.
    const shown = await runCommand({ kind: 'rate-limit-show', tenantId: t.tenantId }, t.storage, t.config);
    expect(shown.json).toMatchObject({ max: 400, windowMs: 60000, override: true });
  });

  it('refuses requests past a small budget at once, every request of the tenant counting (the admin\'s too)', async () => {
    const other = { tenant: t.otherTenantId, key: t.otherAdminKey };
    await ok(t.request('PUT', '/api/v1/tenant/rate-limit', { ...other, body: { max: 2, windowMs: 1000 } }));
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await t.request('GET', '/api/v1/tenant', other)).status);
    expect(statuses).toContain(429);
    // This tenant's budget is its own.
    expect((await budgetSeen()).status).toBe(200);
    // Once the one-second window has passed, the admin can put the default back.
    let reset = await t.request('PUT', '/api/v1/tenant/rate-limit', { ...other, body: { default: true } });
    for (let tries = 0; reset.status === 429 && tries < 50; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      reset = await t.request('PUT', '/api/v1/tenant/rate-limit', { ...other, body: { default: true } });
    }
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body).toEqual({ max: 500, windowMs: 60000, default: true });
  });

  it('puts the tenant back on the default budget with { default: true }', async () => {
    expect(await ok(t.request('PUT', '/api/v1/tenant/rate-limit', { body: { default: true } })))
      .toEqual({ max: 500, windowMs: 60000, default: true });
    expect(await budgetSeen()).toEqual({ status: 200, limit: 500 });
  });

  it("leaves the other tenant's budget alone", async () => {
    await ok(t.request('PUT', '/api/v1/tenant/rate-limit', { body: { max: 450, windowMs: 60000 } }));
    const other = await ok(t.request('GET', '/api/v1/tenant', { tenant: t.otherTenantId, key: t.otherAdminKey }));
    expect(other).toEqual({ id: t.otherTenantId, rateLimit: { max: 500, windowMs: 60000, default: true }, sampling: SAMPLING_OFF, corsOrigins: [] });
    await ok(t.request('PUT', '/api/v1/tenant/rate-limit', { body: { default: true } }));
  });

  it.each([
    ['nothing', {}, 'max'],
    ['max without windowMs', { max: 5 }, 'windowMs'],
    ['windowMs without max', { windowMs: 1000 }, 'max'],
    ['default with a budget', { default: true, max: 5, windowMs: 1000 }, 'default'],
    ['default false', { default: false }, 'default'],
    ['a max of 0', { max: 0, windowMs: 1000 }, 'max'],
    ['a window under 100 ms', { max: 5, windowMs: 99 }, 'windowMs'],
    ['a fractional max', { max: 1.5, windowMs: 1000 }, 'max'],
    ['an unknown field', { max: 5, windowMs: 1000, burst: 3 }, 'burst'],
  ])('refuses %s with 400 naming the field, and changes nothing', async (_name, body, path) => {
    const problem = await expectProblem(t.request('PUT', '/api/v1/tenant/rate-limit', { body }), 400, 'INVALID_BODY');
    expect(problem.errors.map((error: { path: string }) => error.path)).toContain(path);
    expect((await ok(t.request('GET', '/api/v1/tenant'))).rateLimit.default).toBe(true);
  });

  it('refuses a validator key with 403', async () => {
    await expectProblem(t.request('GET', '/api/v1/tenant', { key: validatorKey }), 403, 'FORBIDDEN');
    await expectProblem(t.request('PUT', '/api/v1/tenant/rate-limit', { key: validatorKey, body: { max: 1, windowMs: 1000 } }), 403, 'FORBIDDEN');
    expect((await ok(t.request('GET', '/api/v1/tenant'))).rateLimit.default).toBe(true);
  });
});
