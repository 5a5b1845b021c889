/**
 * The compiled-validator cache seen from outside: a publish is visible to
 * the very next request, a restart compiles each context once however many
 * requests race for it, state survives a restart, versions never go
 * backwards, the cache stays within its bound, and a database outage spares
 * contexts already cached (docs/api.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.ts';
import { metricSample, sampleOf } from '../support/metrics.ts';
import { ValidatorCache } from '../../src/validators/validator-cache.ts';
import { compileAhead } from '../../src/validators/early-compile.ts';
import type { LiveRuleset } from '../../src/storage/types.ts';

const VALIDATE = '/api/v1/validation/validate';
/** Validator lookups answered from memory (GET /metrics). */
const CACHE_HITS = 'rules_validator_cache_hits_total';

async function ok(response: Promise<TestResponse>, status = 200): Promise<any> {
  const resolved = await response;
  expect(resolved.status, resolved.text).toBe(status);
  return resolved.body;
}

async function publish(t: TestApp, context: string, rules: Record<string, unknown>[]): Promise<string[]> {
  const ids: string[] = [];
  for (const rule of rules) {
    ids.push((await ok(t.request('POST', '/api/v1/rules', { body: { context, ...rule } }), 201)).id);
  }
  await ok(t.request('POST', `/api/v1/contexts/${context}/publish`));
  return ids;
}

const limitRule = (max: number) => ({ code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: `amount <= ${max}`, message: 'over' });

