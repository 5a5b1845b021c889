/**
 * Concurrency (docs/api.md):
 * - transactions running while their contexts are republished always see
 *   one consistent set of versions: each context's rule fails with a
 *   message naming its generation, contexts are republished one after the
 *   other in a fixed order, so any moment's state has the form "the first k
 *   contexts at generation g+1, the rest at g"; every transaction result
 *   must have that form (also with a validator cache smaller than the
 *   transaction, so contexts are loaded from the database mid-request, and
 *   on PostgreSQL with the publishes made by a second instance);
 * - a burst of first requests after a publish compiles nothing more, and a
 *   burst on a cold cache compiles once;
 * - on PostgreSQL, concurrent publishes of one context from two app
 *   instances serialize cleanly: consecutive versions, nothing published
 *   twice or lost, and both instances end on the same ruleset.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackgroundLoad, report, sleep } from './support/measure.ts';
import { startService, type Instance, type Service, type ServiceResponse } from './support/service.ts';

const CONTEXTS = ['c0', 'c1', 'c2', 'c3', 'c4'];
const TRANSACTION = '/api/v1/validation/validate-transaction';

/** Generation per context from a transaction result (each context has one rule failing with `gen-<n>`). */
function generations(response: ServiceResponse): Record<string, number> {
  expect(response.status, response.text).toBe(200);
  const out: Record<string, number> = {};
  for (const result of response.body.contextResults as { context: string; failures: { message: string }[] }[]) {
    expect(result.failures).toHaveLength(1);
    out[result.context] = Number(result.failures[0].message.slice('gen-'.length));
  }
  return out;
}

/** True when the generations in publish order read g+1, ..., g+1, g, ..., g. */
function isMomentOfTheSequence(byContext: Record<string, number>): boolean {
  const sequence = CONTEXTS.map((context) => byContext[context]);
  const low = sequence[sequence.length - 1];
  if (sequence[0] - low > 1) return false;
  for (let i = 1; i < sequence.length; i++) if (sequence[i] > sequence[i - 1]) return false;
  return true;
}

const onPostgres = !!process.env.DATABASE_URL;

describe.each([
  ['a cache larger than the transaction', '1000', false],
  ['a cache of 2 validators for 5 contexts', '2', false],
  ['a large cache, republished by another instance (PostgreSQL)', '1000', true],
  ['a cache of 2, republished by another instance (PostgreSQL)', '2', true],
].filter(([, , remote]) => onPostgres || !remote))('transactions while their contexts are republished, with %s', (_name, cacheSize, remote) => {
  let s: Service;
  /** Where the publishes are made: this instance, or a second one on the same database. */
  let publisher: Instance;
  const ruleIds: Record<string, string> = {};
  const ruleVersions: Record<string, number> = {};

  beforeAll(async () => {
    s = await startService({ env: { VALIDATOR_CACHE_SIZE: String(cacheSize) } });
    publisher = remote ? await s.startInstance() : s;
    for (const context of CONTEXTS) {
      const rule = await s.request('POST', '/api/v1/rules', { body: { context, code: 'GEN', name: 'generation', expression: 'false', message: 'gen-1' } });
      expect(rule.status, rule.text).toBe(201);
      ruleIds[context] = rule.body.id;
      ruleVersions[context] = rule.body.version;
      expect((await s.request('POST', `/api/v1/contexts/${context}/publish`)).status).toBe(200);
    }
  });
  afterAll(async () => {
    await s?.close();
  });

  it('every result is one moment of the publish sequence', async () => {
    const seen: Record<string, number>[] = [];
    const wrong: Record<string, number>[] = [];
    // Contexts in a different order in each request: consistency must not depend on it.
    const orders = [CONTEXTS, [...CONTEXTS].reverse(), ['c2', 'c0', 'c4', 'c1', 'c3']];
    let n = 0;
    const load = new BackgroundLoad(async () => {
      const contexts = orders[n++ % orders.length];
      const byContext = generations(await s.request('POST', TRANSACTION, { body: { transactionId: `t${n}`, contexts, payload: {} } }));
      seen.push(byContext);
      if (!isMomentOfTheSequence(byContext)) wrong.push(byContext);
      return true;
    }, 4);
    load.start();
    const GENERATIONS = 12;
    for (let generation = 2; generation <= GENERATIONS; generation++) {
      for (const context of CONTEXTS) {
        // The publisher acts as a client would on a loaded machine: a 503
        // (the database did not answer within its timeout) is retried, and a
        // retried edit that had in fact been applied is recognised.
        let updated = await retryingUnavailable(() => publisher.request('PUT', `/api/v1/rules/${ruleIds[context]}`, {
          body: { name: 'generation', expression: 'false', message: `gen-${generation}`, version: ruleVersions[context] },
        }));
        if (updated.status === 409) updated = await publisher.request('GET', `/api/v1/rules/${ruleIds[context]}`);
        expect(updated.status, updated.text).toBe(200);
        expect(updated.body.message).toBe(`gen-${generation}`);
        ruleVersions[context] = updated.body.version;
        expect((await retryingUnavailable(() => publisher.request('POST', `/api/v1/contexts/${context}/publish`))).status).toBe(200);
      }
    }
    await sleep(50);
    const { failures } = await load.stop();
    const mixed = seen.filter((byContext) => new Set(Object.values(byContext)).size > 1).length;
    report(`transactions during republishing (cache ${cacheSize}${remote ? ', remote publisher' : ''})`, { transactions: seen.length, spanningAPublish: mixed, inconsistent: wrong.length, first: wrong.slice(0, 3) });
    expect(failures).toEqual([]);
    expect(seen.length).toBeGreaterThan(50);
    expect(wrong).toEqual([]);
    // The last generation is live everywhere once the publishes are done (other instances follow within a second).
    const started = performance.now();
    for (;;) {
      const last = generations(await s.request('POST', TRANSACTION, { body: { transactionId: 'last', contexts: CONTEXTS, payload: {} } }));
      if (Object.values(last).every((generation) => generation === GENERATIONS)) break;
      expect(performance.now() - started, JSON.stringify(last)).toBeLessThan(5_000);
      await sleep(50);
    }
  });
});

