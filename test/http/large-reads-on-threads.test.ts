/**
 * What a stored-test run and an import's dry run read from the database is
 * handed to a management thread as the database's JSON text, and the thread
 * parses it, builds the ruleset and (for the dry run) compares the file with
 * the context's rules, writing the answer itself (docs/architecture.md,
 * "Large reads"): on the real server and database (PGlite, and PostgreSQL
 * with DATABASE_URL), the answers are those the event loop gave before,
 * whatever the context holds (drafts, archived rules, no tests), and a
 * dry run is a task of its own on the threads (`kind="importDryRun"`). A
 * real import is compared there too (`kind="importPrepare"`), and written
 * only if the context's rules are still those it was compared with.
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
    const before = { dryRun: await done('importDryRun'), prepare: await done('importPrepare') };
    const file = { format: 'rules/v1', rules: [rule('A', 'amount > 0'), rule('B', 'amount < 100'), rule('E', 'amount != 5')] };
    expect(await ok(t.request('POST', '/api/v1/contexts/mixed/import?dryRun=true&prune=true', { body: file }))).toEqual({
      dryRun: true, create: ['E'], update: ['B'], archive: ['D'], unchanged: ['A'], rulesetVersion: 2, warnings: [],
    });
    expect(await done('importDryRun')).toBe(before.dryRun + 1);
    expect(await done('importPrepare')).toBe(before.prepare);
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

  /** Makes each of the next `times` reads of an import's base edit rule A of "raced" right after it (as a concurrent PUT would). */
  const editAfterBaseReads = (times: number, rule0: { id: string; version: number }, expressions: string[]) => {
    const rules = t.storage.rules;
    const read = rules.importBaseText.bind(rules);
    let edits = 0;
    rules.importBaseText = async (...args) => {
      const base = await read(...args);
      if (edits < times) {
        const edited = await ok(t.request('PUT', `/api/v1/rules/${rule0.id}`, {
          body: { context: 'raced', ...rule('A', expressions[edits]), version: rule0.version },
        })) as { version: number };
        rule0.version = edited.version;
        edits++;
      }
      return base;
    };
    return () => {
      rules.importBaseText = read;
    };
  };
  const expressionOfA = async (id: string) => (await ok(t.request('GET', `/api/v1/rules/${id}`)) as { expression: string; version: number });

  it('writes a real import compared on a thread only if the context\'s rules are still those compared with, else compares again', async () => {
    const a = await ok(t.request('POST', '/api/v1/rules', { body: { context: 'raced', ...rule('A', 'amount > 0') } }), 201) as { id: string; version: number };
    const file = { format: 'rules/v1', rules: [rule('A', 'amount > 0'), rule('E', 'amount != 5')] };
    const before = await done('importPrepare');
    // A is edited after the first comparison read it: that comparison (A unchanged) is stale and not written.
    const restore = editAfterBaseReads(1, a, ['amount > 1']);
    try {
      expect(await ok(t.request('POST', '/api/v1/contexts/raced/import', { body: file }))).toMatchObject({
        dryRun: false, create: ['E'], update: ['A'], unchanged: [], archive: [],
      });
    } finally {
      restore();
    }
    expect(await done('importPrepare')).toBe(before + 2);
    expect(await expressionOfA(a.id)).toMatchObject({ expression: 'amount > 0', version: 3 });
  });

  it('answers 409 and writes nothing when the context\'s rules change after every comparison', async () => {
    const a = await ok(t.request('GET', '/api/v1/rules?context=raced')) as { items: Array<{ id: string; code: string; version: number }> };
    const ruleA = a.items.find((item) => item.code === 'A')!;
    const file = { format: 'rules/v1', rules: [rule('A', 'amount > 0'), rule('F', 'amount != 6')] };
    const restore = editAfterBaseReads(2, ruleA, ['amount > 2', 'amount > 3']);
    try {
      const problem = await expectProblem(t.request('POST', '/api/v1/contexts/raced/import', { body: file }), 409, 'CONFLICT');
      expect(problem.detail).toMatch(/rules changed while the file was compared/);
    } finally {
      restore();
    }
    const rules = await ok(t.request('GET', '/api/v1/rules?context=raced')) as { items: Array<{ code: string }> };
    expect(rules.items.map((item) => item.code).sort()).toEqual(['A', 'E']);
    expect(await expressionOfA(ruleA.id)).toMatchObject({ expression: 'amount > 3' });
  });
});