describe('one service across changes and restarts', () => {
  let t: TestApp;
  let ruleId: string;
  let validatorKey: string;

  beforeAll(async () => {
    t = await startTestApp();
    [ruleId] = await publish(t, 'orders', [limitRule(100)]);
    validatorKey = (await ok(t.request('POST', '/api/v1/api-keys', { body: { name: 'v', role: 'validator' } }), 201)).key;
  });
  afterAll(async () => {
    await t?.close();
  });

  const validate = (context: string, payload: unknown) =>
    ok(t.request('POST', VALIDATE, { body: { context, payload }, key: validatorKey }));

  it('sees a publish through storage and validators.install on the next request', async () => {
    expect((await validate('orders', { amount: 150 })).isValid).toBe(false);
    const { validators } = t.app.deps;
    const rule = await t.storage.rules.get(t.tenantId, ruleId);
    const { expression: _old, ...content } = rule!;
    await t.storage.rules.update(t.tenantId, ruleId, rule!.version, { ...content, expression: 'amount <= 200' });
    const { live } = await t.storage.rules.publishRule(t.tenantId, ruleId, (next) => validators.compile(next));
    validators.install(live);
    expect((await validate('orders', { amount: 150 })).isValid).toBe(true);
  });

  it('sees a publish through the management API on the next request', async () => {
    const rule = await ok(t.request('GET', `/api/v1/rules/${ruleId}`));
    await ok(t.request('PUT', `/api/v1/rules/${ruleId}`, { body: { ...rule, expression: 'amount <= 50' } }));
    // Edited but not yet published: the live version still answers.
    expect((await validate('orders', { amount: 150 })).isValid).toBe(true);
    await ok(t.request('POST', `/api/v1/rules/${ruleId}/publish`));
    expect((await validate('orders', { amount: 60 })).isValid).toBe(false);
  });

  it('sees an archive on the next request', async () => {
    const [extra] = await publish(t, 'orders', [{ code: 'EXTRA', name: 'Extra', expression: 'false', message: 'always' }]);
    expect((await validate('orders', { amount: 1 })).failures.map((f: any) => f.ruleCode)).toEqual(['EXTRA']);
    await ok(t.request('DELETE', `/api/v1/rules/${extra}`), 204);
    expect((await validate('orders', { amount: 1 })).isValid).toBe(true);
  });

  it('compiles a context publish once, before its transaction, and serves it under the new version', async () => {
    await publish(t, 'early', [limitRule(10)]);
    const rule = (await ok(t.request('GET', '/api/v1/rules?context=early'))).items[0];
    await ok(t.request('PUT', `/api/v1/rules/${rule.id}`, { body: { ...rule, expression: 'amount <= 20' } }));
    const before = t.app.internals.validators.compileCount;
    const published = await ok(t.request('POST', '/api/v1/contexts/early/publish'));
    expect(t.app.internals.validators.compileCount - before).toBe(1);
    expect(t.app.deps.validators.peek(t.tenantId, 'early')!.rulesetVersion).toBe(published.rulesetVersion);
    expect((await validate('early', { amount: 15 })).isValid).toBe(true);
    expect((await validate('early', { amount: 25 })).isValid).toBe(false);
  });

  it('compiles again inside the transaction when an edit landed after the early compile', async () => {
    const { validators } = t.app.deps;
    const [id] = await publish(t, 'raced', [limitRule(10)]);
    const rule = await t.storage.rules.get(t.tenantId, id);
    const { expression: _old, ...content } = rule!;
    const first = await t.storage.rules.update(t.tenantId, id, rule!.version, { ...content, expression: 'amount <= 20' });
    const before = t.app.internals.validators.compileCount;
    const seen: string[] = [];
    let runs = 0;
    const { live } = await compileAhead(validators, async (compile) => {
      runs++;
      // Another admin's edit, between the dry run (and its compile) and the real run.
      if (runs === 2) await t.storage.rules.update(t.tenantId, id, first.version, { ...content, expression: 'amount <= 30' });
      return t.storage.rules.publishContext(t.tenantId, 'raced', async (next) => {
        seen.push(next.rules[0].expression!);
        return compile(next);
      });
    });
    validators.install(live!);
    expect(runs).toBe(2);
    expect(seen).toEqual(['amount <= 20', 'amount <= 30']);
    expect(t.app.internals.validators.compileCount - before).toBe(2);
    expect((await validate('raced', { amount: 25 })).isValid).toBe(true);
    expect((await validate('raced', { amount: 35 })).isValid).toBe(false);
  });

  it('hands the dry run\'s rules to the real run when the same rule versions go live, and records what changed', async () => {
    const { validators } = t.app.deps;
    const [id] = await publish(t, 'reread', [limitRule(10), { ...limitRule(50), code: 'OTHER' }]);
    const rule = await t.storage.rules.get(t.tenantId, id);
    const { expression: _old, ...content } = rule!;
    await t.storage.rules.update(t.tenantId, id, rule!.version, { ...content, expression: 'amount <= 20' });
    const seen: LiveRuleset[] = [];
    const { result, live } = await compileAhead(validators, (compile) => {
      const watched = async (next: LiveRuleset) => {
        seen.push(next);
        return compile(next);
      };
      // As the routes pass compileAhead's beforeCommit: with the ruleset its dry run read.
      return t.storage.rules.publishContext(t.tenantId, 'reread', Object.assign(watched, { readBefore: compile.readBefore }));
    });
    validators.install(live!);
    expect(seen).toHaveLength(2);
    // The same rules, not read and converted again.
    expect(seen[1].rules).toBe(seen[0].rules);
    expect(result.changes).toEqual({ added: [], changed: ['LIMIT'], removed: [] });
    const version = await ok(t.request('GET', `/api/v1/contexts/reread/versions/${result.rulesetVersion}`));
    expect(version.rules.map((r: any) => [r.code, r.expression])).toEqual([['LIMIT', 'amount <= 20'], ['OTHER', 'amount <= 50']]);
    expect((await validate('reread', { amount: 15 })).isValid).toBe(true);
    expect((await validate('reread', { amount: 25 })).isValid).toBe(false);
  });

  it('runs an operation with nothing to make live once: its dry run was the operation', async () => {
    const draft = await ok(t.request('POST', '/api/v1/rules', { body: { context: 'drafts', ...limitRule(5) } }), 201);
    const before = t.app.internals.validators.compileCount;
    await ok(t.request('DELETE', `/api/v1/rules/${draft.id}`), 204);
    expect(t.app.internals.validators.compileCount).toBe(before);
    expect(await ok(t.request('GET', `/api/v1/rules/${draft.id}`))).toMatchObject({ status: 'archived' });
  });

  it('compiles a rule publish, an archive and a rollback once each, before their transactions', async () => {
    const [first] = await publish(t, 'cycle', [limitRule(10)]);
    const second = await ok(t.request('POST', '/api/v1/rules', { body: { context: 'cycle', ...limitRule(20), code: 'SECOND' } }), 201);
    let before = t.app.internals.validators.compileCount;
    await ok(t.request('POST', `/api/v1/rules/${second.id}/publish`));
    expect(t.app.internals.validators.compileCount - before).toBe(1);
    expect((await validate('cycle', { amount: 15 })).failures.map((f: { ruleCode: string }) => f.ruleCode)).toEqual(['LIMIT']);
    before = t.app.internals.validators.compileCount;
    await ok(t.request('DELETE', `/api/v1/rules/${first}`), 204);
    expect(t.app.internals.validators.compileCount - before).toBe(1);
    expect((await validate('cycle', { amount: 15 })).isValid).toBe(true);
    before = t.app.internals.validators.compileCount;
    const rolled = await ok(t.request('POST', '/api/v1/contexts/cycle/rollback', { body: { rulesetVersion: 1 } }));
    expect(t.app.internals.validators.compileCount - before).toBe(1);
    expect(t.app.deps.validators.peek(t.tenantId, 'cycle')!.rulesetVersion).toBe(rolled.rulesetVersion);
    expect((await validate('cycle', { amount: 15 })).failures.map((f: { ruleCode: string }) => f.ruleCode)).toEqual(['LIMIT']);
  });

  it('refuses a publish whose drafts do not compile before opening its transaction, and nothing goes live', async () => {
    const [id] = await publish(t, 'broken', [limitRule(10)]);
    const rule = await t.storage.rules.get(t.tenantId, id);
    const { expression: _old, ...content } = rule!;
    // Stored as only a compiler change could leave it: POST /rules would refuse it.
    await t.storage.rules.update(t.tenantId, id, rule!.version, { ...content, expression: 'process.exit(1)' });
    const refused = await t.request('POST', '/api/v1/contexts/broken/publish');
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'INVALID_BODY', errors: [expect.objectContaining({ path: 'expression' })] });
    expect((await t.storage.rules.liveRuleset(t.tenantId, 'broken'))!.rules[0].expression).toBe('amount <= 10');
    expect((await validate('broken', { amount: 15 })).isValid).toBe(false);
  });

  it('never replaces a cached validator with an older version', async () => {
    const { validators } = t.app.deps;
    const current = validators.get(t.tenantId, 'orders')!;
    const older = await validators.compile({ tenantId: t.tenantId, context: 'orders', rulesetVersion: current.rulesetVersion - 1, rules: [] });
    validators.install(older);
    expect(validators.get(t.tenantId, 'orders')!.rulesetVersion).toBe(current.rulesetVersion);
    expect((await validate('orders', { amount: 60 })).isValid).toBe(false);
  });

  it('compiles once when 20 requests race for a context after a restart', async () => {
    await t.restart();
    const before = t.app.internals.validators.compileCount;
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => t.request('POST', VALIDATE, { body: { context: 'orders', payload: { amount: 60 } }, key: validatorKey })),
    );
    for (const response of responses) {
      expect(response.status).toBe(200);
      expect(response.body.isValid).toBe(false);
    }
    expect(t.app.internals.validators.compileCount - before).toBe(1);
  });

  it('keeps rules, keys and versions across a restart', async () => {
    await t.restart();
    // The validator key was created through the API before both restarts.
    expect((await validate('orders', { amount: 60 })).failures).toEqual([expect.objectContaining({ ruleCode: 'LIMIT' })]);
    expect((await validate('orders', { amount: 10 })).isValid).toBe(true);
    const rule = await ok(t.request('GET', `/api/v1/rules/${ruleId}`));
    expect(rule).toMatchObject({ status: 'published', expression: 'amount <= 50' });
  });
});

