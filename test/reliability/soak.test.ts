/**
 * Soak: a bounded run of mixed traffic for 20 tenants and 60 contexts,
 * with VALIDATOR_CACHE_SIZE far below the number of contexts, so the cache
 * evicts and recompiles all the time while contexts are republished.
 * Every answer must be right; the cache must stay within its bound; the
 * heap (sampled after full collections) must not keep growing: the last
 * third of the samples is compared with the first third after warm-up,
 * with a generous factor.
 *
 * SOAK_SECONDS sets the length (default 150; CI keeps the default, longer
 * runs are for people hunting leaks).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackgroundLoad, memorySample, report, sleep, summarize } from './support/measure.ts';
import { startService, type Service } from './support/service.ts';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 150);
const TENANTS = 20;
const CONTEXTS_PER_TENANT = 3;
const CACHE_SIZE = 16;
const SAMPLE_EVERY_MS = 2_500;
const CONCURRENCY = 8;

interface Tenant {
  id: string;
  adminKey: string;
  validatorKey: string;
  contexts: { name: string; ruleId: string; version: number; limit: number; busy: boolean }[];
}

/** A small deterministic PRNG, so a failing run can be replayed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('soak', () => {
  let s: Service;
  const tenants: Tenant[] = [];

  beforeAll(async () => {
    s = await startService({ env: { VALIDATOR_CACHE_SIZE: String(CACHE_SIZE) } });
    for (let i = 0; i < TENANTS; i++) {
      const id = `soak-${i}`;
      await s.storage.tenants.ensureTenant(id);
      const adminKey = (await s.app.deps.keys.create(id, 'admin', 'admin')).key;
      const validatorKey = (await s.app.deps.keys.create(id, 'validator', 'validator')).key;
      const tenant: Tenant = { id, adminKey, validatorKey, contexts: [] };
      for (let c = 0; c < CONTEXTS_PER_TENANT; c++) {
        const name = `ctx-${c}`;
        const rule = await s.request('POST', '/api/v1/rules', {
          key: adminKey,
          tenant: id,
          body: { context: name, code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100', message: `over in ${id}` },
        });
        expect(rule.status, rule.text).toBe(201);
        await s.request('POST', '/api/v1/rules', {
          key: adminKey,
          tenant: id,
          body: { context: name, code: 'ITEMS', name: 'Items', forEach: 'items', fieldPath: 'items[].qty', expression: '$value > 0' },
        });
        expect((await s.request('POST', `/api/v1/contexts/${name}/publish`, { key: adminKey, tenant: id })).status).toBe(200);
        tenant.contexts.push({ name, ruleId: rule.body.id, version: rule.body.version, limit: 100, busy: false });
      }
      tenants.push(tenant);
    }
  });
  afterAll(async () => {
    await s?.close();
  });

  it(`runs mixed traffic for ${SECONDS} s with right answers, a bounded cache and a flat heap`, { timeout: (SECONDS + 120) * 1000 }, async () => {
    const random = prng(20261122);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    const counts: Record<string, number> = {};
    const wrong: string[] = [];
    const check = (what: string, ok: boolean, detail: string): boolean => {
      counts[what] = (counts[what] ?? 0) + 1;
      if (!ok && wrong.length < 20) wrong.push(`${what}: ${detail.slice(0, 300)}`);
      return ok;
    };

    const step = async (): Promise<boolean> => {
      const tenant = pick(tenants);
      const context = pick(tenant.contexts);
      const asValidator = { key: tenant.validatorKey, tenant: tenant.id };
      const asAdmin = { key: tenant.adminKey, tenant: tenant.id };
      const roll = random();
      if (roll < 0.6) {
        const over = random() < 0.5;
        const response = await s.request('POST', '/api/v1/validation/validate', {
          ...asValidator,
          body: { context: context.name, payload: { amount: over ? 1000 : 10, items: [{ qty: 1 }, { qty: over ? 0 : 2 }] } },
        });
        return check('validate', response.status === 200 && response.body.isValid === !over && (!over || response.body.failures.length === 2), response.text);
      }
      if (roll < 0.72) {
        const items = Array.from({ length: 25 }, (_, i) => ({ id: `i${i}`, payload: { amount: i % 5 === 0 ? 1000 : 1, items: [] } }));
        const response = await s.request('POST', '/api/v1/validation/validate-batch', { ...asValidator, body: { context: context.name, items } });
        return check('batch', response.status === 200 && response.body.totalFailed === 5, response.text);
      }
      if (roll < 0.84) {
        const response = await s.request('POST', '/api/v1/validation/validate-transaction', {
          ...asValidator,
          body: { transactionId: 'soak', contexts: tenant.contexts.map((c) => c.name), payload: { amount: 10 } },
        });
        return check('transaction', response.status === 200 && response.body.overallResult === 'Approved', response.text);
      }
      if (roll < 0.9) {
        if (context.busy) return true;
        context.busy = true;
        try {
          // Republish with a new limit that keeps the expected answers (10 passes, 1000 fails).
          // A new one: a PUT that changes nothing leaves the rule published, with nothing to publish.
          const limit = 100 + ((context.limit - 100 + 1 + Math.floor(random() * 99)) % 100);
          const updated = await s.request('PUT', `/api/v1/rules/${context.ruleId}`, {
            ...asAdmin,
            body: { name: 'Limit', fieldPath: 'amount', expression: `amount <= ${limit}`, message: `over in ${tenant.id}`, version: context.version },
          });
          if (!check('edit', updated.status === 200, updated.text)) return false;
          context.version = updated.body.version;
          context.limit = limit;
          const published = await s.request('POST', `/api/v1/contexts/${context.name}/publish`, asAdmin);
          return check('publish', published.status === 200 && published.body.published.length === 1, published.text);
        } finally {
          context.busy = false;
        }
      }
      if (roll < 0.95) {
        const response = await s.request('POST', '/api/v1/rules/test', { ...asAdmin, body: { context: context.name, payload: { amount: 1000 } } });
        return check('rule test', response.status === 200 && response.body.isValid === false, response.text);
      }
      const response = await s.request('GET', random() < 0.5 ? '/api/v1/contexts' : `/api/v1/rules?context=${context.name}`, asAdmin);
      return check('list', response.status === 200 && response.body.items.length >= 1, response.text);
    };

    const load = new BackgroundLoad(step, CONCURRENCY);
    const samples: { at: number; heapUsedMiB: number; rssMiB: number; cached: number }[] = [];
    const started = performance.now();
    load.start();
    while (performance.now() - started < SECONDS * 1000) {
      await sleep(SAMPLE_EVERY_MS);
      const cached = s.app.internals.validators.size;
      expect(cached).toBeLessThanOrEqual(CACHE_SIZE);
      samples.push({ at: Math.round((performance.now() - started) / 1000), ...memorySample(), cached });
    }
    const { latencies, failures } = await load.stop();

    // Warm-up: the first 15% of the run (JIT, pools, caches filling).
    const steady = samples.filter((sample) => sample.at >= SECONDS * 0.15);
    const third = Math.max(1, Math.floor(steady.length / 3));
    const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
    const firstHeap = mean(steady.slice(0, third).map((sample) => sample.heapUsedMiB));
    const lastHeap = mean(steady.slice(-third).map((sample) => sample.heapUsedMiB));
    report('soak: requests by kind', counts);
    report('soak: latency ms', summarize(latencies));
    report('soak: throughput req/s', Math.round(latencies.length / SECONDS));
    report('soak: heap MiB first third / last third (after GC)', [Math.round(firstHeap), Math.round(lastHeap)]);
    report('soak: samples (s, heapUsedMiB, rssMiB, cached)', samples.map((sample) => [sample.at, sample.heapUsedMiB, sample.rssMiB, sample.cached]));
    report('soak: compiles', s.app.internals.validators.compileCount);

    expect(failures).toEqual([]);
    expect(wrong).toEqual([]);
    expect(latencies.length).toBeGreaterThan(SECONDS * 20);
    // Contexts outnumber the cache: evictions and recompiles really happened.
    expect(s.app.internals.validators.compileCount).toBeGreaterThan(TENANTS * CONTEXTS_PER_TENANT);
    expect(steady.length).toBeGreaterThanOrEqual(6);
    expect(lastHeap).toBeLessThan(firstHeap * 1.5 + 16);
  });
});