describe('bursts of first requests', () => {
  let s: Service;
  let validatorKey: string;

  beforeAll(async () => {
    s = await startService();
    validatorKey = (await s.request('POST', '/api/v1/api-keys', { body: { name: 'v', role: 'validator' } })).body.key;
  });
  afterAll(async () => {
    await s?.close();
  });

  const burst = (context: string): Promise<ServiceResponse[]> =>
    Promise.all(Array.from({ length: 60 }, (_, i) => {
      if (i % 3 === 0) return s.request('POST', '/api/v1/validation/validate', { key: validatorKey, body: { context, payload: { amount: 5 } } });
      if (i % 3 === 1) return s.request('POST', '/api/v1/validation/validate-batch', { key: validatorKey, body: { context, items: [{ id: 'a', payload: { amount: 5 } }] } });
      return s.request('POST', TRANSACTION, { key: validatorKey, body: { transactionId: 't', contexts: [context], payload: { amount: 5 } } });
    }));

  it('after a publish: the publish compiled, the burst compiles nothing', async () => {
    await s.request('POST', '/api/v1/rules', { body: { context: 'fresh', code: 'MAX', name: 'max', fieldPath: 'amount', expression: 'amount <= 1' } });
    const before = s.app.internals.validators.compileCount;
    expect((await s.request('POST', '/api/v1/contexts/fresh/publish')).status).toBe(200);
    expect(s.app.internals.validators.compileCount - before).toBe(1);
    const responses = await burst('fresh');
    for (const response of responses) expect(response.status, response.text).toBe(200);
    expect(s.app.internals.validators.compileCount - before).toBe(1);
  });

  it('on a cold cache: 60 concurrent first requests over three routes compile once', async () => {
    s.app.internals.validators.invalidate(s.tenantId, 'fresh');
    const before = s.app.internals.validators.compileCount;
    const responses = await burst('fresh');
    for (const response of responses) expect(response.status, response.text).toBe(200);
    expect(s.app.internals.validators.compileCount - before).toBe(1);
  });
});

