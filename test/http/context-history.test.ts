/**
 * A context's history over HTTP (docs/api.md, "History and diff"): what
 * publish and rollback answer they changed, the notes and actors kept with
 * each ruleset version, the versions list, the rules of a version (checked
 * by validating payloads against them), diffs between the live ruleset,
 * the draft and numbered versions, and the errors of those routes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../support/app.ts';
import { expectProblem, ok, type Json, type Response } from '../support/expect-response.ts';

type TestApp = Awaited<ReturnType<typeof startTestApp>>;

let t: TestApp;
let bootstrapKeyId: string;
let botKey: string;
let botKeyId: string;
let validatorKey: string;

beforeAll(async () => {
  t = await startTestApp();
  const keys = (await ok(api('GET', '/api-keys'))).items as Json[];
  bootstrapKeyId = keys[0].id;
  const bot = await ok(api('POST', '/api-keys', { name: 'release-bot', role: 'admin' }), 201);
  botKey = bot.key;
  botKeyId = bot.id;
  validatorKey = (await ok(api('POST', '/api-keys', { name: 'history validator', role: 'validator' }), 201)).key;
});
afterAll(async () => {
  await t?.close();
});

function api(method: string, path: string, body?: unknown, options: Json = {}): Promise<Response> {
  return t.request(method, `/api/v1${path}`, { body, ...options });
}

function createRule(context: string, code: string, expression: string, extra: Json = {}): Promise<Json> {
  return ok(api('POST', '/rules', { context, code, name: code, expression, ...extra }), 201);
}

async function edit(rule: Json, changes: Json): Promise<Json> {
  // Server-managed fields are ignored by PUT: GET, edit, PUT.
  const current = await ok(api('GET', `/rules/${rule.id}`));
  return ok(api('PUT', `/rules/${rule.id}`, { ...current, ...changes }));
}

/** What a user compares between two validations: validity and the codes that failed, in order. */
async function outcome(context: string, payload: Json): Promise<{ isValid: boolean; failed: string[] }> {
  const answer = await ok(api('POST', '/validation/validate', { context, payload }, { key: validatorKey }));
  return { isValid: answer.isValid, failed: (answer.failures as Json[]).map((failure) => failure.ruleCode) };
}

const PAYLOADS = [
  { amount: 150, term: 24, rate: 20 },
  { amount: 50, term: 6, rate: 5 },
  { amount: 250, term: 12, rate: 9 },
];

const NO_CHANGES = { added: [], changed: [], removed: [] };

