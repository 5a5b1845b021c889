/**
 * Sampled traffic (docs/operations.md, "Sampling"; docs/api.md, tenant
 * settings), on the real server: an admin turns sampling on and off with
 * PUT /tenant/sampling (bad values are 400 naming the field; every change
 * is audited and shown by GET /tenant); at rate 1 every single validation
 * (on the fast lane and on Fastify's path) and every batch item is stored
 * with its verdict and its payload as sent, transactions are not, and at
 * rate 0 nothing is; old samples go by count and age; DELETE /tenant/samples
 * drops the tenant's samples and no other's; a full queue drops samples and
 * /metrics counts them without naming the tenant or showing the payload
 * (by count, and by payload size); what is queued is written at shutdown;
 * a row the database refuses (a removed tenant) is dropped alone and counted
 * `rejected`, every other sample of the batch, other tenants' too, stored.
 * (Database outage: test/reliability/sampling-outage.test.ts; two instances:
 * test/sync/sampling-instances.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { expectProblem, ok } from '../support/expect-response.ts';
import { metricSample } from '../support/metrics.ts';

const VALIDATE = '/api/v1/validation/validate';
const BATCH = '/api/v1/validation/validate-batch';
const TRANSACTION = '/api/v1/validation/validate-transaction';
const SAMPLING = '/api/v1/tenant/sampling';
const SAMPLES = '/api/v1/tenant/samples';
const HOUR = 3_600_000;

/** Publishes `orders` (amount <= 10, and a customer) for the tenant of `as`. */
async function publishOrders(t: TestApp, as: { tenant?: string; key?: string } = {}): Promise<void> {
  await ok(t.request('POST', '/api/v1/rules', { ...as, body: { context: 'orders', code: 'AMOUNT_MAX', name: 'Amount', fieldPath: 'amount', expression: 'amount <= 10' } }), 201);
  await ok(t.request('POST', '/api/v1/rules', { ...as, body: { context: 'orders', code: 'CUSTOMER', name: 'Customer', fieldPath: 'customer', required: true } }), 201);
  await ok(t.request('POST', '/api/v1/contexts/orders/publish', as));
}

