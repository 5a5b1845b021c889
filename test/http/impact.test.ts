/**
 * The impact report and the sample route (docs/api.md, "Impact on recorded
 * traffic"), on the real server and database: a crafted set of recorded
 * samples replayed against the live rules and the draft, or a numbered
 * version, gives exact counts, per-rule changes and examples whose ids the
 * sample route answers; `limit` takes the newest; unknown versions and
 * contexts are 404, bad bodies 400 naming the field, a validator key 403,
 * and one tenant never sees another's samples.
 *
 * Samples go in through the sample store of the running app (the store the
 * sampling writer uses), with the verdicts they were recorded with.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SampleRecord } from '../../src/storage/types.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { expectProblem, ok } from '../support/expect-response.ts';

const IMPACT = '/api/v1/contexts/loans/impact';
const SAMPLES = '/api/v1/contexts/loans/samples';

/**
 * Live (version 1): LIMIT amount <= 100, TERM term <= 12.
 * Draft: LIMIT raised to 200, and MIN amount >= 10 added.
 * Each payload with what it gets live and under the draft; oldest first.
 */
const crafted = [
  { payload: { amount: 50, term: 6 }, live: [], draft: [] }, // unchanged
  { payload: { amount: 150, term: 6 }, live: ['LIMIT'], draft: [] }, // became valid
  { payload: { amount: 5, term: 6 }, live: [], draft: ['MIN'] }, // became invalid
  { payload: { amount: 500, term: 24 }, live: ['LIMIT', 'TERM'], draft: ['LIMIT', 'TERM'] }, // unchanged, invalid under both
  { payload: { amount: 150, term: 24 }, live: ['LIMIT', 'TERM'], draft: ['TERM'] }, // failures changed
  { payload: { amount: 5, term: 24 }, live: ['TERM'], draft: ['MIN', 'TERM'] }, // failures changed
  { payload: { amount: 60, term: 3 }, live: [], draft: [] }, // unchanged; the newest
];

