/**
 * Heavy management work runs on the management threads, within one budget
 * per operation (docs/api.md, "Heavy operations"), on the real server and
 * database:
 * - another tenant's validations are answered WHILE a tenant's stored-test
 *   run on a quadratic rule is still running (the test process is the
 *   server's process: were the run on the event loop, no validation could
 *   be answered before it ends);
 * - that run stops at its time budget: 409 naming the budget and the test
 *   it had reached, nothing changed, and the thread free again at once;
 * - a run whose results would be larger than the answer budget answers the
 *   first results with `truncated: true`, and counts every test;
 * - an import's checks, a rule check and a diff are tasks of the threads;
 * - a publish runs its stored tests there too, within the budget, and past
 *   it publishes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { expectProblem, ok } from '../support/expect-response.ts';
import { metricSample } from '../support/metrics.ts';

const BUDGET_MS = 4000;
const ANSWER_BYTES = 65_536;
const VALIDATE = '/api/v1/validation/validate';
const QUADRATIC_ITEMS = 4_000;
const TESTS = 600;

/**
 * A payload whose array the quadratic rule walks n^2 times, three checks a
 * step. At 4,000 items a test takes about 15-30 ms, far below the
 * evaluation deadline (1 s) even on a loaded machine, where the deadline
 * runs in wall time and management threads run at the lowest priority
 * (9,000 items and one check went past it in a CI run with the whole suite
 * beside it), and 600 of them take more than the budget even on a fast,
 * quiet machine (134 ran in the 4 s on a loaded one).
 */
function quadraticPayload(n: number): { a: number[] } {
  return { a: Array.from({ length: n }, (_, i) => i) };
}

