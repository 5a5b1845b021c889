/**
 * One impact report at a time per tenant (docs/api.md, "Impact on recorded
 * traffic"), on the real server and database: while a tenant's report is
 * running, another report of that tenant is refused with 429 RATE_LIMITED
 * and Retry-After, another tenant's is not, and the slot is free again once
 * the report is answered, or has failed.
 *
 * To hold a report mid-way without timing luck, the test delays the sample
 * store's reads (the real store, reading the real database) until it opens
 * a gate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { expectProblem, ok } from '../support/expect-response.ts';

const IMPACT = '/api/v1/contexts/loans/impact';

describe('impact reports, one at a time per tenant', () => {
  let t: TestApp;
  let openGate: () => void = () => {};
  let gate: Promise<void> = Promise.resolve();
  let reads = 0;

  beforeAll(async () => {
    t = await startTestApp();
    await ok(t.request('POST', '/api/v1/rules', { body: { context: 'loans', code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100' } }), 201);
    await ok(t.request('POST', '/api/v1/contexts/loans/publish'));
    await t.storage.samples.insertMany([{
      tenantId: t.tenantId, context: 'loans', recordedAt: new Date(), rulesetVersion: 1, isValid: true, failures: [], payload: { amount: 50 },
    }]);
    const samples = t.storage.samples;
    const read = samples.newestBefore.bind(samples);
    samples.newestBefore = async (...args) => {
      reads++;
      await gate;
      return read(...args);
    };
  });
  afterAll(async () => {
    openGate();
    await t?.close();
  });

  /** Makes the next reads wait until `openGate()`. */
  const closeGate = () => {
    gate = new Promise((resolve) => {
      openGate = resolve;
    });
  };
  /** Resolves once the store has been asked for samples `count` times in all. */
  const readsReach = async (count: number) => {
    await expect.poll(() => reads, { timeout: 10_000 }).toBeGreaterThanOrEqual(count);
  };

  it('refuses a second report of the tenant while one runs, with Retry-After', async () => {
    closeGate();
    const before = reads;
    const first = t.request('POST', IMPACT);
    await readsReach(before + 1);
    const second = await t.request('POST', IMPACT);
    const problem = await expectProblem(Promise.resolve(second), 429, 'RATE_LIMITED');
    expect(problem.detail).toContain('already running');
    expect(second.headers.get('retry-after')).toBe('1');
    openGate();
    expect(await ok(first)).toMatchObject({ samples: 1, unchanged: 1 });
  });

  it('lets another tenant report meanwhile', async () => {
    closeGate();
    const before = reads;
    const first = t.request('POST', IMPACT);
    await readsReach(before + 1);
    // The other tenant has no such context: it is answered 404, not refused as busy.
    await expectProblem(t.request('POST', IMPACT, { tenant: t.otherTenantId, key: t.otherAdminKey }), 404, 'CONTEXT_NOT_FOUND');
    openGate();
    await ok(first);
  });

  it('frees the slot when a report fails, as when it is answered', async () => {
    await expectProblem(t.request('POST', IMPACT, { body: { target: 99 } }), 404, 'NOT_FOUND');
    expect(await ok(t.request('POST', IMPACT, { body: { target: 1 } }))).toMatchObject({ samples: 1, unchanged: 1 });
    expect(await ok(t.request('POST', IMPACT))).toMatchObject({ samples: 1 });
  });
});
