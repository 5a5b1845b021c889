/**
 * Samples bounded in bytes, on the real server (docs/operations.md,
 * "Sampling"): a tenant's stored sample bytes stay within
 * SAMPLES_MAX_BYTES_PER_TENANT however many contexts it samples, its oldest
 * samples going first and no other tenant's; a payload over
 * SAMPLE_MAX_PAYLOAD_BYTES is validated but not sampled, and counted
 * `too_large`; an impact report replays at most the context's maxSamples
 * newest samples even before the sweep drops the rest, and replays every
 * sample when they are more bytes than one page holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TUNING } from '../../src/tuning.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ok } from '../support/expect-response.ts';
import { metricSample } from '../support/metrics.ts';

const VALIDATE = '/api/v1/validation/validate';
const BUDGET = 65_536;
const MAX_PAYLOAD = 16_384;
/** The writer runs only when the test flushes it, and the minute's sweep never: what is stored is what the writes left. */
const MANUAL = { flushIntervalMs: 3_600_000, pruneIntervalMs: 3_600_000 };

async function publish(t: TestApp, context: string, as: { tenant?: string; key?: string } = {}): Promise<void> {
  await ok(t.request('POST', '/api/v1/rules', { ...as, body: { context, code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 10' } }), 201);
  await ok(t.request('POST', `/api/v1/contexts/${context}/publish`, as));
}

/** The bytes of a tenant's stored samples, as read back: payload and failing rule codes as JSON text. */
async function storedBytes(t: TestApp, tenantId: string): Promise<{ bytes: number; notes: string[] }> {
  let bytes = 0;
  const notes: string[] = [];
  for (const context of await t.storage.samples.contexts(tenantId)) {
    for (const sample of await t.storage.samples.newest(tenantId, context, 100_000)) {
      bytes += Buffer.byteLength(JSON.stringify(sample.payload)) + Buffer.byteLength(JSON.stringify(sample.failures));
      notes.push((sample.payload as { note: string }).note);
    }
  }
  return { bytes, notes };
}

describe('sample bytes', () => {
  let t: TestApp;
  const contexts = ['c1', 'c2', 'c3', 'c4'];
  const validate = (context: string, note: string, size: number, as: { tenant?: string; key?: string } = {}) =>
    ok(t.request('POST', VALIDATE, { ...as, body: { context, payload: { amount: 1, note, blob: 'x'.repeat(size) } } }));

  beforeAll(async () => {
    t = await startTestApp({ env: { SAMPLES_MAX_BYTES_PER_TENANT: String(BUDGET), SAMPLE_MAX_PAYLOAD_BYTES: String(MAX_PAYLOAD) }, sampling: MANUAL });
    for (const context of contexts) await publish(t, context);
    await publish(t, 'c1', { tenant: t.otherTenantId, key: t.otherAdminKey });
    await ok(t.request('PUT', '/api/v1/tenant/sampling', { body: { rate: 1 } }));
    await ok(t.request('PUT', '/api/v1/tenant/sampling', { tenant: t.otherTenantId, key: t.otherAdminKey, body: { rate: 1 } }));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('keeps a tenant\'s stored sample bytes within its budget across all its contexts, dropping the oldest first', async () => {
    const other = { tenant: t.otherTenantId, key: t.otherAdminKey };
    await validate('c1', 'other-1', 10_000, other);
    await validate('c1', 'other-2', 10_000, other);
    let sent = 0;
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 8; i++) {
        await validate(contexts[sent % 4], `n${sent++}`, 10_000);
        // Each in a millisecond of its own: samples recorded in the same millisecond have no order between them (docs/api.md).
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      await t.app.internals.samples.flush();
      const { bytes } = await storedBytes(t, t.tenantId);
      expect(bytes).toBeLessThanOrEqual(BUDGET);
      expect(await t.storage.samples.storedBytes(t.tenantId)).toBe(bytes);
    }
    // 40 samples of about 10 KB were written; the newest that fit are kept, in every context.
    const { bytes, notes } = await storedBytes(t, t.tenantId);
    expect(bytes).toBeGreaterThan(BUDGET - 11_000);
    const kept = notes.map((note) => Number(note.slice(1))).sort((a, b) => a - b);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => 40 - kept.length + i));
    expect(await t.storage.samples.contexts(t.tenantId)).toEqual(contexts);
    // The other tenant's samples are its own budget's business.
    expect((await storedBytes(t, t.otherTenantId)).notes.sort()).toEqual(['other-1', 'other-2']);
  });

  it('does not sample a payload over SAMPLE_MAX_PAYLOAD_BYTES, validates it, and counts it too_large', async () => {
    const before = await metricSample(t, 'rules_samples_dropped_total{reason="too_large"}');
    expect((await validate('c2', 'too-large', MAX_PAYLOAD)).isValid).toBe(true);
    await validate('c2', 'small', 100);
    await t.app.internals.samples.flush();
    const { notes } = await storedBytes(t, t.tenantId);
    expect(notes).toContain('small');
    expect(notes).not.toContain('too-large');
    expect(await metricSample(t, 'rules_samples_dropped_total{reason="too_large"}')).toBe(before + 1);
  });
});

describe('impact reads', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ sampling: MANUAL });
    await publish(t, 'loans');
  });
  afterAll(async () => {
    await t?.close();
  });

  const record = (count: number, size: number, from: number) => t.storage.samples.insertMany(Array.from({ length: count }, (_, i) => ({
    tenantId: t.tenantId, context: 'loans', recordedAt: new Date(from + i * 1000), rulesetVersion: 1, isValid: true, failures: [],
    payload: { amount: 20, blob: 'y'.repeat(size) },
  })));

  it('replays at most the context\'s maxSamples newest samples, even before the sweep drops the rest', async () => {
    await ok(t.request('PUT', '/api/v1/tenant/sampling', { body: { rate: 0, maxSamples: 5 } }));
    await record(12, 10, Date.now() - 60_000);
    expect(await ok(t.request('POST', '/api/v1/contexts/loans/impact', { body: { limit: 100 } }))).toMatchObject({ samples: 5 });
    expect(await ok(t.request('POST', '/api/v1/contexts/loans/impact'))).toMatchObject({ samples: 5 });
    expect(await ok(t.request('POST', '/api/v1/contexts/loans/impact', { body: { limit: 3 } }))).toMatchObject({ samples: 3 });
  });

  it('replays every sample asked for when they hold more bytes than one read takes', async () => {
    await ok(t.request('PUT', '/api/v1/tenant/sampling', { body: { rate: 0, maxSamples: 1000 } }));
    const size = 60_000;
    const count = Math.ceil((2.5 * TUNING.impactBytesPerRead.value) / size);
    await record(count, size, Date.now());
    const page = await t.storage.samples.newestBefore(t.tenantId, 'loans', 1000, undefined, TUNING.impactBytesPerRead.value);
    expect(page.length).toBeLessThan(count);
    expect(page.reduce((total, sample) => total + JSON.stringify(sample.payload).length, 0)).toBeLessThanOrEqual(TUNING.impactBytesPerRead.value);
    expect(await ok(t.request('POST', '/api/v1/contexts/loans/impact', { body: { limit: 1000 } }))).toMatchObject({ samples: count + 12 });
  });
});