describe('the management pool', () => {
  let t: TestApp;
  const other = () => ({ key: t.otherAdminKey, tenant: t.otherTenantId });

  beforeAll(async () => {
    t = await startTestApp({
      env: { OPERATION_TIME_BUDGET_MS: String(BUDGET_MS), OPERATION_ANSWER_MAX_BYTES: String(ANSWER_BYTES), MAX_BODY_BYTES: String(32 * 1024 * 1024) },
    });
    // Tenant A: a rule whose cost is quadratic in the payload's array, and TESTS tests of it.
    await ok(t.request('POST', '/api/v1/rules', {
      body: { context: 'slow', code: 'PAIRS', name: 'pairs', fieldPath: 'a', expression: 'a.every(x => a.every(y => y >= 0 && y + x >= 0 && y * 2 >= y))' },
    }), 201);
    await ok(t.request('POST', '/api/v1/contexts/slow/publish'));
    const tests = Array.from({ length: TESTS }, (_, i) => ({ name: `pairs ${i}`, payload: quadraticPayload(QUADRATIC_ITEMS), expect: { isValid: true } }));
    await ok(t.request('PUT', '/api/v1/contexts/slow/tests', { body: { tests } }));
    // Tenant B: a small context, validated meanwhile.
    await ok(t.request('POST', '/api/v1/rules', { ...other(), body: { context: 'steady', code: 'A', name: 'a', fieldPath: 'amount', expression: 'amount > 0' } }), 201);
    await ok(t.request('POST', '/api/v1/contexts/steady/publish', other()));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers another tenant\'s validations while a tenant\'s quadratic stored-test run is still running', async () => {
    let runSettled = false;
    const run = t.request('POST', '/api/v1/contexts/slow/tests/run', { body: { target: 'live' } }).finally(() => {
      runSettled = true;
    });
    await expect.poll(() => metricSample(t, 'rules_pool_tasks_running'), { timeout: 10_000 }).toBe(1);
    for (let i = 0; i < 20; i++) {
      const validation = await t.request('POST', VALIDATE, { ...other(), body: { context: 'steady', payload: { amount: i + 1 } } });
      expect(validation.status).toBe(200);
      expect(validation.body.isValid).toBe(true);
      expect(runSettled, `validation ${i} was answered only after the run had ended`).toBe(false);
    }
    const problem = await expectProblem(run, 409, 'LIMIT_EXCEEDED');
    expect(problem.detail).toMatch(
      /^The stored-test run stopped after 4 s, its time budget \(OPERATION_TIME_BUDGET_MS\), at test \d+ of 600; nothing was changed\.$/,
    );
  });

  it('changes nothing when a run stops at its budget, and frees its thread at once', async () => {
    const before = await ok(t.request('GET', '/api/v1/contexts/slow/tests'));
    const stopped = await expectProblem(t.request('POST', '/api/v1/contexts/slow/tests/run', { body: { target: 'live' } }), 409, 'LIMIT_EXCEEDED');
    expect(stopped.detail).toContain('time budget');
    expect(await ok(t.request('GET', '/api/v1/contexts/slow/tests'))).toEqual(before);
    expect(await metricSample(t, 'rules_pool_tasks_total{kind="storedTests",outcome="over_time"}')).toBeGreaterThanOrEqual(2);
    // The tenant's next operation runs (its turn and the thread were given back).
    const tested = await ok(t.request('POST', '/api/v1/rules/test', { body: { context: 'slow', payload: quadraticPayload(10) } }));
    expect(tested).toMatchObject({ isValid: true });
  });

  it('answers the first results with `truncated: true` when they would be larger than the answer budget, counting every test', async () => {
    const rules = Array.from({ length: 30 }, (_, i) => ({ code: `R${i}`, name: `rule ${i}`, fieldPath: 'amount', expression: `amount > ${i}` }));
    for (const rule of rules) await ok(t.request('POST', '/api/v1/rules', { ...other(), body: { context: 'wide', ...rule } }), 201);
    const tests = Array.from({ length: 60 }, (_, i) => ({ name: `t${i}`, payload: { amount: i }, expect: { isValid: i > 29 } }));
    await ok(t.request('PUT', '/api/v1/contexts/wide/tests', { ...other(), body: { tests } }));

    const plain = await ok(t.request('POST', '/api/v1/contexts/wide/tests/run', { ...other() }));
    expect(plain).toMatchObject({ target: 'draft', passed: 60, failed: 0, truncated: false });
    expect(plain.results).toHaveLength(60);

    const explained = await t.request('POST', '/api/v1/contexts/wide/tests/run', { ...other(), body: { explain: true } });
    expect(explained.status).toBe(200);
    expect(explained.body).toMatchObject({ target: 'draft', passed: 60, failed: 0, truncated: true });
    const kept = explained.body.results as Array<{ name: string; trace: unknown[] }>;
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(60);
    expect(kept.map((result) => result.name)).toEqual(tests.slice(0, kept.length).map((test) => test.name));
    expect(kept[0].trace).toHaveLength(30);
    expect(Buffer.byteLength(JSON.stringify(kept))).toBeLessThanOrEqual(ANSWER_BYTES);
  });

  it('checks an import\'s file, a rule and a diff on a management thread too', async () => {
    const done = (kind: string) => metricSample(t, `rules_pool_tasks_total{kind="${kind}",outcome="done"}`).catch(() => 0);
    const refusedDryRuns = () => metricSample(t, 'rules_pool_tasks_total{kind="importDryRun",outcome="refused"}').catch(() => 0);
    const before = {
      importDryRun: await done('importDryRun'), refusedDryRuns: await refusedDryRuns(), ruleCheck: await done('ruleCheck'), diff: await done('diff'),
    };
    const file = { format: 'rules/v1', rules: [{ code: 'LIMIT', name: 'limit', fieldPath: 'amount', expression: 'amount <=' }] };
    const refused = await expectProblem(t.request('POST', '/api/v1/contexts/files/import?dryRun=true', { body: file }), 400, 'INVALID_BODY');
    expect(refused.errors[0].path).toBe('rules[0].expression');
    file.rules[0].expression = 'amount <= 100';
    expect(await ok(t.request('POST', '/api/v1/contexts/files/import?dryRun=true', { body: file }))).toMatchObject({ dryRun: true, create: ['LIMIT'] });
    const checked = await ok(t.request('POST', '/api/v1/rules/check', { body: { rule: { code: 'X', name: 'x', fieldPath: 'a', expression: 'a >' } } }));
    expect(checked).toMatchObject({ ok: false, errors: [expect.objectContaining({ path: 'expression' })] });
    expect(await ok(t.request('GET', '/api/v1/contexts/slow/diff?from=live&to=draft'))).toMatchObject({ added: [], removed: [], changed: [] });
    // A dry run is one task, the file's refusal its outcome.
    expect(await done('importDryRun')).toBe(before.importDryRun + 1);
    expect(await refusedDryRuns()).toBe(before.refusedDryRuns + 1);
    expect(await done('ruleCheck')).toBe(before.ruleCheck + 1);
    expect(await done('diff')).toBe(before.diff + 1);
  });

  it('runs a publish\'s stored tests on a management thread, within the time budget, and publishes nothing past it', async () => {
    const live = async () => ((await ok(t.request('GET', '/api/v1/contexts'))).items as Array<{ context: string; rulesetVersion: number }>)
      .find((item) => item.context === 'slow')?.rulesetVersion;
    const before = await live();
    await ok(t.request('POST', '/api/v1/rules', { body: { context: 'slow', code: 'SIZE', name: 'size', fieldPath: 'a', expression: 'len(a) >= 0' } }), 201);
    let publishSettled = false;
    const publish = t.request('POST', '/api/v1/contexts/slow/publish').finally(() => {
      publishSettled = true;
    });
    await expect.poll(() => metricSample(t, 'rules_pool_tasks_running'), { timeout: 10_000 }).toBe(1);
    const validation = await t.request('POST', VALIDATE, { ...other(), body: { context: 'steady', payload: { amount: 1 } } });
    expect(validation.status).toBe(200);
    expect(publishSettled, 'the validation was answered only after the publish had ended').toBe(false);
    const problem = await expectProblem(publish, 409, 'LIMIT_EXCEEDED');
    expect(problem.detail).toMatch(
      /^The stored-test run before going live stopped after 4 s, its time budget \(OPERATION_TIME_BUDGET_MS\), at test \d+ of 600; nothing was changed\.$/,
    );
    expect(await live()).toBe(before);
  });
});
