/**
 * Context routes over HTTP (docs/api.md): the list with rule counts
 * and cache state, recompile, the generated validator source, and the
 * configurable limits that guard rule saving (section 8).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../support/app.ts';
import { ok, expectProblem, type Json, type Response } from '../support/expect-response.ts';

type TestApp = Awaited<ReturnType<typeof startTestApp>>;

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ env: { MAX_RULES_PER_CONTEXT: '3', MAX_EXPRESSION_LENGTH: '100' } });
});
afterAll(async () => {
  await t?.close();
});

function api(method: string, path: string, body?: unknown, options: Json = {}): Promise<Response> {
  return t.request(method, `/api/v1${path}`, { body, ...options });
}

function createRule(context: string, code: string, extra: Json = {}): Promise<Json> {
  return ok(api('POST', '/rules', { context, code, name: code, fieldPath: 'amount', expression: 'amount > 0', ...extra }), 201);
}

function headerOf(response: Response, name: string): string | null {
  const headers = response.headers as unknown;
  if (headers instanceof Headers) return headers.get(name);
  const value = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value.join(', ') : value ?? null;
}

describe('GET /contexts', () => {
  it('lists nothing for a tenant without rules', async () => {
    expect(await ok(api('GET', '/contexts'))).toEqual({ items: [] });
  });

  it('counts rules by status and reports the compile of the live version', async () => {
    const live = await createRule('listed', 'LIVE');
    await createRule('listed', 'DRAFT');
    const archived = await createRule('listed', 'GONE');
    await ok(api('DELETE', `/rules/${archived.id}`), 204);
    await ok(api('POST', `/rules/${live.id}/publish`));
    await createRule('drafts-only', 'D1');

    const items = (await ok(api('GET', '/contexts'))).items as Json[];
    const listed = items.find((item) => item.context === 'listed');
    expect(listed).toMatchObject({ context: 'listed', rulesetVersion: 1, rules: { draft: 1, published: 1, archived: 1 } });
    // The publish compiled and installed the validator in this process.
    expect(listed!.compiledAt).toEqual(expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/));
    expect(listed!.compileMs).toEqual(expect.any(Number));
    expect(items.find((item) => item.context === 'drafts-only')).toEqual({
      context: 'drafts-only',
      rulesetVersion: null,
      rules: { draft: 1, published: 0, archived: 0 },
      compiledAt: null,
      compileMs: null,
    });
  });
});

describe('POST /contexts/{context}/publish', () => {
  it('404 CONTEXT_NOT_FOUND naming a context without rules, or with only archived rules that never went live', async () => {
    const none = await expectProblem(api('POST', '/contexts/nothing-here/publish'), 404, 'CONTEXT_NOT_FOUND');
    expect(none.detail).toBe('Context "nothing-here" has no rules.');
    const rule = await createRule('archived-only', 'A1');
    await ok(api('DELETE', `/rules/${rule.id}`), 204);
    const archived = await expectProblem(api('POST', '/contexts/archived-only/publish'), 404, 'CONTEXT_NOT_FOUND');
    expect(archived.detail).toBe('Context "archived-only" has no rules.');
  });
});

describe('POST /contexts/{context}/recompile', () => {
  it('rebuilds the live validator from the database', async () => {
    const rule = await createRule('recompiled', 'R1');
    await ok(api('POST', `/rules/${rule.id}/publish`));
    const before = (await ok(api('GET', '/contexts'))).items.find((item: Json) => item.context === 'recompiled');

    const result = await ok(api('POST', '/contexts/recompiled/recompile'));
    expect(result).toEqual({ context: 'recompiled', rulesetVersion: 1, rules: 1, compileMs: expect.any(Number) });
    expect(Object.keys(result)).toEqual(['context', 'rulesetVersion', 'rules', 'compileMs']);

    const after = (await ok(api('GET', '/contexts'))).items.find((item: Json) => item.context === 'recompiled');
    expect(after.compiledAt >= before.compiledAt).toBe(true);
  });

  it('404 CONTEXT_NOT_FOUND without a ruleset version, in the words a validation uses', async () => {
    await createRule('unpublished', 'U1');
    const unpublished = await expectProblem(api('POST', '/contexts/unpublished/recompile'), 404, 'CONTEXT_NOT_FOUND');
    expect(unpublished.detail).toBe('Context "unpublished" has no published rules.');
    const validation = await expectProblem(
      api('POST', '/validation/validate', { context: 'unpublished', payload: {} }), 404, 'CONTEXT_NOT_FOUND',
    );
    expect(validation.detail).toBe(unpublished.detail);
    await expectProblem(api('POST', '/contexts/never-heard-of/recompile'), 404, 'CONTEXT_NOT_FOUND');
  });
});

describe('GET /contexts/{context}/validator', () => {
  it('serves the generated JavaScript of the live version', async () => {
    const rule = await createRule('sourced', 'SOURCE_RULE');
    await ok(api('POST', `/rules/${rule.id}/publish`));
    const response = await api('GET', '/contexts/sourced/validator');
    expect(response.status).toBe(200);
    expect(headerOf(response, 'content-type')).toMatch(/^text\/javascript/);
    expect(typeof response.body).toBe('string');
    expect(response.body).toContain('SOURCE_RULE');
  });

  it('404 CONTEXT_NOT_FOUND without a ruleset version', async () => {
    const problem = await expectProblem(api('GET', '/contexts/unknown-context/validator'), 404, 'CONTEXT_NOT_FOUND');
    expect(problem.detail).toBe('Context "unknown-context" has no published rules.');
  });

  it('400 for an unknown format (?format=module is covered by test/standalone)', async () => {
    await expectProblem(api('GET', '/contexts/sourced/validator?format=zip'), 400, 'INVALID_BODY');
  });
});

describe('limits', () => {
  it('409 LIMIT_EXCEEDED past MAX_RULES_PER_CONTEXT; archived rules do not count', async () => {
    const first = await createRule('full', 'F1');
    await createRule('full', 'F2');
    await createRule('full', 'F3');
    await expectProblem(api('POST', '/rules', { context: 'full', code: 'F4', name: 'x', expression: 'true' }), 409, 'LIMIT_EXCEEDED');
    await ok(api('DELETE', `/rules/${first.id}`), 204);
    await createRule('full', 'F4');
  });

  it('409 LIMIT_EXCEEDED for a rollback that would revive rules past MAX_RULES_PER_CONTEXT', async () => {
    const gone = await createRule('revive', 'R1');
    await createRule('revive', 'R2');
    await createRule('revive', 'R3');
    await ok(api('POST', '/contexts/revive/publish')); // 1: R1 R2 R3
    await ok(api('DELETE', `/rules/${gone.id}`), 204); // 2: R2 R3
    await createRule('revive', 'R4'); // a draft: 3 rules again

    const body = await expectProblem(api('POST', '/contexts/revive/rollback', { rulesetVersion: 1 }), 409, 'LIMIT_EXCEEDED');
    expect(body.detail).toBe('rolling back to ruleset version 1 would leave context "revive" with 4 rules, the maximum is 3');
    expect(await ok(api('GET', `/rules/${gone.id}`))).toMatchObject({ status: 'archived' });
    const [summary] = (await ok(api('GET', '/contexts'))).items.filter((item: Json) => item.context === 'revive');
    expect(summary).toMatchObject({ rulesetVersion: 2, rules: { draft: 1, published: 2, archived: 1 } });
  });

  it('400 naming the field past MAX_EXPRESSION_LENGTH', async () => {
    const expression = `amount > ${'1'.repeat(92)}`;
    expect(expression).toHaveLength(101);
    const body = await expectProblem(
      api('POST', '/rules', { context: 'long', code: 'L', name: 'x', expression }),
      400,
      'INVALID_BODY',
    );
    expect(body.errors).toEqual([{ path: 'expression', message: 'line 1, column 101: is 101 characters long; at most 100 are allowed' }]);
    await createRule('long', 'L', { expression: `amount > ${'1'.repeat(91)}` });
  });

  it('says where an over-long `when` goes past the limit, on its own line', async () => {
    const when = `amount > 0 &&\n  amount < ${'9'.repeat(90)}`;
    const body = await expectProblem(
      api('POST', '/rules', { context: 'long', code: 'W', name: 'x', expression: 'true', when }),
      400,
      'INVALID_BODY',
    );
    // Character 101 of the text is on line 2, after the 14 characters of line 1.
    expect(body.errors).toEqual([{ path: 'when', message: `line 2, column 87: is ${when.length} characters long; at most 100 are allowed` }]);
  });
});