describe('cache bound in bytes', () => {
  let t: TestApp;
  // 20 rules of about 1,000 characters: about 400 KB estimated each (20 bytes per
  // character of rule text), so two fit in 1 MiB and three do not.
  const bigRule = (context: string) => ({
    code: 'BIG', name: 'Big', fieldPath: 'amount', expression: `amount <= 10 && ${Array.from({ length: 45 }, (_, k) => `amount != ${k + 1000}`).join(' && ')}`,
    message: `${context}: {{ $value }} ${'x'.repeat(190)}`,
  });

  beforeAll(async () => {
    t = await startTestApp({ env: { VALIDATOR_CACHE_MB: '1' } });
    for (const context of ['a', 'b', 'c']) {
      const rules = Array.from({ length: 20 }, (_, i) => ({ ...bigRule(context), code: `BIG${i}` }));
      await publish(t, context, rules);
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  it('keeps the estimated heap within VALIDATOR_CACHE_MB, dropping the least recently used, and reloads an evicted one', async () => {
    const { validators } = t.app.internals;
    const one = validators.peek(t.tenantId, 'c')!.estimatedBytes;
    expect(one).toBeGreaterThan(1024 * 1024 / 3);
    expect(one).toBeLessThan(1024 * 1024 / 2);
    for (const context of ['a', 'b', 'c', 'a', 'b', 'c']) {
      const body = await ok(t.request('POST', VALIDATE, { body: { context, payload: { amount: 11 } } }));
      expect(body.failures).toHaveLength(20);
      expect(body.failures[0].message.startsWith(`${context}: 11 `)).toBe(true);
      expect(validators.bytes).toBeLessThanOrEqual(1024 * 1024);
      expect(validators.size).toBeLessThanOrEqual(Math.floor(1024 * 1024 / one));
    }
    expect(validators.peek(t.tenantId, 'c')).toBeDefined();
    expect(validators.peek(t.tenantId, 'a')).toBeUndefined();
    expect(await metricSample(t, 'rules_validator_cache_bytes')).toBe(validators.bytes);
  });
});

describe('cache bound', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ env: { VALIDATOR_CACHE_SIZE: '2' } });
    for (const context of ['a', 'b', 'c']) await publish(t, context, [limitRule(10)]);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('keeps at most VALIDATOR_CACHE_SIZE validators and reloads an evicted one', async () => {
    for (const context of ['a', 'b', 'c', 'a', 'b', 'c']) {
      const body = await ok(t.request('POST', VALIDATE, { body: { context, payload: { amount: 11 } } }));
      expect(body.isValid).toBe(false);
      expect(t.app.internals.validators.size).toBeLessThanOrEqual(2);
    }
  });

  it('evicts the least recently used', async () => {
    const { validators } = t.app.internals;
    await ok(t.request('POST', VALIDATE, { body: { context: 'a', payload: {} } }));
    await ok(t.request('POST', VALIDATE, { body: { context: 'b', payload: {} } }));
    await ok(t.request('POST', VALIDATE, { body: { context: 'a', payload: {} } }));
    await ok(t.request('POST', VALIDATE, { body: { context: 'c', payload: {} } }));
    expect(validators.get(t.tenantId, 'a')).toBeDefined();
    expect(validators.get(t.tenantId, 'c')).toBeDefined();
    expect(validators.get(t.tenantId, 'b')).toBeUndefined();
  });

  it('does not count listing the contexts as a use: neither kept from eviction nor a cache hit', async () => {
    const { validators } = t.app.internals;
    await ok(t.request('POST', VALIDATE, { body: { context: 'b', payload: {} } }));
    await ok(t.request('POST', VALIDATE, { body: { context: 'a', payload: {} } }));
    const hitsBefore = await metricSample(t, CACHE_HITS);
    // The listing reads a and b (in that order) from the cache; were that a use, b would be the newer.
    const listing = await ok(t.request('GET', '/api/v1/contexts'));
    expect(listing.items.filter((item: { compiledAt: string | null }) => item.compiledAt !== null).map((item: { context: string }) => item.context))
      .toEqual(['a', 'b']);
    expect(await metricSample(t, CACHE_HITS)).toBe(hitsBefore);
    await ok(t.request('POST', VALIDATE, { body: { context: 'c', payload: {} } }));
    expect(validators.peek(t.tenantId, 'a')).toBeDefined();
    expect(validators.peek(t.tenantId, 'b')).toBeUndefined();
  });
});

