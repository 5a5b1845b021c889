/**
 * Heavy management operations per tenant (docs/api.md, "Heavy operations"),
 * on the real server and database: a tenant may have OPERATIONS_PER_TENANT
 * (default 2) of them waiting or running in a process; one more is refused
 * with 429 RATE_LIMITED, Retry-After and the operation named, while another
 * tenant's are not, and the tenant's turn is free again once an operation
 * is answered or has failed.
 *
 * To hold reports mid-way without timing luck, the test delays the sample
 * store's reads (the real store, reading the real database) until it opens
 * a gate: a report's replay, on a management thread, asks for its samples
 * page by page and waits for them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { expectProblem, ok } from '../support/expect-response.ts';

const IMPACT = '/api/v1/contexts/loans/impact';
const RUN_TESTS = '/api/v1/contexts/loans/tests/run';

describe('heavy operations, a few at a time per tenant', () => {
  let t: TestApp;
  let openGate: () => void = () => {};
  let gate: Promise<void> = Promise.resolve();
  let reads = 0;

  beforeAll(async () => {
    // Two threads, so both reports of the tenant run (and read) at once.
    t = await startTestApp({ env: { POOL_THREADS: '2', OPERATIONS_PER_TENANT: '2' } });
    await ok(t.request('POST', '/api/v1/rules', { body: { context: 'loans', code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100' } }), 201);
    await ok(t.request('POST', '/api/v1/contexts/loans/publish'));
    await t.storage.samples.insertMany([{
      tenantId: t.tenantId, context: 'loans', recordedAt: new Date(), rulesetVersion: 1, isValid: true, failures: [], payload: { amount: 50 },
    }]);
    const samples = t.storage.samples;
    const read = samples.newestTextsBefore.bind(samples);
    samples.newestTextsBefore = async (...args) => {
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
    await expect.poll(() => reads, { timeout: 20_000 }).toBeGreaterThanOrEqual(count);
  };

  it('refuses a third heavy operation of the tenant while two run, with Retry-After and the operation named', async () => {
    closeGate();
    const before = reads;
    const first = t.request('POST', IMPACT);
    const second = t.request('POST', IMPACT);
    await readsReach(before + 2);
    const third = await t.request('POST', RUN_TESTS);
    const problem = await expectProblem(Promise.resolve(third), 429, 'RATE_LIMITED');
    expect(problem.detail).toMatch(/^The stored-test run was not started: the tenant already has 2 heavy management operation/);
    expect(problem.detail).toContain('OPERATIONS_PER_TENANT');
    expect(third.headers.get('retry-after')).toBe('1');
    const report = await t.request('POST', IMPACT);
    expect((await expectProblem(Promise.resolve(report), 429, 'RATE_LIMITED')).detail).toMatch(/^The impact report was not started/);
    openGate();
    expect(await ok(first)).toMatchObject({ samples: 1, unchanged: 1 });
    expect(await ok(second)).toMatchObject({ samples: 1, unchanged: 1 });
    // Both answered: the tenant's turns are free again.
    expect(await ok(t.request('POST', RUN_TESTS))).toMatchObject({ passed: 0, failed: 0, truncated: false });
  });

  it('lets another tenant run its operations meanwhile', async () => {
    closeGate();
    const before = reads;
    const first = t.request('POST', IMPACT);
    const second = t.request('POST', IMPACT);
    await readsReach(before + 2);
    // The other tenant has no such context: it is answered 404, not refused as busy.
    await expectProblem(t.request('POST', IMPACT, { tenant: t.otherTenantId, key: t.otherAdminKey }), 404, 'CONTEXT_NOT_FOUND');
    await expectProblem(t.request('POST', RUN_TESTS, { tenant: t.otherTenantId, key: t.otherAdminKey }), 404, 'CONTEXT_NOT_FOUND');
    openGate();
    await ok(first);
    await ok(second);
  });

  it('frees the turn when an operation fails, as when it is answered', async () => {
    for (let i = 0; i < 3; i++) await expectProblem(t.request('POST', IMPACT, { body: { target: 99 } }), 404, 'NOT_FOUND');
    expect(await ok(t.request('POST', IMPACT, { body: { target: 1 } }))).toMatchObject({ samples: 1, unchanged: 1 });
    expect(await ok(t.request('POST', IMPACT))).toMatchObject({ samples: 1 });
  });
});