describe('impact report', () => {
  let t: TestApp;
  let validatorKey: string;
  let limitId: string;
  const clock = Date.parse('2026-11-20T08:00:00Z');

  const createRule = async (context: string, code: string, fieldPath: string, expression: string) =>
    (await ok(t.request('POST', '/api/v1/rules', { body: { context, code, name: code, fieldPath, expression, message: `${code} fails` } }), 201)).id as string;
  /** Stores samples of `context` for `tenantId`, one a minute from `start` on (the last the newest). */
  const record = async (tenantId: string, context: string, payloads: Array<{ payload: unknown; live: string[] }>, start = clock) => {
    const samples: SampleRecord[] = payloads.map(({ payload, live }, i) => ({
      tenantId, context, recordedAt: new Date(start + i * 60_000), rulesetVersion: 1, isValid: live.length === 0, failures: live, payload,
    }));
    await t.storage.samples.insertMany(samples);
  };

  beforeAll(async () => {
    t = await startTestApp();
    limitId = await createRule('loans', 'LIMIT', 'amount', 'amount <= 100');
    await createRule('loans', 'TERM', 'term', 'term <= 12');
    await ok(t.request('POST', '/api/v1/contexts/loans/publish'));
    const limit = await ok(t.request('GET', `/api/v1/rules/${limitId}`));
    await ok(t.request('PUT', `/api/v1/rules/${limitId}`, { body: { ...limit, expression: 'amount <= 200' } }));
    await createRule('loans', 'MIN', 'amount', 'amount >= 10');
    await record(t.tenantId, 'loans', crafted);
    validatorKey = (await ok(t.request('POST', '/api/v1/api-keys', { body: { name: 'v', role: 'validator' } }), 201)).key;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('counts what the draft changes, per rule, with examples newest first within each kind', async () => {
    const report = await ok(t.request('POST', IMPACT));
    expect(report).toMatchObject({ samples: 7, unchanged: 3, becameInvalid: 1, becameValid: 1, failuresChanged: 2 });
    expect(report.byRule).toEqual([
      { ruleCode: 'LIMIT', newFailures: 0, resolvedFailures: 2 },
      { ruleCode: 'MIN', newFailures: 2, resolvedFailures: 0 },
    ]);
    expect(report.examples.map((e: { live: unknown; target: unknown }) => [e.live, e.target])).toEqual([
      [{ isValid: true, failures: [] }, { isValid: false, failures: ['MIN'] }],
      [{ isValid: false, failures: ['LIMIT'] }, { isValid: true, failures: [] }],
      [{ isValid: false, failures: ['TERM'] }, { isValid: false, failures: ['MIN', 'TERM'] }],
      [{ isValid: false, failures: ['LIMIT', 'TERM'] }, { isValid: false, failures: ['TERM'] }],
    ]);
    expect(report.examples[0].recordedAt).toBe(new Date(clock + 2 * 60_000).toISOString());
  });

  it('answers the payload of every example by its sample id', async () => {
    const report = await ok(t.request('POST', IMPACT, { body: { target: 'draft' } }));
    const payloads = [];
    for (const example of report.examples) {
      const sample = await ok(t.request('GET', `${SAMPLES}/${example.sampleId}`));
      expect(sample).toEqual({ sampleId: example.sampleId, recordedAt: example.recordedAt, rulesetVersion: 1, payload: expect.any(Object) });
      payloads.push(sample.payload);
    }
    expect(payloads).toEqual([crafted[2].payload, crafted[1].payload, crafted[5].payload, crafted[4].payload]);
  });

  it('replays only the newest `limit` samples', async () => {
    const report = await ok(t.request('POST', IMPACT, { body: { limit: 2 } }));
    expect(report).toMatchObject({ samples: 2, unchanged: 1, becameInvalid: 0, becameValid: 0, failuresChanged: 1 });
    expect(report.byRule).toEqual([{ ruleCode: 'MIN', newFailures: 1, resolvedFailures: 0 }]);
  });

  it('keeps at most 20 examples of a kind, and counts against no rules when nothing is live', async () => {
    await createRule('fresh', 'POSITIVE', 'amount', 'amount > 0');
    await record(t.tenantId, 'fresh', Array.from({ length: 25 }, (_, i) => ({ payload: { amount: -i }, live: [] })));
    await record(t.tenantId, 'fresh', [{ payload: { amount: 3 }, live: [] }], clock + 3_600_000);
    const report = await ok(t.request('POST', '/api/v1/contexts/fresh/impact'));
    expect(report).toMatchObject({ samples: 26, unchanged: 1, becameInvalid: 25, becameValid: 0, failuresChanged: 0 });
    expect(report.byRule).toEqual([{ ruleCode: 'POSITIVE', newFailures: 25, resolvedFailures: 0 }]);
    expect(report.examples).toHaveLength(20);
    // Newest first: the 25th sample, amount -24, leads.
    const first = await ok(t.request('GET', `/api/v1/contexts/fresh/samples/${report.examples[0].sampleId}`));
    expect(first.payload).toEqual({ amount: -24 });
  });

  it('reads many samples a page at a time, each once, however many share a time', async () => {
    await createRule('paged', 'EVEN', 'n', 'n % 2 == 0');
    const many = (count: number, from: number) => Array.from({ length: count }, (_, i) => ({ payload: { n: from + i }, live: [] }));
    // 1,500 samples recorded in the same millisecond, then 1,000 one a minute after them.
    await t.storage.samples.insertMany(many(1500, 0).map(({ payload }) => ({
      tenantId: t.tenantId, context: 'paged', recordedAt: new Date(clock), rulesetVersion: 1, isValid: true, failures: [], payload,
    })));
    await record(t.tenantId, 'paged', many(1000, 1500), clock + 60_000);
    const all = await ok(t.request('POST', '/api/v1/contexts/paged/impact', { body: { limit: 5000 } }));
    expect(all).toMatchObject({ samples: 2500, unchanged: 1250, becameInvalid: 1250, byRule: [{ ruleCode: 'EVEN', newFailures: 1250, resolvedFailures: 0 }] });
    // The newest 1,000 are those recorded one by one; 1,100 take 100 more of those that share a time.
    expect(await ok(t.request('POST', '/api/v1/contexts/paged/impact', { body: { limit: 1000 } }))).toMatchObject({ samples: 1000, becameInvalid: 500 });
    expect(await ok(t.request('POST', '/api/v1/contexts/paged/impact', { body: { limit: 1100 } }))).toMatchObject({ samples: 1100 });
  });

  it('answers an empty report for a context with rules and no samples', async () => {
    await createRule('quiet', 'ANY', 'a', 'a > 0');
    expect(await ok(t.request('POST', '/api/v1/contexts/quiet/impact'))).toEqual({
      samples: 0, unchanged: 0, becameInvalid: 0, becameValid: 0, failuresChanged: 0, byRule: [], examples: [],
    });
  });

  it('is 404 for an unknown version or context, and for a sample id the context does not have', async () => {
    await expectProblem(t.request('POST', IMPACT, { body: { target: 99 } }), 404, 'NOT_FOUND');
    await expectProblem(t.request('POST', '/api/v1/contexts/nowhere/impact'), 404, 'CONTEXT_NOT_FOUND');
    await expectProblem(t.request('POST', '/api/v1/contexts/nowhere/impact', { body: { target: 1 } }), 404, 'CONTEXT_NOT_FOUND');
    const [example] = (await ok(t.request('POST', IMPACT))).examples;
    await expectProblem(t.request('GET', `/api/v1/contexts/fresh/samples/${example.sampleId}`), 404, 'NOT_FOUND');
    await expectProblem(t.request('GET', `${SAMPLES}/not-a-uuid`), 404, 'NOT_FOUND');
    await expectProblem(t.request('GET', `${SAMPLES}/00000000-0000-4000-8000-000000000000`), 404, 'NOT_FOUND');
  });

  it('refuses a bad body with 400 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ limit: 0 }, 'limit'],
      [{ limit: 100_001 }, 'limit'],
      [{ limit: 'ten' }, 'limit'],
      [{ target: 'live' }, 'target'],
      [{ target: 0 }, 'target'],
      [{ samples: 5 }, 'samples'],
    ];
    for (const [body, path] of cases) {
      const problem = await expectProblem(t.request('POST', IMPACT, { body }), 400, 'INVALID_BODY');
      expect(problem.errors.map((e: { path: string }) => e.path), JSON.stringify(body)).toContain(path);
    }
  });

  it('is for admin keys: a validator key gets 403 on both routes', async () => {
    const [example] = (await ok(t.request('POST', IMPACT))).examples;
    await expectProblem(t.request('POST', IMPACT, { key: validatorKey }), 403, 'FORBIDDEN');
    await expectProblem(t.request('GET', `${SAMPLES}/${example.sampleId}`, { key: validatorKey }), 403, 'FORBIDDEN');
  });

  it('keeps each tenant\'s samples its own', async () => {
    const [example] = (await ok(t.request('POST', IMPACT))).examples;
    const other = { key: t.otherAdminKey, tenant: t.otherTenantId };
    await expectProblem(t.request('GET', `${SAMPLES}/${example.sampleId}`, other), 404, 'NOT_FOUND');
    await expectProblem(t.request('POST', IMPACT, other), 404, 'CONTEXT_NOT_FOUND');
    // The other tenant's context of the same name sees only its own samples.
    await ok(t.request('POST', '/api/v1/rules', {
      ...other, body: { context: 'loans', code: 'LIMIT', name: 'LIMIT', fieldPath: 'amount', expression: 'amount <= 1', message: 'm' },
    }), 201);
    await record(t.otherTenantId, 'loans', [{ payload: { amount: 7 }, live: [] }]);
    const theirs = await ok(t.request('POST', IMPACT, other));
    expect(theirs).toMatchObject({ samples: 1, becameInvalid: 1 });
    await expectProblem(t.request('GET', `${SAMPLES}/${theirs.examples[0].sampleId}`), 404, 'NOT_FOUND');
    expect((await ok(t.request('POST', IMPACT))).samples).toBe(7);
  });

  it('compares with a numbered version, and finds nothing changed when the target is what is live', async () => {
    expect(await ok(t.request('POST', IMPACT, { body: { target: 1 } }))).toEqual({
      samples: 7, unchanged: 7, becameInvalid: 0, becameValid: 0, failuresChanged: 0, byRule: [], examples: [],
    });
    // Last, as it publishes the draft: version 2 is live now, and back to version 1 would undo its changes.
    await ok(t.request('POST', '/api/v1/contexts/loans/publish'));
    const back = await ok(t.request('POST', IMPACT, { body: { target: 1 } }));
    expect(back).toMatchObject({ samples: 7, unchanged: 3, becameInvalid: 1, becameValid: 1, failuresChanged: 2 });
    expect(back.byRule).toEqual([
      { ruleCode: 'LIMIT', newFailures: 2, resolvedFailures: 0 },
      { ruleCode: 'MIN', newFailures: 0, resolvedFailures: 2 },
    ]);
    expect(back.examples[0].target).toEqual({ isValid: false, failures: ['LIMIT'] });
    // The draft is what is live: nothing changes.
    expect(await ok(t.request('POST', IMPACT))).toMatchObject({ samples: 7, unchanged: 7, byRule: [], examples: [] });
  });
});
