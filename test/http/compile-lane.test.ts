/**
 * Live validators compile on the compile lane's threads (src/pool/compile-lane.ts),
 * never on the event loop, and never behind another tenant's heavy
 * management operation:
 * - a publish of a large context compiles on a thread (the pool's metrics
 *   count a `compile` task) while another tenant's validations are answered;
 * - a cold context's compile runs while the only management thread is
 *   busy with another tenant's stored-test run, and its validation is
 *   answered before that run ends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RuleContent } from '../../src/storage/types.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ok } from '../support/expect-response.ts';
import { metricSample } from '../support/metrics.ts';

const VALIDATE = '/api/v1/validation/validate';
const LARGE = 1500;
// Long enough for the compile lane to start a thread (from the sources, under tsx) while the run goes on.
const BUDGET_MS = 15_000;

function compiles(t: TestApp, outcome = 'done'): Promise<number> {
  return metricSample(t, `rules_pool_tasks_total{kind="compile",outcome="${outcome}"}`).catch(() => 0);
}

function rule(i: number): RuleContent {
  return {
    name: `Limit ${i}`, severity: 'Error', required: false, priority: 0, enabled: true, tags: [],
    fieldPath: 'amount', expression: `$value <= ${1_000_000 + i} && matches(code, "^(a|a${i})*b$")`,
  };
}

describe('the compile lane', () => {
  let t: TestApp;
  const other = () => ({ key: t.otherAdminKey, tenant: t.otherTenantId });

  beforeAll(async () => {
    t = await startTestApp({
      env: { POOL_THREADS: '1', OPERATION_TIME_BUDGET_MS: String(BUDGET_MS), MAX_BODY_BYTES: String(16 * 1024 * 1024) },
    });
    // Tenant A: a large context, saved through storage (which does not compile), and a slow one with stored tests.
    for (let i = 0; i < LARGE; i++) await t.storage.rules.create(t.tenantId, 'large', `L${i}`, rule(i), LARGE);
    await ok(t.request('POST', '/api/v1/rules', {
      body: { context: 'slow', code: 'PAIRS', name: 'pairs', fieldPath: 'a', expression: 'a.every(x => a.every(y => y >= 0))' },
    }), 201);
    await ok(t.request('POST', '/api/v1/contexts/slow/publish'));
    const payload = { a: Array.from({ length: 8000 }, (_, i) => i) };
    const tests = Array.from({ length: 100 }, (_, i) => ({ name: `pairs ${i}`, payload, expect: { isValid: true } }));
    await ok(t.request('PUT', '/api/v1/contexts/slow/tests', { body: { tests } }));
    // Tenant B: a small context, validated meanwhile.
    await ok(t.request('POST', '/api/v1/rules', { ...other(), body: { context: 'steady', code: 'A', name: 'a', fieldPath: 'amount', expression: 'amount > 0' } }), 201);
    await ok(t.request('POST', '/api/v1/contexts/steady/publish', other()));
  }, 300_000);
  afterAll(async () => {
    await t?.close();
  });

  it('publishes a large context compiled on a thread while another tenant is answered', async () => {
    const before = await compiles(t);
    let publishSettled = false;
    const publish = t.request('POST', '/api/v1/contexts/large/publish').finally(() => {
      publishSettled = true;
    });
    let answeredMeanwhile = 0;
    while (!publishSettled) {
      const validation = await t.request('POST', VALIDATE, { ...other(), body: { context: 'steady', payload: { amount: 1 } } });
      expect(validation.status).toBe(200);
      if (!publishSettled) answeredMeanwhile++;
      // Paced, as a caller's traffic is: the publish's compile runs niced, so on busy cores it takes long
      // enough for a tight loop to spend the tenant's rate limit (RATE_LIMIT_MAX a minute).
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const published = await ok(publish);
    expect(published.published).toHaveLength(LARGE);
    expect(answeredMeanwhile, 'no validation of the other tenant was answered during the publish').toBeGreaterThan(0);
    // The publish's compile ran as a task of the compile lane, once (the real run reuses it).
    expect(await compiles(t)).toBe(before + 1);

    const validated = await ok(t.request('POST', VALIDATE, { body: { context: 'large', payload: { amount: 2_000_000, code: 'ab' } } }));
    expect(validated).toMatchObject({ isValid: false, totalRulesEvaluated: LARGE });
    expect(validated.failures).toHaveLength(LARGE);
    const source = await t.request('GET', '/api/v1/contexts/large/validator');
    expect(source.status).toBe(200);
    expect(source.text).toContain('meta("L1499", "Limit 1499"');
  }, 120_000);

  it('compiles a cold context while the only management thread runs another tenant\'s stored tests', async () => {
    // A restart empties the validator cache: tenant B's context is cold.
    await t.restart();
    const before = await compiles(t);
    let runSettled = false;
    const run = t.request('POST', '/api/v1/contexts/slow/tests/run', { body: { target: 'live' } }).finally(() => {
      runSettled = true;
    });
    await expect.poll(() => metricSample(t, 'rules_pool_tasks_running'), { timeout: 10_000 }).toBe(1);
    const validation = await t.request('POST', VALIDATE, { ...other(), body: { context: 'steady', payload: { amount: -1 } } });
    expect(validation.status).toBe(200);
    expect(validation.body).toMatchObject({ isValid: false, failures: [expect.objectContaining({ ruleCode: 'A' })] });
    expect(runSettled, 'the cold context was compiled only after the stored-test run had ended').toBe(false);
    expect(await compiles(t)).toBe(before + 1);
    // The run's own end depends on the machine: all its tests within the budget (a fast one), stopped at
    // the budget, or, on a loaded machine, at a test past the evaluation deadline.
    expect([200, 409, 400]).toContain((await run).status);
  }, 120_000);
});