describe.skipIf(!process.env.DATABASE_URL)('concurrent publishes from two app instances on one PostgreSQL database', () => {
  let s: Service;
  let other: Instance;

  beforeAll(async () => {
    s = await startService();
    other = await s.startInstance();
    const seed = await s.request('POST', '/api/v1/rules', { body: { context: 'shared', code: 'SEED', name: 'seed', expression: 'true' } });
    expect(seed.status).toBe(201);
    expect((await s.request('POST', '/api/v1/contexts/shared/publish')).status).toBe(200);
  });
  afterAll(async () => {
    await s?.close();
  });

  const rulesetVersion = async (instance: Instance): Promise<number> => {
    const contexts = await instance.request('GET', '/api/v1/contexts');
    return contexts.body.items.find((item: { context: string }) => item.context === 'shared').rulesetVersion;
  };

  it('context publishes racing from both instances get consecutive versions; nothing is published twice or lost', async () => {
    const ROUNDS = 8;
    for (let round = 0; round < ROUNDS; round++) {
      const drafts: string[] = [];
      for (const [instance, side] of [[s, 'a'], [other, 'b']] as const) {
        for (let i = 0; i < 5; i++) {
          const rule = await instance.request('POST', '/api/v1/rules', { body: { context: 'shared', code: `R${round}_${side}${i}`, name: 'r', expression: 'false', message: `${round}` } });
          expect(rule.status, rule.text).toBe(201);
          drafts.push(rule.body.id);
        }
      }
      const before = await rulesetVersion(s);
      const results = await Promise.all([s, other].map((instance) => instance.request('POST', '/api/v1/contexts/shared/publish')));
      for (const result of results) expect(result.status, result.text).toBe(200);
      const nonEmpty = results.filter((result) => result.body.published.length > 0);
      const published = results.flatMap((result) => result.body.published as string[]);
      // Every draft published exactly once, by one of the two.
      expect([...published].sort()).toEqual([...drafts].sort());
      const versions = nonEmpty.map((result) => result.body.rulesetVersion).sort((a: number, b: number) => a - b);
      expect(versions).toEqual(nonEmpty.map((_, i) => before + 1 + i));
      expect(await rulesetVersion(s)).toBe(before + nonEmpty.length);
    }
    const drafts = await s.request('GET', '/api/v1/rules?context=shared&status=draft&limit=500');
    expect(drafts.body.items).toEqual([]);
  });

  it('single-rule publishes racing from both instances all go live', async () => {
    const ids: Array<[Instance, string]> = [];
    for (let i = 0; i < 10; i++) {
      const instance = i % 2 === 0 ? s : other;
      const rule = await instance.request('POST', '/api/v1/rules', { body: { context: 'shared', code: `ONE_${i}`, name: 'one', expression: 'false' } });
      ids.push([instance, rule.body.id]);
    }
    const before = await rulesetVersion(s);
    const results = await Promise.all(ids.map(([instance, id]) => instance.request('POST', `/api/v1/rules/${id}/publish`)));
    for (const result of results) expect(result.status, result.text).toBe(200);
    expect(await rulesetVersion(other)).toBe(before + ids.length);
  });

  it('both instances validate with the final ruleset soon after', async () => {
    // Every rule of the context fails on {}: 8 rounds of 10 plus 10 single publishes. Either
    // instance may have made the last publish, so each one is polled until it serves the final
    // ruleset (a publish seen through a notice within ms; the safety net bounds a missed one).
    const expected = 8 * 10 + 10;
    const started = performance.now();
    for (const [name, instance] of [['first', s], ['second', other]] as const) {
      for (;;) {
        const response = await instance.request('POST', '/api/v1/validation/validate', { body: { context: 'shared', payload: {} } });
        if (response.body.failures.length === expected) break;
        if (performance.now() - started > 5_000) throw new Error(`the ${name} instance still validates with ${response.body.failures.length} failures, not ${expected}`);
        await sleep(50);
      }
    }
    report('both instances serve the final ruleset after the last publish (ms)', Math.round(performance.now() - started));
  });
});

/** Sends again, up to five times, while the answer is 503 SERVICE_UNAVAILABLE (honouring a short Retry-After). */
async function retryingUnavailable(send: () => Promise<ServiceResponse>): Promise<ServiceResponse> {
  let response = await send();
  for (let attempt = 1; attempt < 5 && response.status === 503; attempt++) {
    await sleep(250 * attempt);
    response = await send();
  }
  return response;
}