describe('database outage', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
    await publish(t, 'cached', [limitRule(10)]);
    await publish(t, 'uncached', [limitRule(10)]);
    t.app.deps.validators.invalidate(t.tenantId, 'uncached');
    await ok(t.request('POST', VALIDATE, { body: { context: 'cached', payload: { amount: 1 } } }));
    // The database goes away under the running app.
    await t.storage.close();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('keeps validating contexts already cached', async () => {
    const body = await ok(t.request('POST', VALIDATE, { body: { context: 'cached', payload: { amount: 11 } } }));
    expect(body.isValid).toBe(false);
  });

  it('answers an uncached context with 503 and Retry-After', async () => {
    const response = await t.request('POST', VALIDATE, { body: { context: 'uncached', payload: {} } });
    expect(response.status).toBe(503);
    expect(response.body.code).toBe('SERVICE_UNAVAILABLE');
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('answers management calls with 503', async () => {
    const response = await t.request('GET', '/api/v1/rules');
    expect(response.status).toBe(503);
    expect(response.body.code).toBe('SERVICE_UNAVAILABLE');
  });

  it('reports not ready', async () => {
    const response = await t.request('GET', '/health/ready', { key: null, tenant: null });
    expect(response.status).toBe(503);
    expect((await t.request('GET', '/health/live')).status).toBe(200);
  });
});

describe('a load racing a publish at the cache bound', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
    for (const context of ['race', 'other']) await publish(t, context, [limitRule(10)]);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('never caches what it read before a publish whose validator was installed and then evicted', async () => {
    // Real storage; the first read of "race" is held after it returns, as a
    // slow compile or a busy event loop would hold it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reads = 0;
    const validators = new ValidatorCache({
      rules: {
        async liveRuleset(tenantId, context) {
          const ruleset = await t.storage.rules.liveRuleset(tenantId, context);
          if (context === 'race' && reads++ === 0) await held;
          return ruleset;
        },
      },
      maxEntries: 1,
      limits: {},
    });
    const slowLoad = validators.load(t.tenantId, 'race');
    while (reads === 0) await new Promise((resolve) => setTimeout(resolve, 5));

    // Version 2 goes live and is installed, as the publish route does; then
    // another context's load evicts it (one validator fits).
    await ok(t.request('POST', '/api/v1/rules', { body: { context: 'race', ...limitRule(5), code: 'LIMIT5' } }), 201);
    const { live } = await compileAhead(validators, (compile) => t.storage.rules.publishContext(t.tenantId, 'race', compile));
    validators.install(live!);
    expect(validators.peek(t.tenantId, 'race')?.rulesetVersion).toBe(2);
    await validators.load(t.tenantId, 'other');
    expect(validators.peek(t.tenantId, 'race')).toBeUndefined();

    release();
    // The held load answers its own caller with what it read...
    expect((await slowLoad)?.rulesetVersion).toBe(1);
    // ...but leaves nothing older than version 2 behind for later requests.
    expect(validators.peek(t.tenantId, 'race')).toBeUndefined();
    const next = await validators.load(t.tenantId, 'race');
    expect(next?.rulesetVersion).toBe(2);
    expect(next?.validate({ amount: 7 }, Date.now()).failures.map((failure) => failure.ruleCode)).toEqual(['LIMIT5']);
  });
});

