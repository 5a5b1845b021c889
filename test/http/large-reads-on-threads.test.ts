/**
 * What a stored-test run and an import's dry run read from the database is
 * handed to a management thread as the database's JSON text, and the thread
 * parses it, builds the ruleset and (for the dry run) compares the file with
 * the context's rules, writing the answer itself (docs/architecture.md,
 * "Large reads"): on the real server and database (PGlite, and PostgreSQL
 * with DATABASE_URL), the answers are those the event loop gave before,
 * whatever the context holds (drafts, archived rules, no tests), and a
 * dry run is a task of its own on the threads (`kind="importDryRun"`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { expectProblem, ok } from '../support/expect-response.ts';
import { metricSample } from '../support/metrics.ts';

const MAX_RULES = 4;
const rule = (code: string, expression: string) => ({ code, name: code.toLowerCase(), fieldPath: 'amount', expression });

describe('large reads parsed on the management threads', () => {
  let t: TestApp;
  const done = (kind: string) => metricSample(t, `rules_pool_tasks_total{kind="${kind}",outcome="done"}`).catch(() => 0);

  beforeAll(async () => {
    t = await startTestApp({ env: { MAX_RULES_PER_CONTEXT: String(MAX_RULES) } });
    // Context "mixed": A published, B published then edited (a draft), C archived, D never published.
    const created = new Map<string, { id: string; version: number }>();
    for (const [code, expression] of [['A', 'amount > 0'], ['B', 'amount < 100'], ['C', 'amount != 7']]) {
      created.set(code, await ok(t.request('POST', '/api/v1/rules', { body: { context: 'mixed', ...rule(code, expression) } }), 201));
    }
    await ok(t.request('POST', '/api/v1/contexts/mixed/publish'));
    const b = created.get('B')!;
    await ok(t.request('PUT', `/api/v1/rules/${b.id}`, { body: { context: 'mixed', ...rule('B', 'amount < 50'), version: b.version } }));
    await ok(t.request('DELETE', `/api/v1/rules/${created.get('C')!.id}`), 204);
    await ok(t.request('POST', '/api/v1/rules', { body: { context: 'mixed', ...rule('D', 'amount != 3') } }), 201);
    await ok(t.request('PUT', '/api/v1/contexts/mixed/tests', {
      body: {
        tests: [
          { name: 'seventy', payload: { amount: 70 }, expect: { isValid: true } },
          { name: 'seven', payload: { amount: 7 }, expect: { isValid: true } },
          { name: 'three', payload: { amount: 3 }, expect: { isValid: true } },
        ],
      },
    }));
  });
  afterAll(async () => {
    await t?.close();
  });

  const run = (body: object) => ok(t.request('POST', '/api/v1/contexts/mixed/tests/run', { body }));
  const outcomes = (answer: Record<string, unknown>) => (answer.results as Array<{ name: string; failures: string[] }>)
    .map((result) => `${result.name}: ${result.failures.join(',') || 'valid'}`);

  it('runs the stored tests against the live rules and the drafts as they are stored', async () => {
    // Live: A and B (amount < 100); C's archiving took it out. Draft: A, B (amount < 50), D.
    expect(outcomes(await run({ target: 'live' }))).toEqual(['seventy: valid', 'seven: valid', 'three: valid']);
    expect(outcomes(await run({ target: 'draft' }))).toEqual(['seventy: B', 'seven: valid', 'three: D']);
    const explained = await run({ target: 'draft', explain: true }) as { results: Array<{ trace: Array<{ ruleCode: string }> }> };
    expect(explained.results[0].trace.map((step) => step.ruleCode).sort()).toEqual(['A', 'B', 'D']);
  });

  it('sends an answer larger than a piece (64 KiB) whole, with its Content-Length and no chunked encoding', async () => {
    const tests = Array.from({ length: 400 }, (_, i) => ({ name: `case ${i}`, payload: { amount: i }, expect: { isValid: i > 0 && i < 50 && i !== 3 && i !== 7 } }));
    await ok(t.request('PUT', '/api/v1/contexts/wide/tests', { body: { tests } }));
    for (const [code, expression] of [['A', 'amount > 0'], ['B', 'amount < 50'], ['C', 'amount != 7'], ['D', 'amount != 3']]) {
      await ok(t.request('POST', '/api/v1/rules', { body: { context: 'wide', ...rule(code, expression) } }), 201);
    }
    const response = await t.request('POST', '/api/v1/contexts/wide/tests/run', { body: { explain: true } });
    expect(response.status, response.text).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(response.headers.get('transfer-encoding')).toBeNull();
    const bytes = Buffer.byteLength(response.text);
    // Over one piece (ANSWER_PIECE_BYTES, 64 KiB), within the answer budget.
    expect(bytes).toBeGreaterThan(64 * 1024);
    expect(Number(response.headers.get('content-length'))).toBe(bytes);
    expect(response.body).toMatchObject({ target: 'draft', passed: 400, failed: 0, truncated: false });
    expect(response.body.results).toHaveLength(400);
    expect((response.body.results as Array<{ trace: unknown[] }>)[399].trace).toHaveLength(4);
  });

  it('runs a context without stored tests, and refuses one without rules as before', async () => {
    await ok(t.request('POST', '/api/v1/rules', { body: { context: 'untested', ...rule('A', 'amount > 0') } }), 201);
    expect(await run({})).toMatchObject({ target: 'draft' });
    expect(await ok(t.request('POST', '/api/v1/contexts/untested/tests/run', { body: {} }))).toEqual({
      target: 'draft', passed: 0, failed: 0, truncated: false, results: [],
    });
    const none = await expectProblem(t.request('POST', '/api/v1/contexts/empty/tests/run', { body: {} }), 404, 'CONTEXT_NOT_FOUND');
    expect(none.detail).toMatchSnapshot();
    const unpublished = await expectProblem(t.request('POST', '/api/v1/contexts/untested/tests/run', { body: { target: 'live' } }), 404, 'CONTEXT_NOT_FOUND');
    expect(unpublished.detail).toMatchSnapshot();
  });

  it('compares an import dry run with the context\'s rules on a management thread', async () => {
    const before = { dryRun: await done('importDryRun'), check: await done('importCheck') };
    const file = { format: 'rules/v1', rules: [rule('A', 'amount > 0'), rule('B', 'amount < 100'), rule('E', 'amount != 5')] };
    expect(await ok(t.request('POST', '/api/v1/contexts/mixed/import?dryRun=true&prune=true', { body: file }))).toEqual({
      dryRun: true, create: ['E'], update: ['B'], archive: ['D'], unchanged: ['A'], rulesetVersion: 2, warnings: [],
    });
    expect(await done('importDryRun')).toBe(before.dryRun + 1);
    expect(await done('importCheck')).toBe(before.check);
    // Nothing was changed.
    const rules = await ok(t.request('GET', '/api/v1/rules?context=mixed')) as { items: Array<{ code: string }> };
    expect(rules.items.map((item) => item.code).sort()).toEqual(['A', 'B', 'D']);
  });

  it('refuses a dry run past the rules a context may have as the import itself does', async () => {
    const file = { format: 'rules/v1', rules: [rule('A', 'amount > 0'), rule('E', 'amount != 5'), rule('F', 'amount != 6')] };
    const dry = await expectProblem(t.request('POST', '/api/v1/contexts/mixed/import?dryRun=true', { body: file }), 409, 'LIMIT_EXCEEDED');
    const real = await expectProblem(t.request('POST', '/api/v1/contexts/mixed/import', { body: file }), 409, 'LIMIT_EXCEEDED');
    expect(dry.detail).toBe(real.detail);
    expect(dry.detail).toMatchSnapshot();
    // With prune, D goes: 4 rules, within the limit.
    expect(await ok(t.request('POST', '/api/v1/contexts/mixed/import?dryRun=true&prune=true', { body: file }))).toMatchObject({
      create: ['E', 'F'], archive: ['B', 'D'], unchanged: ['A'],
    });
  });

  it('refuses a file that is not a rules file, in a dry run, as before', async () => {
    const problem = await expectProblem(
      t.request('POST', '/api/v1/contexts/mixed/import?dryRun=true', { body: { format: 'rules/v1', rules: [rule('A', 'amount >')] } }), 400, 'INVALID_BODY',
    );
    expect(problem.errors).toMatchSnapshot();
  });
});