describe('sampling', () => {
  let t: TestApp;
  let validatorKey: string;

  const stored = async (tenant = t.tenantId, context = 'orders') => {
    await t.app.internals.samples.flush();
    return t.storage.samples.newest(tenant, context, 1000);
  };
  const nextMillisecond = async () => {
    const now = Date.now();
    while (Date.now() === now) await new Promise((resolve) => setTimeout(resolve, 1));
  };
  const trail = async (action: string) => (await ok(t.request('GET', `/api/v1/audit?action=${action}`))).items as any[];

  beforeAll(async () => {
    // A writer that runs only when the test flushes it: what is stored is exactly what the test made.
    t = await startTestApp({ sampling: { flushIntervalMs: 3_600_000, pruneIntervalMs: 3_600_000 } });
    await publishOrders(t);
    await publishOrders(t, { tenant: t.otherTenantId, key: t.otherAdminKey });
    validatorKey = (await ok(t.request('POST', '/api/v1/api-keys', { body: { name: 'v', role: 'validator' } }), 201)).key;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is off for a tenant that never set it, and records nothing then', async () => {
    expect((await ok(t.request('GET', '/api/v1/tenant'))).sampling).toEqual({ rate: 0, maxSamples: 10_000, retentionHours: 168 });
    for (let i = 0; i < 5; i++) await ok(t.request('POST', VALIDATE, { key: validatorKey, body: { context: 'orders', payload: { amount: i } } }));
    expect(await stored()).toEqual([]);
  });

  it.each([
    ['no rate', { maxSamples: 10 }, 'rate'],
    ['a rate under 0', { rate: -0.1 }, 'rate'],
    ['a rate over 1', { rate: 1.5 }, 'rate'],
    ['a rate that is not a number', { rate: '0.5' }, 'rate'],
    ['maxSamples 0', { rate: 0.5, maxSamples: 0 }, 'maxSamples'],
    ['maxSamples over 100000', { rate: 0.5, maxSamples: 100_001 }, 'maxSamples'],
    ['a fractional maxSamples', { rate: 0.5, maxSamples: 10.5 }, 'maxSamples'],
    ['retentionHours 0', { rate: 0.5, retentionHours: 0 }, 'retentionHours'],
    ['retentionHours over 720', { rate: 0.5, retentionHours: 721 }, 'retentionHours'],
    ['an unknown field', { rate: 0.5, keepFor: 3 }, 'keepFor'],
  ])('refuses %s with 400 naming the field, and changes nothing', async (_name, body, path) => {
    const problem = await expectProblem(t.request('PUT', SAMPLING, { body }), 400, 'INVALID_BODY');
    expect(problem.errors.map((error: { path: string }) => error.path)).toContain(path);
    expect((await ok(t.request('GET', '/api/v1/tenant'))).sampling.rate).toBe(0);
  });

  it('refuses a validator key with 403', async () => {
    await expectProblem(t.request('PUT', SAMPLING, { key: validatorKey, body: { rate: 1 } }), 403, 'FORBIDDEN');
    await expectProblem(t.request('DELETE', SAMPLES, { key: validatorKey }), 403, 'FORBIDDEN');
    expect((await ok(t.request('GET', '/api/v1/tenant'))).sampling.rate).toBe(0);
  });

  it('sets sampling with default bounds when only the rate is given, shows it, and audits the change', async () => {
    expect(await ok(t.request('PUT', SAMPLING, { body: { rate: 0.25 } }))).toEqual({ rate: 0.25, maxSamples: 10_000, retentionHours: 168 });
    expect(await ok(t.request('PUT', SAMPLING, { body: { rate: 0.5, maxSamples: 500, retentionHours: 24 } })))
      .toEqual({ rate: 0.5, maxSamples: 500, retentionHours: 24 });
    expect((await ok(t.request('GET', '/api/v1/tenant'))).sampling).toEqual({ rate: 0.5, maxSamples: 500, retentionHours: 24 });
    const [latest, first] = await trail('tenant.sampling');
    expect(latest).toMatchObject({
      action: 'tenant.sampling',
      actor: { role: 'admin' },
      before: { sampling: { rate: 0.25, maxSamples: 10_000, retentionHours: 168 } },
      after: { sampling: { rate: 0.5, maxSamples: 500, retentionHours: 24 } },
    });
    expect(first.before).toEqual({ sampling: { rate: 0, maxSamples: 10_000, retentionHours: 168 } });
    // The other tenant's sampling is its own.
    expect((await ok(t.request('GET', '/api/v1/tenant', { tenant: t.otherTenantId, key: t.otherAdminKey }))).sampling.rate).toBe(0);
  });

  it('at rate 1 records every single validation and batch item with its verdict and payload, and no transaction', async () => {
    await ok(t.request('PUT', SAMPLING, { body: { rate: 1 } }));
    const answeredBefore = t.app.internals.fastLane!.answered;
    // The fast lane (a known key, the bare URL) and Fastify's path (a query string) both sample.
    const fast = await ok(t.request('POST', VALIDATE, { key: validatorKey, body: { context: 'orders', payload: { zeta: 1, amount: 5, customer: 'c-1' } } }));
    expect(fast.isValid).toBe(true);
    expect(t.app.internals.fastLane!.answered).toBe(answeredBefore + 1);
    const routed = await ok(t.request('POST', `${VALIDATE}?via=route`, { key: validatorKey, body: { context: 'orders', payload: { amount: 50 } } }));
    expect(routed.isValid).toBe(false);
    expect(t.app.internals.fastLane!.answered).toBe(answeredBefore + 1);
    await ok(t.request('POST', BATCH, {
      key: validatorKey,
      body: { context: 'orders', items: [{ id: 'a', payload: { amount: 1, customer: 'b-1' } }, { id: 'b', payload: { amount: 99, note: 'batch' } }] },
    }));
    await ok(t.request('POST', TRANSACTION, { key: validatorKey, body: { transactionId: 'tx', contexts: ['orders'], payload: { amount: 7, tx: true } } }));
    // A refused request is no sample.
    await expectProblem(t.request('POST', VALIDATE, { key: validatorKey, body: { context: 'missing', payload: { amount: 1 } } }), 404, 'CONTEXT_NOT_FOUND');

    const samples = await stored();
    expect(samples).toHaveLength(4);
    const byPayload = new Map(samples.map((s) => [JSON.stringify(s.payload), s]));
    // Stored as sent, key order kept, with the verdict it got and the version that gave it.
    expect(byPayload.get('{"zeta":1,"amount":5,"customer":"c-1"}')).toMatchObject({ context: 'orders', rulesetVersion: 1, isValid: true, failures: [] });
    expect(byPayload.get('{"amount":50}')).toMatchObject({ isValid: false, failures: ['AMOUNT_MAX', 'CUSTOMER'] });
    expect(byPayload.get('{"amount":1,"customer":"b-1"}')).toMatchObject({ isValid: true, failures: [] });
    expect(byPayload.get('{"amount":99,"note":"batch"}')).toMatchObject({ isValid: false, failures: ['AMOUNT_MAX', 'CUSTOMER'] });
    for (const sample of samples) expect(Date.now() - sample.recordedAt.getTime()).toBeLessThan(60_000);
    // The other tenant does not sample, and sees none of this tenant's samples.
    await ok(t.request('POST', VALIDATE, { tenant: t.otherTenantId, key: t.otherAdminKey, body: { context: 'orders', payload: { amount: 1 } } }));
    expect(await stored(t.otherTenantId)).toEqual([]);
  });

  it('at rate 0 records nothing more', async () => {
    const before = (await stored()).length;
    expect(await ok(t.request('PUT', SAMPLING, { body: { rate: 0 } }))).toEqual({ rate: 0, maxSamples: 10_000, retentionHours: 168 });
    for (let i = 0; i < 5; i++) await ok(t.request('POST', VALIDATE, { key: validatorKey, body: { context: 'orders', payload: { amount: i } } }));
    await ok(t.request('POST', BATCH, { key: validatorKey, body: { context: 'orders', items: [{ id: 'a', payload: { amount: 1 } }] } }));
    expect(await stored()).toHaveLength(before);
  });

  it('keeps the newest maxSamples per context and drops samples past the retention', async () => {
    await ok(t.request('PUT', SAMPLING, { body: { rate: 1, maxSamples: 3, retentionHours: 24 } }));
    // Each in a millisecond of its own: samples of the same millisecond have no order between them
    // (recorded_at has the clock's resolution, and the id that breaks the tie is random).
    for (let i = 0; i < 6; i++) {
      await ok(t.request('POST', VALIDATE, { key: validatorKey, body: { context: 'orders', payload: { n: i } } }));
      await nextMillisecond();
    }
    await t.app.internals.samples.flush();
    // Samples older than the retention, in another context of the tenant and in the other tenant (whose retention is the default week).
    const old = new Date(Date.now() - 30 * HOUR);
    const record = { rulesetVersion: 1, isValid: true, failures: [], payload: { old: true }, recordedAt: old };
    await t.storage.samples.insertMany([
      { ...record, tenantId: t.tenantId, context: 'archive' },
      { ...record, tenantId: t.otherTenantId, context: 'orders' },
    ]);

    await t.app.internals.samples.prune();
    const kept = await stored();
    expect(kept.map((s) => s.payload)).toEqual([{ n: 5 }, { n: 4 }, { n: 3 }]);
    expect(await stored(t.tenantId, 'archive')).toEqual([]);
    expect((await stored(t.otherTenantId)).map((s) => s.payload)).toEqual([{ old: true }]);
  });

  it('deletes every sample of the tenant, and no other tenant\'s, and audits it', async () => {
    await ok(t.request('PUT', SAMPLING, { body: { rate: 1 } }));
    await ok(t.request('POST', VALIDATE, { key: validatorKey, body: { context: 'orders', payload: { queued: true } } }));
    // One in the queue, not yet written: it goes too.
    expect(t.app.internals.samples.stats.queued).toBe(1);
    expect(await ok(t.request('DELETE', SAMPLES))).toEqual({ deleted: 3 });
    expect(await stored()).toEqual([]);
    expect(await stored(t.otherTenantId)).toHaveLength(1);
    const [entry] = await trail('tenant.samples-delete');
    expect(entry).toMatchObject({ action: 'tenant.samples-delete', actor: { role: 'admin' }, after: { deleted: 3 } });
    expect(await ok(t.request('DELETE', SAMPLES))).toEqual({ deleted: 0 });
    await ok(t.request('PUT', SAMPLING, { body: { rate: 0 } }));
  });
});

