/**
 * Rules as files (docs/api.md), on the real server: a context exported
 * (live or draft) as one document with its payload schema and stored tests;
 * that document imported into another context, published in the same
 * transaction, and exported again to the same document; dry runs, pruning,
 * a publish refused by a failing test and a file with rules that do not
 * compile all leave everything as it was. A validator key gets 403, and
 * another tenant's context is unknown to export and its own to import into.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { expectProblem, ok } from '../support/expect-response.ts';

const schema = { type: 'object', properties: { amount: { type: 'number' }, country: { type: 'string' } } };
const limit = { code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100', message: 'too much' };
const country = { code: 'COUNTRY', name: 'Country set', fieldPath: 'country', required: true, tags: ['kyc'] };
const small = { name: 'small passes', payload: { amount: 50, country: 'NL' }, expect: { isValid: true } };

describe('rules as files', () => {
  let t: TestApp;
  let validatorKey: string;

  const exportOf = (context: string, query = '') => t.request('GET', `/api/v1/contexts/${context}/export${query}`);
  const importInto = (context: string, body: unknown, query = '') => t.request('POST', `/api/v1/contexts/${context}/import${query}`, { body });
  const rulesOf = async (context: string) =>
    (await ok(t.request('GET', `/api/v1/rules?context=${context}&status=all&limit=500`))).items as Array<Record<string, unknown>>;
  const versionsOf = async (context: string) => (await ok(t.request('GET', `/api/v1/contexts/${context}/versions`))).items as unknown[];

  beforeAll(async () => {
    t = await startTestApp({ env: { MAX_RULES_PER_CONTEXT: '5' } });
    validatorKey = (await ok(t.request('POST', '/api/v1/api-keys', { body: { name: 'v', role: 'validator' } }), 201)).key;
    for (const rule of [limit, country]) await ok(t.request('POST', '/api/v1/rules', { body: { context: 'loans', ...rule } }), 201);
    await ok(t.request('PUT', '/api/v1/contexts/loans/payload-schema', { body: schema }));
    await ok(t.request('PUT', '/api/v1/contexts/loans/tests', { body: { tests: [small] } }));
    await ok(t.request('POST', '/api/v1/contexts/loans/publish'));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('exports the live rules sorted by code, as content only, with the payload schema and tests', async () => {
    const response = await exportOf('loans');
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body).toEqual({
      format: 'rules/v1',
      context: 'loans',
      rulesetVersion: 1,
      payloadSchema: schema,
      rules: [
        { code: 'COUNTRY', name: 'Country set', severity: 'Error', fieldPath: 'country', required: true, priority: 0, enabled: true, tags: ['kyc'] },
        { code: 'LIMIT', name: 'Limit', severity: 'Error', fieldPath: 'amount', required: false, expression: 'amount <= 100', message: 'too much', priority: 0, enabled: true, tags: [] },
      ],
      tests: [small],
    });
  });

  it('exports the draft with from=draft, and 404s a context with nothing live', async () => {
    const draft = await ok(t.request('POST', '/api/v1/rules', { body: { context: 'loans', code: 'NEW', name: 'New', expression: 'amount > 0' } }), 201);
    const live = await ok(exportOf('loans'));
    expect(live.rules.map((r: { code: string }) => r.code)).toEqual(['COUNTRY', 'LIMIT']);
    const fromDraft = await ok(exportOf('loans', '?from=draft'));
    expect(fromDraft.rules.map((r: { code: string }) => r.code)).toEqual(['COUNTRY', 'LIMIT', 'NEW']);
    expect(fromDraft.rulesetVersion).toBe(1);
    await ok(t.request('DELETE', `/api/v1/rules/${draft.id}`), 204);

    await ok(t.request('POST', '/api/v1/rules', { body: { context: 'unpublished', ...limit } }), 201);
    await expectProblem(exportOf('unpublished'), 404, 'CONTEXT_NOT_FOUND');
    expect((await ok(exportOf('unpublished', '?from=draft'))).rules).toHaveLength(1);
    await expectProblem(exportOf('nothing-here'), 404, 'CONTEXT_NOT_FOUND');
    await expectProblem(exportOf('loans', '?from=yesterday'), 400, 'INVALID_BODY');
  });

  it('round-trips: export, import with publish into an empty context, export again', async () => {
    const file = await ok(exportOf('loans'));
    const answer = await ok(importInto('copy', file, '?publish=true'));
    expect(answer).toEqual({
      dryRun: false, create: ['COUNTRY', 'LIMIT'], update: [], archive: [], unchanged: [], rulesetVersion: 1, warnings: [],
    });
    expect(await ok(exportOf('copy'))).toEqual({ ...file, context: 'copy', rulesetVersion: 1 });
    expect(await versionsOf('copy')).toEqual([expect.objectContaining({ rulesetVersion: 1, action: 'import', rules: 2 })]);
    // Live at once: the validator of the import serves validation.
    const verdict = await ok(t.request('POST', '/api/v1/validation/validate', { key: validatorKey, body: { context: 'copy', payload: { amount: 500, country: 'NL' } } }));
    expect(verdict.isValid).toBe(false);
    // One audit entry for the whole import.
    const audit = await ok(t.request('GET', '/api/v1/audit?context=copy'));
    expect(audit.items.map((entry: { action: string }) => entry.action)).toEqual(['context.import']);
    // Importing the same file again changes nothing.
    expect(await ok(importInto('copy', file, '?publish=true'))).toMatchObject({ create: [], update: [], unchanged: ['COUNTRY', 'LIMIT'], rulesetVersion: 1 });
  });

  it('updates differing rules as drafts, archives absent ones only with prune, and a dry run changes nothing', async () => {
    const file = await ok(exportOf('copy'));
    const edited = {
      ...file,
      rules: [{ ...file.rules[1], expression: 'amount <= 200' }, { code: 'ZIP', name: 'Positive', fieldPath: 'amount', expression: 'amount >= 0' }],
    };
    const before = await rulesOf('copy');
    const dry = await ok(importInto('copy', edited, '?dryRun=true&prune=true'));
    expect(dry).toMatchObject({ dryRun: true, create: ['ZIP'], update: ['LIMIT'], archive: ['COUNTRY'], unchanged: [] });
    expect(await rulesOf('copy')).toEqual(before);

    expect(await ok(importInto('copy', edited))).toMatchObject({ dryRun: false, create: ['ZIP'], update: ['LIMIT'], archive: [], rulesetVersion: 1 });
    const statuses = Object.fromEntries((await rulesOf('copy')).map((r) => [r.code, r.status]));
    expect(statuses).toEqual({ COUNTRY: 'published', LIMIT: 'draft', ZIP: 'draft' });

    const pruned = await ok(importInto('copy', edited, '?prune=true&publish=true'));
    expect(pruned).toMatchObject({ create: [], update: [], archive: ['COUNTRY'], unchanged: ['LIMIT', 'ZIP'], rulesetVersion: 2 });
    expect((await ok(exportOf('copy'))).rules.map((r: { code: string }) => r.code)).toEqual(['LIMIT', 'ZIP']);
  });

  it('replaces the payload schema and tests only when the file has those keys', async () => {
    const { payloadSchema: _schema, tests: _tests, ...bare } = await ok(exportOf('loans'));
    await ok(importInto('keys', { ...bare }, '?publish=true'));
    await expectProblem(t.request('GET', '/api/v1/contexts/keys/payload-schema'), 404, 'NOT_FOUND');
    await ok(t.request('PUT', '/api/v1/contexts/keys/payload-schema', { body: schema }));
    await ok(importInto('keys', bare));
    expect(await ok(t.request('GET', '/api/v1/contexts/keys/payload-schema'))).toEqual(schema);
    await ok(importInto('keys', { ...bare, payloadSchema: null, tests: [small] }));
    await expectProblem(t.request('GET', '/api/v1/contexts/keys/payload-schema'), 404, 'NOT_FOUND');
    expect(await ok(t.request('GET', '/api/v1/contexts/keys/tests'))).toEqual({ tests: [small] });
  });

  it('warns about the file\'s rules with paths naming the rule, against the file\'s payload schema', async () => {
    const file = {
      format: 'rules/v1',
      payloadSchema: schema,
      rules: [limit, { code: 'TYPO', name: 'Typo', fieldPath: 'amout', expression: 'amout > 0' }],
    };
    const answer = await ok(importInto('warned', file, '?dryRun=true'));
    expect(answer.warnings).toContainEqual(expect.objectContaining({ code: 'UNKNOWN_FIELD', path: 'rules[1].expression', suggestion: 'amount' }));
  });

  it('refuses a publishing import whose tests fail, changing nothing, unless forced', async () => {
    const file = await ok(exportOf('loans'));
    const failing = { ...file, tests: [{ name: 'big passes', payload: { amount: 500, country: 'NL' }, expect: { isValid: true } }] };
    const refused = await expectProblem(importInto('gated', failing, '?publish=true'), 409, 'TESTS_FAILED');
    expect(refused.errors).toEqual([expect.objectContaining({ path: 'tests[0]' })]);
    expect(await rulesOf('gated')).toEqual([]);
    expect(await ok(t.request('GET', '/api/v1/contexts/gated/tests'))).toEqual({ tests: [] });
    await expectProblem(t.request('GET', '/api/v1/contexts/gated/payload-schema'), 404, 'NOT_FOUND');

    const forced = await ok(importInto('gated', failing, '?publish=true&force=true'));
    expect(forced.rulesetVersion).toBe(1);
    const [version] = (await versionsOf('gated')) as Array<{ note: string }>;
    expect(version.note).toMatch(/force=true/);
  });

  it('refuses a file with rules that do not compile, naming every error, and changes nothing', async () => {
    const before = await ok(exportOf('loans', '?from=draft'));
    const bad = {
      ...before,
      rules: [
        { ...limit, expression: 'amount <= 1000' },
        { code: 'BROKEN', name: 'Broken', expression: 'new Date()' },
        { code: 'ALSO', name: 'Also broken', expression: 'amount >' },
        { code: 'LIMIT', name: 'Twice', required: true },
      ],
    };
    const problem = await expectProblem(importInto('loans', bad, '?publish=true'), 400, 'INVALID_BODY');
    const paths = (problem.errors as Array<{ path: string }>).map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['rules[1].expression', 'rules[2].expression', 'rules[3].code']));
    expect(await ok(exportOf('loans', '?from=draft'))).toEqual(before);
  });

  it('refuses a document that is not a rules file, naming the place', async () => {
    await expectProblem(importInto('loans', { format: 'rules/v2', rules: [] }), 400, 'INVALID_BODY');
    const problem = await expectProblem(importInto('loans', { format: 'rules/v1', rules: [{ code: 'X' }] }), 400, 'INVALID_BODY');
    expect(JSON.stringify(problem.errors)).toContain('rules');
  });

  it('refuses a file past the rules limit', async () => {
    const many = Array.from({ length: 6 }, (_, i) => ({ code: `R${i}`, name: `R${i}`, required: true, fieldPath: `f${i}` }));
    const refused = await t.request('POST', '/api/v1/contexts/many/import', { body: { format: 'rules/v1', rules: many } });
    // The limit is 5 rules per context here.
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('LIMIT_EXCEEDED');
    expect(await rulesOf('many')).toEqual([]);
  });

  it('refuses a validator key with 403', async () => {
    await expectProblem(t.request('GET', '/api/v1/contexts/loans/export', { key: validatorKey }), 403, 'FORBIDDEN');
    await expectProblem(t.request('POST', '/api/v1/contexts/loans/import', { key: validatorKey, body: { format: 'rules/v1', rules: [] } }), 403, 'FORBIDDEN');
  });

  it('keeps each tenant to its own contexts', async () => {
    const other = { tenant: t.otherTenantId, key: t.otherAdminKey };
    await expectProblem(t.request('GET', '/api/v1/contexts/loans/export', other), 404, 'CONTEXT_NOT_FOUND');
    const file = await ok(exportOf('loans'));
    expect(await ok(t.request('POST', '/api/v1/contexts/loans/import?publish=true', { ...other, body: file }))).toMatchObject({
      create: ['COUNTRY', 'LIMIT'], rulesetVersion: 1,
    });
    // The first tenant's context is untouched.
    expect((await ok(exportOf('loans'))).rulesetVersion).toBe(1);
  });
});