describe('contexts without a published ruleset', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ env: { METRICS_TENANT_LABELS: 'true' } });
    await publish(t, 'orders', [limitRule(100)]);
  });
  afterAll(async () => {
    await t?.close();
  });

  const ghost = (i: number) => t.request('POST', VALIDATE, { body: { context: `ghost-${i}`, payload: {} } });

  it('are remembered for their time to live, and then forgotten even when nobody asks again', async () => {
    const { validators } = t.app.internals;
    const started = Date.now();
    for (let i = 0; i < 30; i++) expect((await ghost(i)).status).toBe(404);
    // All 30 are held when they arrived within the 500 ms; on a machine so
    // loaded that they did not, the earliest have rightly expired already.
    if (Date.now() - started < 450) expect(validators.unknownContexts).toBe(30);
    else expect(validators.unknownContexts).toBeGreaterThan(0);
    // Past the 500 ms they are remembered for, the next one sweeps the expired ones out.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await ghost(1000)).status).toBe(404);
    expect(validators.unknownContexts).toBe(1);
  });

  it('are held up to a bound, the oldest dropped first (real storage, a clock that stands still)', async () => {
    const validators = new ValidatorCache({ rules: t.storage.rules, maxEntries: 10, limits: {}, maxUnknownContexts: 5, now: () => 1000 });
    for (let i = 0; i < 8; i++) expect(await validators.load(t.tenantId, `nothing-${i}`)).toBeNull();
    expect(validators.unknownContexts).toBe(5);
    // The newest five are still answered from memory, with no database read behind them.
    const loads: string[] = [];
    const counting = new ValidatorCache({
      rules: { liveRuleset: (tenantId, context) => (loads.push(context), t.storage.rules.liveRuleset(tenantId, context)) },
      maxEntries: 10, limits: {}, maxUnknownContexts: 2, now: () => 1000,
    });
    for (const context of ['a', 'b', 'c', 'c', 'b', 'a']) await counting.load(t.tenantId, context);
    // a, b, c read; c and b remembered; a was dropped for c, so it is read again.
    expect(loads).toEqual(['a', 'b', 'c', 'a']);
  });

  it('count as cache misses without a context label, so callers cannot grow the metrics', async () => {
    const unlabelled = 'rules_validator_cache_misses_total{tenant="acme",context=""}';
    const scrape = async () => (await t.request('GET', '/metrics', { key: null, tenant: null })).text;
    const before = sampleOf(await scrape(), unlabelled) ?? 0;
    for (let i = 0; i < 5; i++) expect((await ghost(2000 + i)).status).toBe(404);
    const text = await scrape();
    expect(text).not.toContain('ghost-');
    expect(sampleOf(text, unlabelled)).toBe(before + 5);
    // A context with a ruleset keeps its label: after a restart its first request is a miss.
    await t.restart();
    expect((await t.request('POST', VALIDATE, { body: { context: 'orders', payload: { amount: 1 } } })).status).toBe(200);
    expect(sampleOf(await scrape(), 'rules_validator_cache_misses_total{tenant="acme",context="orders"}')).toBe(1);
  });
});