describe('sampling with a full queue', () => {
  let t: TestApp;
  const lines: string[] = [];
  const SECRET = 'payload-secret-7f3a';

  beforeAll(async () => {
    t = await startTestApp({
      env: { LOG_LEVEL: 'info' },
      logStream: { write: (line) => void lines.push(line) },
      sampling: { maxQueued: 2, flushIntervalMs: 3_600_000, pruneIntervalMs: 3_600_000 },
    });
    await publishOrders(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('drops what does not fit and counts it in /metrics, without the tenant, context or payload', async () => {
    await ok(t.request('PUT', SAMPLING, { body: { rate: 1 } }));
    const items = Array.from({ length: 5 }, (_, i) => ({ id: `i${i}`, payload: { amount: i, secret: SECRET } }));
    const answer = await ok(t.request('POST', BATCH, { body: { context: 'orders', items } }));
    // Every item is answered, sampled or not.
    expect(answer.totalProcessed).toBe(5);
    expect(await metricSample(t, 'rules_samples_queued')).toBe(2);
    expect(await metricSample(t, 'rules_samples_dropped_total{reason="queue_full"}')).toBe(3);
    await t.app.internals.samples.flush();
    expect(await metricSample(t, 'rules_samples_written_total')).toBe(2);
    expect(await metricSample(t, 'rules_samples_dropped_total{reason="write_failed"}')).toBe(0);
    // A batch's items share one time: the two that fitted, in any order.
    const kept = (await t.storage.samples.newest(t.tenantId, 'orders', 10)).map((s) => s.payload);
    expect(kept).toHaveLength(2);
    expect(kept).toEqual(expect.arrayContaining([items[0].payload, items[1].payload]));

    const metrics = (await t.request('GET', '/metrics', { key: null, tenant: null })).text;
    for (const text of [metrics, lines.join('')]) {
      expect(text).not.toContain(SECRET);
    }
    expect(metrics.split('\n').filter((line) => line.startsWith('rules_samples')).join('\n')).not.toMatch(/acme|orders/);
  });
});

describe('sampling with large payloads', () => {
  let t: TestApp;

  beforeAll(async () => {
    // Room for many samples by count, but only for small payloads by size (values plus characters / 16).
    t = await startTestApp({ sampling: { maxQueued: 100, maxQueuedSize: 50, flushIntervalMs: 3_600_000, pruneIntervalMs: 3_600_000 } });
    await publishOrders(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('drops a sample whose payload does not fit the queue\'s size bound, and keeps the small ones', async () => {
    await ok(t.request('PUT', SAMPLING, { body: { rate: 1 } }));
    const large = { amount: 1, list: Array.from({ length: 60 }, (_, i) => i) };
    const items = [{ id: 'large', payload: large }, { id: 'a', payload: { amount: 1 } }, { id: 'b', payload: { amount: 2 } }];
    expect((await ok(t.request('POST', BATCH, { body: { context: 'orders', items } }))).totalProcessed).toBe(3);
    expect(await metricSample(t, 'rules_samples_dropped_total{reason="queue_full"}')).toBe(1);
    await t.app.internals.samples.flush();
    const kept = (await t.storage.samples.newest(t.tenantId, 'orders', 10)).map((s) => s.payload);
    expect(kept).toEqual(expect.arrayContaining([{ amount: 1 }, { amount: 2 }]));
    expect(kept).toHaveLength(2);
  });

  it('writes what is queued when the service shuts down', async () => {
    await ok(t.request('POST', VALIDATE, { body: { context: 'orders', payload: { amount: 3, last: true } } }));
    expect(t.app.internals.samples.stats.queued).toBe(1);
    await t.restart();
    const stored = (await t.storage.samples.newest(t.tenantId, 'orders', 10)).map((s) => s.payload);
    expect(stored).toContainEqual({ amount: 3, last: true });
  });
});

describe('sampling writes around a row the database refuses', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ sampling: { flushIntervalMs: 3_600_000, pruneIntervalMs: 3_600_000 } });
    await publishOrders(t);
    await publishOrders(t, { tenant: t.otherTenantId, key: t.otherAdminKey });
    await ok(t.request('PUT', SAMPLING, { body: { rate: 1 } }));
    await ok(t.request('PUT', SAMPLING, { tenant: t.otherTenantId, key: t.otherAdminKey, body: { rate: 1 } }));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('stores every other sample of both tenants, drops and counts only the refused one, and the impact report replays what was stored', async () => {
    const sampler = t.app.internals.samples;
    // Odd but valid JSON (a NUL, a lone surrogate, a long key) is stored as sent: `payload` is a `json` column, which keeps the text.
    const odd = { amount: 50, note: 'a\u0000b', broken: '\ud800', ['k'.repeat(5000)]: true };
    await ok(t.request('POST', VALIDATE, { body: { context: 'orders', payload: { amount: 1, customer: 'c-1' } } }));
    await ok(t.request('POST', VALIDATE, { tenant: t.otherTenantId, key: t.otherAdminKey, body: { context: 'orders', payload: { amount: 2, customer: 'o-1' } } }));
    // A sample whose tenant was removed after it was recorded: the samples table's foreign key refuses that row.
    sampler.record('removed-tenant', 'orders', 1, Date.now(), true, [], { amount: 3 }, 1);
    await ok(t.request('POST', VALIDATE, { body: { context: 'orders', payload: odd } }));
    await ok(t.request('POST', BATCH, {
      tenant: t.otherTenantId, key: t.otherAdminKey,
      body: { context: 'orders', items: [{ id: 'a', payload: { amount: 4, customer: 'o-2' } }, { id: 'b', payload: { amount: 40 } }] },
    }));
    expect(sampler.stats.queued).toBe(6);

    await sampler.flush();
    expect(sampler.stats.queued).toBe(0);
    expect(await metricSample(t, 'rules_samples_written_total')).toBe(5);
    expect(await metricSample(t, 'rules_samples_dropped_total{reason="rejected"}')).toBe(1);
    expect(await metricSample(t, 'rules_samples_dropped_total{reason="write_failed"}')).toBe(0);

    const own = await t.storage.samples.newest(t.tenantId, 'orders', 10);
    expect(own.map((s) => s.payload)).toEqual(expect.arrayContaining([{ amount: 1, customer: 'c-1' }, odd]));
    expect(own).toHaveLength(2);
    const stored = own.find((s) => (s.payload as { note?: string }).note !== undefined)!;
    // Exactly as sent, through the sample route too.
    expect((await ok(t.request('GET', `/api/v1/contexts/orders/samples/${stored.id}`))).payload).toEqual(odd);
    const other = await t.storage.samples.newest(t.otherTenantId, 'orders', 10);
    expect(other.map((s) => s.payload)).toEqual(expect.arrayContaining([{ amount: 2, customer: 'o-1' }, { amount: 4, customer: 'o-2' }, { amount: 40 }]));
    expect(other).toHaveLength(3);

    // The impact report of each tenant replays its stored samples (the draft is the live rules: nothing changes).
    expect(await ok(t.request('POST', '/api/v1/contexts/orders/impact'))).toMatchObject({ samples: 2, unchanged: 2 });
    expect(await ok(t.request('POST', '/api/v1/contexts/orders/impact', { tenant: t.otherTenantId, key: t.otherAdminKey })))
      .toMatchObject({ samples: 3, unchanged: 3 });
  });

  it('isolates a refused row in a batch of several statements: every other row of every statement is stored, and the count is exact', async () => {
    const sampler = t.app.internals.samples;
    const before = sampler.stats;
    const now = Date.now();
    // 1,100 samples (three insert statements of at most 500), the refused one in the second.
    for (let i = 0; i < 1100; i++) {
      if (i === 700) sampler.record('removed-tenant', 'archive', 1, now, true, [], { n: i }, 1);
      sampler.record(i % 2 === 0 ? t.tenantId : t.otherTenantId, 'archive', 1, now, true, [], { n: i }, 1);
    }
    await sampler.flush();
    expect(sampler.stats).toMatchObject({
      written: before.written + 1100, droppedRejected: before.droppedRejected + 1, droppedWriteFailed: before.droppedWriteFailed, queued: 0,
    });
    const own = await t.storage.samples.newest(t.tenantId, 'archive', 2000);
    const other = await t.storage.samples.newest(t.otherTenantId, 'archive', 2000);
    expect(own).toHaveLength(550);
    expect(other).toHaveLength(550);
    expect(new Set([...own, ...other].map((s) => (s.payload as { n: number }).n)).size).toBe(1100);
  });
});
