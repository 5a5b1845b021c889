/**
 * Stored test cases of a context (docs/api.md), on the real server: an
 * admin stores them, reads them back and runs them against the draft,
 * the live rules or a numbered ruleset version; a publish, a rule publish and a rollback run them first
 * and are refused with 409 TESTS_FAILED, nothing changed, while one fails,
 * unless forced, and then the version's note says so. Bad test lists are refused with the place at fault; a
 * validator key gets 403, and each tenant's tests are its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { expectProblem, ok } from '../support/expect-response.ts';

const VALIDATE = '/api/v1/validation/validate';
const TESTS = '/api/v1/contexts/loans/tests';

const small = { name: 'small loan passes', payload: { amount: 50 }, expect: { isValid: true } };
const big = { name: 'big loan fails the limit', payload: { amount: 500 }, expect: { isValid: false, failures: ['LIMIT'] } };

describe('stored tests', () => {
  let t: TestApp;
  let validatorKey: string;
  let limitId: string;

  const validate = async (amount: number) =>
    (await ok(t.request('POST', VALIDATE, { body: { context: 'loans', payload: { amount } }, key: validatorKey }))).isValid as boolean;
  const liveVersion = async () =>
    (await ok(t.request('GET', '/api/v1/contexts'))).items.find((c: { context: string }) => c.context === 'loans').rulesetVersion as number;
  const editLimit = async (expression: string) => {
    const rule = await ok(t.request('GET', `/api/v1/rules/${limitId}`));
    await ok(t.request('PUT', `/api/v1/rules/${limitId}`, { body: { ...rule, expression } }));
  };

  beforeAll(async () => {
    t = await startTestApp({ env: { MAX_PAYLOAD_DEPTH: '8' } });
    limitId = (await ok(t.request('POST', '/api/v1/rules', {
      body: { context: 'loans', code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100', message: 'too much' },
    }), 201)).id;
    await ok(t.request('POST', '/api/v1/contexts/loans/publish'));
    validatorKey = (await ok(t.request('POST', '/api/v1/api-keys', { body: { name: 'v', role: 'validator' } }), 201)).key;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('has none until some are stored, then answers them in order', async () => {
    expect(await ok(t.request('GET', TESTS))).toEqual({ tests: [] });
    expect(await ok(t.request('PUT', TESTS, { body: { tests: [small, big] } }))).toEqual({ tests: [small, big] });
    expect(await ok(t.request('GET', TESTS))).toEqual({ tests: [small, big] });
  });

  it('runs them against the live rules and the draft, saying how each fared', async () => {
    expect(await ok(t.request('POST', `${TESTS}/run`, { body: { target: 'live' } }))).toEqual({
      target: 'live', passed: 2, failed: 0, truncated: false,
      results: [
        { name: small.name, ok: true, isValid: true, failures: [] },
        { name: big.name, ok: true, isValid: false, failures: ['LIMIT'] },
      ],
    });
    await editLimit('amount <= 1000');
    // Without a body, the draft: the edit is not live, and the big loan now passes.
    const draft = await ok(t.request('POST', `${TESTS}/run`));
    expect(draft).toMatchObject({ target: 'draft', passed: 1, failed: 1 });
    expect(draft.results[1]).toEqual({ name: big.name, ok: false, isValid: true, failures: [] });
    expect((await ok(t.request('POST', `${TESTS}/run`, { body: { target: 'live' } }))).failed).toBe(0);
  });

  it('refuses a context publish while a test fails, and changes nothing', async () => {
    const before = await liveVersion();
    const problem = await expectProblem(t.request('POST', '/api/v1/contexts/loans/publish'), 409, 'TESTS_FAILED');
    expect(problem.detail).toContain('?force=true');
    expect(problem.errors).toEqual([
      { path: 'tests[1]', message: 'test "big loan fails the limit" expects invalid, failing LIMIT; got valid: LIMIT did not fail' },
    ]);
    expect(await liveVersion()).toBe(before);
    expect(await validate(500)).toBe(false);
    expect((await ok(t.request('GET', `/api/v1/rules/${limitId}`))).status).toBe('draft');
  });

  it('names, per failing test, the codes expected that did not fail and those that failed unexpectedly', async () => {
    const rule = (code: string, expression: string) => ({ context: 'mixed', code, name: code, fieldPath: 'amount', expression, message: code });
    await ok(t.request('POST', '/api/v1/rules', { body: rule('MAX', 'amount <= 100') }), 201);
    await ok(t.request('POST', '/api/v1/rules', { body: rule('MIN', 'amount >= 10') }), 201);
    const tests = [
      { name: 'in range', payload: { amount: 50 }, expect: { isValid: true } },
      { name: 'too big', payload: { amount: 500 }, expect: { isValid: false, failures: ['MIN'] } },
      { name: 'too small', payload: { amount: 5 }, expect: { isValid: true } },
    ];
    await ok(t.request('PUT', '/api/v1/contexts/mixed/tests', { body: { tests } }));
    const problem = await expectProblem(t.request('POST', '/api/v1/contexts/mixed/publish'), 409, 'TESTS_FAILED');
    expect(problem.errors).toEqual([
      { path: 'tests[1]', message: 'test "too big" expects invalid, failing MIN; got invalid, failing MAX: MIN did not fail; MAX failed unexpectedly' },
      { path: 'tests[2]', message: 'test "too small" expects valid; got invalid, failing MIN: MIN failed unexpectedly' },
    ]);
  });

  it('refuses a rule publish the same way', async () => {
    await expectProblem(t.request('POST', `/api/v1/rules/${limitId}/publish`), 409, 'TESTS_FAILED');
    expect(await validate(500)).toBe(false);
  });

  it('publishes anyway with ?force=true', async () => {
    const before = await liveVersion();
    const published = await ok(t.request('POST', '/api/v1/contexts/loans/publish?force=true', { body: { note: 'raise the limit' } }));
    expect(published.rulesetVersion).toBe(before + 1);
    expect(await validate(500)).toBe(true);
    // The version's note says that it went live past failing tests, and which.
    const [latest] = (await ok(t.request('GET', '/api/v1/contexts/loans/versions'))).items;
    expect(latest).toMatchObject({ rulesetVersion: before + 1, action: 'publish' });
    expect(latest.note).toBe('raise the limit\nPublished with ?force=true although 1 stored test(s) failed: tests[1].');
  });

  it('runs them against a numbered ruleset version, which a later publish leaves as it was', async () => {
    const live = await liveVersion();
    // Version 1 has the limit at 100, under which the big loan fails as the test expects.
    expect(await ok(t.request('POST', `${TESTS}/run`, { body: { target: 1 } }))).toMatchObject({ target: 1, passed: 2, failed: 0 });
    const latest = await ok(t.request('POST', `${TESTS}/run`, { body: { target: live, explain: true } }));
    expect(latest).toMatchObject({ target: live, passed: 1, failed: 1 });
    expect(latest.results[1]).toMatchObject({ name: big.name, ok: false, isValid: true, failures: [] });
    expect(latest.results[1].trace).toEqual([expect.objectContaining({ ruleCode: 'LIMIT', outcome: 'passed', value: 500 })]);
    await expectProblem(t.request('POST', `${TESTS}/run`, { body: { target: live + 5 } }), 404, 'NOT_FOUND');
    await expectProblem(t.request('POST', '/api/v1/contexts/nowhere/tests/run', { body: { target: 1 } }), 404, 'CONTEXT_NOT_FOUND');
  });

  it.each([
    ['zero', 0], ['a fraction', 1.5], ['a number in a string', '1'], ['an unknown word', 'published'],
  ])('refuses a target that is %s with 400 naming it', async (_name, target) => {
    const problem = await expectProblem(t.request('POST', `${TESTS}/run`, { body: { target } }), 400, 'INVALID_BODY');
    expect(JSON.stringify(problem.errors)).toContain('target');
  });

  it('refuses a rollback that would fail a test, and allows it forced', async () => {
    // Now the tests expect what is live: 500 passes.
    await ok(t.request('PUT', TESTS, { body: { tests: [small, { ...big, expect: { isValid: true } }] } }));
    const before = await liveVersion();
    await expectProblem(t.request('POST', '/api/v1/contexts/loans/rollback', { body: { rulesetVersion: 1 } }), 409, 'TESTS_FAILED');
    expect(await liveVersion()).toBe(before);
    expect(await validate(500)).toBe(true);
    await ok(t.request('POST', '/api/v1/contexts/loans/rollback?force=true', { body: { rulesetVersion: 1 } }));
    expect(await validate(500)).toBe(false);
  });

  it('publishes once the tests pass', async () => {
    await editLimit('amount <= 2000');
    await ok(t.request('POST', `/api/v1/rules/${limitId}/publish`));
    expect(await validate(1500)).toBe(true);
    // An empty list removes the tests.
    expect(await ok(t.request('PUT', TESTS, { body: { tests: [] } }))).toEqual({ tests: [] });
    expect(await ok(t.request('GET', TESTS))).toEqual({ tests: [] });
  });

  it.each([
    ['a name used twice', { tests: [small, { ...big, name: small.name }] }, 'tests[1].name'],
    ['failures expected of a passing payload', { tests: [{ ...small, expect: { isValid: true, failures: ['LIMIT'] } }] }, 'tests[0].expect.failures'],
    ['a payload deeper than MAX_PAYLOAD_DEPTH', { tests: [{ ...small, payload: { a: { b: { c: { d: { e: { f: { g: { h: { i: 1 } } } } } } } } } }] }, 'tests[0].payload'],
    ['a payload that is not an object', { tests: [{ ...small, payload: [1] }] }, 'tests[0].payload'],
    ['no expectation', { tests: [{ name: 'x', payload: {} }] }, 'tests[0].expect'],
    ['a malformed rule code', { tests: [{ ...big, expect: { isValid: false, failures: ['no spaces allowed'] } }] }, 'tests[0].expect.failures[0]'],
    ['an unknown field', { tests: [{ ...small, only: true }] }, 'tests[0].only'],
    ['more than 1000 tests', { tests: Array.from({ length: 1001 }, (_, i) => ({ ...small, name: `t${i}` })) }, 'tests'],
  ])('refuses %s with 400 naming the place, and keeps the tests stored', async (_name, body, path) => {
    await ok(t.request('PUT', TESTS, { body: { tests: [small] } }));
    const problem = await expectProblem(t.request('PUT', TESTS, { body }), 400, 'INVALID_BODY');
    expect(problem.errors.map((error: { path: string }) => error.path).join(' ')).toContain(path);
    expect(await ok(t.request('GET', TESTS))).toEqual({ tests: [small] });
  });

  it('answers 404 for a run without rules to run against', async () => {
    await expectProblem(t.request('POST', '/api/v1/contexts/empty/tests/run'), 404, 'CONTEXT_NOT_FOUND');
    await ok(t.request('POST', '/api/v1/rules', { body: { context: 'unpublished', code: 'A', name: 'A', expression: 'true' } }), 201);
    await expectProblem(t.request('POST', '/api/v1/contexts/unpublished/tests/run', { body: { target: 'live' } }), 404, 'CONTEXT_NOT_FOUND');
    expect((await ok(t.request('POST', '/api/v1/contexts/unpublished/tests/run'))).target).toBe('draft');
  });

  it('keeps each tenant to its own tests', async () => {
    const other = { tenant: t.otherTenantId, key: t.otherAdminKey };
    expect(await ok(t.request('GET', TESTS, other))).toEqual({ tests: [] });
    await ok(t.request('PUT', TESTS, { ...other, body: { tests: [big] } }));
    expect(await ok(t.request('GET', TESTS))).toEqual({ tests: [small] });
    await expectProblem(t.request('POST', `${TESTS}/run`, other), 404, 'CONTEXT_NOT_FOUND');
  });

  it('refuses a validator key with 403', async () => {
    await expectProblem(t.request('GET', TESTS, { key: validatorKey }), 403, 'FORBIDDEN');
    await expectProblem(t.request('PUT', TESTS, { key: validatorKey, body: { tests: [] } }), 403, 'FORBIDDEN');
    await expectProblem(t.request('POST', `${TESTS}/run`, { key: validatorKey }), 403, 'FORBIDDEN');
    expect(await ok(t.request('GET', TESTS))).toEqual({ tests: [small] });
  });
});