describe('publish, archive and rollback record what they changed, why and who', () => {
  const ids: Record<string, string> = {};
  /** Validation outcomes of PAYLOADS while each ruleset version was live. */
  const outcomesAt = new Map<number, Array<{ isValid: boolean; failed: string[] }>>();
  const record = async (version: number) => {
    outcomesAt.set(version, await Promise.all(PAYLOADS.map((payload) => outcome('loans', payload))));
  };

  it('a context publish answers the codes it added and changed, and keeps its note', async () => {
    ids.A = (await createRule('loans', 'A_AMOUNT', 'amount <= 100', { fieldPath: 'amount' })).id;
    ids.B = (await createRule('loans', 'B_TERM', 'term <= 12', { fieldPath: 'term' })).id;
    const first = await ok(api('POST', '/contexts/loans/publish', { note: 'first rules' }));
    expect(first).toEqual({
      context: 'loans', rulesetVersion: 1, published: [ids.A, ids.B], changes: { added: ['A_AMOUNT', 'B_TERM'], changed: [], removed: [] },
    });
    await record(1);

    await edit({ id: ids.A }, { expression: 'amount <= 200' });
    ids.C = (await createRule('loans', 'C_RATE', 'rate < 10', { fieldPath: 'rate' })).id;
    // No body at all: a publish without a note.
    const second = await ok(api('POST', '/contexts/loans/publish'));
    expect(second).toEqual({
      context: 'loans', rulesetVersion: 2, published: [ids.A, ids.C], changes: { added: ['C_RATE'], changed: ['A_AMOUNT'], removed: [] },
    });
    await record(2);
  });

  it('with nothing to publish, nothing changes', async () => {
    expect(await ok(api('POST', '/contexts/loans/publish', { note: 'nothing' }))).toEqual({
      context: 'loans', rulesetVersion: 2, published: [], changes: NO_CHANGES,
    });
  });

  it('archiving a live rule still answers 204, and makes a version of its own', async () => {
    await ok(api('DELETE', `/rules/${ids.B}`), 204);
    await record(3);
    expect((await ok(api('GET', '/contexts'))).items.find((c: Json) => c.context === 'loans').rulesetVersion).toBe(3);
  });

  it('a rule publish answers the rule with the new ruleset version and its changes', async () => {
    await edit({ id: ids.C }, { expression: 'rate < 15' });
    const published = await ok(api('POST', `/rules/${ids.C}/publish`, { note: 'rates up' }, { key: botKey }));
    expect(published).toMatchObject({
      id: ids.C, code: 'C_RATE', status: 'published', version: 2, publishedVersion: 2,
      rulesetVersion: 4, changes: { added: [], changed: ['C_RATE'], removed: [] },
    });
    await record(4);
  });

  it('a rollback answers what it changed, and keeps its note', async () => {
    const rolledBack = await ok(api('POST', '/contexts/loans/rollback', { rulesetVersion: 1, note: 'back to the first rules' }, { key: botKey }));
    expect(rolledBack).toEqual({
      context: 'loans',
      rulesetVersion: 5,
      published: expect.arrayContaining([ids.A, ids.B]) as unknown,
      changes: { added: ['B_TERM'], changed: ['A_AMOUNT'], removed: ['C_RATE'] },
    });
    expect(rolledBack.published).toHaveLength(2);
    await record(5);
    // What is live is version 1's rules again.
    expect(outcomesAt.get(5)).toEqual(outcomesAt.get(1));
  });

  it('a note longer than 500 characters is refused and changes nothing', async () => {
    await edit({ id: ids.A }, { expression: 'amount <= 300' });
    const long = 'n'.repeat(501);
    for (const refused of [
      api('POST', '/contexts/loans/publish', { note: long }),
      api('POST', `/rules/${ids.A}/publish`, { note: long }),
      api('POST', '/contexts/loans/rollback', { rulesetVersion: 2, note: long }),
      api('POST', '/contexts/loans/publish', { note: 5 }),
      api('POST', '/contexts/loans/publish', { comment: 'unknown field' }),
    ]) {
      const problem = await expectProblem(refused, 400, 'INVALID_BODY');
      expect(JSON.stringify(problem.errors)).toMatch(/note|comment/);
    }
    // 500 characters are fine.
    expect((await ok(api('GET', '/contexts/loans/versions'))).items[0].rulesetVersion).toBe(5);
    const exact = await ok(api('POST', '/contexts/loans/publish', { note: 'x'.repeat(500) }));
    expect(exact).toMatchObject({ rulesetVersion: 6, changes: { added: [], changed: ['A_AMOUNT'], removed: [] } });
    await record(6);
  });

  it('lists the versions newest first, with action, note, live rule count, time and actor', async () => {
    const { items, nextCursor } = await ok(api('GET', '/contexts/loans/versions'));
    expect(nextCursor).toBeNull();
    const bootstrap = { keyId: bootstrapKeyId, keyName: 'bootstrap admin' };
    const bot = { keyId: botKeyId, keyName: 'release-bot' };
    expect(items.map(({ createdAt: _createdAt, ...rest }: Json) => rest)).toEqual([
      { rulesetVersion: 6, action: 'publish', note: 'x'.repeat(500), rules: 2, actor: bootstrap },
      { rulesetVersion: 5, action: 'rollback', note: 'back to the first rules', rules: 2, actor: bot },
      { rulesetVersion: 4, action: 'publish', note: 'rates up', rules: 2, actor: bot },
      { rulesetVersion: 3, action: 'archive', note: null, rules: 2, actor: bootstrap },
      { rulesetVersion: 2, action: 'publish', note: null, rules: 3, actor: bootstrap },
      { rulesetVersion: 1, action: 'publish', note: 'first rules', rules: 2, actor: bootstrap },
    ]);
    const times = items.map((item: Json) => Date.parse(item.createdAt));
    expect(times.every((time: number) => Number.isFinite(time))).toBe(true);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it('pages through the versions with limit and cursor', async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor === null ? '?limit=4' : `?limit=4&cursor=${cursor}`;
      const page: Json = await ok(api('GET', `/contexts/loans/versions${query}`));
      expect(page.items.length).toBeLessThanOrEqual(4);
      seen.push(...page.items.map((item: Json) => item.rulesetVersion));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual([6, 5, 4, 3, 2, 1]);
    await expectProblem(api('GET', '/contexts/loans/versions?limit=0'), 400, 'INVALID_BODY');
    await expectProblem(api('GET', '/contexts/loans/versions?limit=501'), 400, 'INVALID_BODY');
    const bad = await expectProblem(api('GET', '/contexts/loans/versions?cursor=bm90LWEtY3Vyc29y'), 400, 'INVALID_BODY');
    expect(bad.errors).toEqual([expect.objectContaining({ path: 'cursor' })]);
  });

  it('a version\'s rules are what was live then: republished elsewhere, they validate payloads alike', async () => {
    const v1 = await ok(api('GET', '/contexts/loans/versions/1'));
    expect(v1.rulesetVersion).toBe(1);
    expect(v1.rules).toEqual([
      { context: 'loans', code: 'A_AMOUNT', name: 'A_AMOUNT', severity: 'Error', fieldPath: 'amount', required: false, expression: 'amount <= 100', priority: 0, enabled: true, tags: [] },
      { context: 'loans', code: 'B_TERM', name: 'B_TERM', severity: 'Error', fieldPath: 'term', required: false, expression: 'term <= 12', priority: 0, enabled: true, tags: [] },
    ]);
    expect((await ok(api('GET', '/contexts/loans/versions/3'))).rules.map((rule: Json) => rule.code)).toEqual(['A_AMOUNT', 'C_RATE']);

    for (const version of [1, 2, 3, 4, 5, 6]) {
      const { rules } = await ok(api('GET', `/contexts/loans/versions/${version}`));
      const replay = `loans-v${version}`;
      // Posted as read: a version's rules are what POST /rules takes.
      for (const rule of rules as Json[]) await ok(api('POST', '/rules', { ...rule, context: replay }), 201);
      await ok(api('POST', `/contexts/${replay}/publish`));
      const replayed = await Promise.all(PAYLOADS.map((payload) => outcome(replay, payload)));
      expect(replayed, `ruleset version ${version}`).toEqual(outcomesAt.get(version));
    }
    // The versions differ, so the comparison above tells them apart.
    expect(outcomesAt.get(1)).not.toEqual(outcomesAt.get(2));
  });

  it('diffs numbered versions by code, field by field', async () => {
    expect(await ok(api('GET', '/contexts/loans/diff?from=1&to=2'))).toEqual({
      from: 1,
      to: 2,
      added: [{ context: 'loans', code: 'C_RATE', name: 'C_RATE', severity: 'Error', fieldPath: 'rate', required: false, expression: 'rate < 10', priority: 0, enabled: true, tags: [] }],
      removed: [],
      changed: [{ code: 'A_AMOUNT', fields: { expression: { from: 'amount <= 100', to: 'amount <= 200' } } }],
    });
    const back = await ok(api('GET', '/contexts/loans/diff?from=2&to=3'));
    expect(back.removed.map((rule: Json) => rule.code)).toEqual(['B_TERM']);
    expect(back.added).toEqual([]);
    expect(back.changed).toEqual([]);
    // A rollback to 1 makes version 5 read as version 1.
    expect(await ok(api('GET', '/contexts/loans/diff?from=1&to=5'))).toEqual({ from: 1, to: 5, added: [], removed: [], changed: [] });
    expect(await ok(api('GET', '/contexts/loans/diff?from=6&to=live'))).toEqual({ from: 6, to: 'live', added: [], removed: [], changed: [] });
  });
});

describe('diff of the live ruleset and the draft', () => {
  it('shows new rules, edits field by field, and archived ones against older versions', async () => {
    const x = await createRule('edits', 'X', 'amount > 0', { fieldPath: 'amount', message: 'Amount must be positive' });
    const y = await createRule('edits', 'Y', 'term > 0', { fieldPath: 'term' });
    await createRule('edits', 'Z', 'rate > 0', { fieldPath: 'rate', tags: ['rates'] });
    await ok(api('POST', '/contexts/edits/publish'));
    expect(await ok(api('GET', '/contexts/edits/diff'))).toEqual({ from: 'live', to: 'draft', added: [], removed: [], changed: [] });

    // An edit that changes the expression, adds a priority and drops the message.
    await edit(x, { expression: 'amount > 10', priority: 5, message: undefined, schema: { type: 'integer' } });
    await createRule('edits', 'W', 'amount < 1000', { fieldPath: 'amount' });
    await ok(api('DELETE', `/rules/${y.id}`), 204);

    const diff = await ok(api('GET', '/contexts/edits/diff'));
    expect(diff).toEqual({
      from: 'live',
      to: 'draft',
      added: [{ context: 'edits', code: 'W', name: 'W', severity: 'Error', fieldPath: 'amount', required: false, expression: 'amount < 1000', priority: 0, enabled: true, tags: [] }],
      removed: [],
      changed: [{
        code: 'X',
        fields: {
          expression: { from: 'amount > 0', to: 'amount > 10' },
          schema: { from: null, to: { type: 'integer' } },
          message: { from: 'Amount must be positive', to: null },
          priority: { from: 0, to: 5 },
        },
      }],
    });
    // Explicit defaults are the same request.
    expect(await ok(api('GET', '/contexts/edits/diff?from=live&to=draft'))).toEqual(diff);
    // The archive of Y went live at once: against version 1 it is removed.
    const sinceFirst = await ok(api('GET', '/contexts/edits/diff?from=1&to=draft'));
    expect(sinceFirst.removed.map((rule: Json) => rule.code)).toEqual(['Y']);
    expect(sinceFirst.added.map((rule: Json) => rule.code)).toEqual(['W']);
    expect(sinceFirst.changed.map((rule: Json) => rule.code)).toEqual(['X']);

    // Publishing the draft makes live what the diff showed, and the answer's changes say the same.
    const published = await ok(api('POST', '/contexts/edits/publish'));
    expect(published.changes).toEqual({ added: ['W'], changed: ['X'], removed: [] });
    expect(await ok(api('GET', '/contexts/edits/diff'))).toEqual({ from: 'live', to: 'draft', added: [], removed: [], changed: [] });
  });

  it('a context never published diffs against an empty live ruleset and has no versions yet', async () => {
    await createRule('unpublished', 'ONLY', 'amount > 0');
    const diff = await ok(api('GET', '/contexts/unpublished/diff'));
    expect(diff.added.map((rule: Json) => rule.code)).toEqual(['ONLY']);
    expect(await ok(api('GET', '/contexts/unpublished/versions'))).toEqual({ items: [], nextCursor: null });
    await expectProblem(api('GET', '/contexts/unpublished/versions/1'), 404, 'NOT_FOUND');
  });
});

describe('errors', () => {
  it('a bad from or to is 400 naming it', async () => {
    for (const [query, path] of [
      ['from=draft', 'from'], ['from=0', 'from'], ['from=abc', 'from'], ['to=-1', 'to'], ['to=1.5', 'to'], ['to=', 'to'],
    ]) {
      const problem = await expectProblem(api('GET', `/contexts/loans/diff?${query}`), 400, 'INVALID_BODY');
      expect(problem.errors, query).toEqual([expect.objectContaining({ path })]);
    }
    await expectProblem(api('GET', '/contexts/loans/diff?since=1'), 400, 'INVALID_BODY');
  });

  it('an unknown version is 404', async () => {
    await expectProblem(api('GET', '/contexts/loans/diff?from=99'), 404, 'NOT_FOUND');
    await expectProblem(api('GET', '/contexts/loans/diff?to=9999999999'), 404, 'NOT_FOUND');
    await expectProblem(api('GET', '/contexts/loans/versions/99'), 404, 'NOT_FOUND');
    await expectProblem(api('GET', '/contexts/loans/versions/0'), 404, 'NOT_FOUND');
    await expectProblem(api('GET', '/contexts/loans/versions/abc'), 404, 'NOT_FOUND');
  });

  it('an unknown context, or another tenant\'s, is 404', async () => {
    const other = { key: t.otherAdminKey, tenant: t.otherTenantId };
    for (const options of [{}, other]) {
      const context = Object.keys(options).length === 0 ? 'no-such-context' : 'loans';
      await expectProblem(api('GET', `/contexts/${context}/versions`, undefined, options), 404, 'CONTEXT_NOT_FOUND');
      await expectProblem(api('GET', `/contexts/${context}/versions/1`, undefined, options), 404, 'CONTEXT_NOT_FOUND');
      await expectProblem(api('GET', `/contexts/${context}/diff`, undefined, options), 404, 'CONTEXT_NOT_FOUND');
    }
  });

  it('a validator key is 403', async () => {
    for (const path of ['/contexts/loans/versions', '/contexts/loans/versions/1', '/contexts/loans/diff']) {
      await expectProblem(api('GET', path, undefined, { key: validatorKey }), 403, 'FORBIDDEN');
    }
  });
});
