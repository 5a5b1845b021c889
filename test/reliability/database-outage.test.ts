/**
 * The database goes away during traffic (docs/operations.md): contexts already
 * cached keep validating, uncached contexts and management calls get 503
 * SERVICE_UNAVAILABLE with Retry-After within 5 s, /health/ready is 503,
 * and everything recovers by itself within 10 s once the database is back.
 *
 * The app reaches PostgreSQL through a TCP proxy (test/support/proxy.ts)
 * that is cut and restored; the shared server keeps running for every other
 * test file. Two kinds of outage: the server resetting connections (a
 * crash or restart) and a network partition where packets just vanish.
 *
 * PGlite runs inside the process and cannot go away by itself; closing it
 * is final, and that case is covered by test/http/cache.test.ts.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CutMode } from '../support/proxy.ts';
import { BackgroundLoad, report, sleep } from './support/measure.ts';
import { startService, type Service, type ServiceResponse } from './support/service.ts';

const VALIDATE = '/api/v1/validation/validate';
/** docs/operations.md: 503 within 5 s, recovery within 10 s. Checked as stated, with no extra slack. */
const UNAVAILABLE_WITHIN_MS = 5_000;
const RECOVERED_WITHIN_MS = 10_000;

async function timed(run: () => Promise<ServiceResponse>): Promise<{ response: ServiceResponse; ms: number }> {
  const started = performance.now();
  const response = await run();
  return { response, ms: performance.now() - started };
}

function expectUnavailable(response: ServiceResponse, ms: number, what: string): void {
  expect(response.status, `${what}: ${response.text}`).toBe(503);
  expect(response.body.code).toBe('SERVICE_UNAVAILABLE');
  expect(response.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(retryAfter, what).toBeGreaterThanOrEqual(1);
  expect(retryAfter, what).toBeLessThanOrEqual(10);
  expect(ms, `${what} took ${ms} ms`).toBeLessThan(UNAVAILABLE_WITHIN_MS);
  for (const leak of ['ECONNRESET', 'ECONNREFUSED', 'timeout', 'pg', 'SELECT', ' at ']) expect(response.text).not.toContain(leak);
}

/** Polls `check` until it is true; returns how long that took, or fails after `withinMs`. */
async function until(check: () => Promise<boolean>, withinMs: number, what: string): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await check()) return performance.now() - started;
    if (performance.now() - started > withinMs) throw new Error(`${what} did not happen within ${withinMs} ms`);
    await sleep(100);
  }
}

describe.skipIf(!process.env.DATABASE_URL).each<[CutMode, string]>([
  ['reset', 'the server resets every connection'],
  ['blackhole', 'a network partition swallows every packet'],
])('PostgreSQL outage through a TCP proxy: %s (%s)', (mode) => {
  let s: Service;
  let validatorKey: string;
  let traffic: BackgroundLoad;

  const validate = (context: string, payload: unknown = { amount: 1 }, key = validatorKey) =>
    s.request('POST', VALIDATE, { key, body: { context, payload } });

  beforeAll(async () => {
    s = await startService({ proxied: true });
    for (const context of ['cached', 'uncached', 'also-cached']) {
      const created = await s.request('POST', '/api/v1/rules', { body: { context, code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 10' } });
      expect(created.status, created.text).toBe(201);
      expect((await s.request('POST', `/api/v1/contexts/${context}/publish`)).status).toBe(200);
    }
    s.app.internals.validators.invalidate(s.tenantId, 'uncached');
    validatorKey = (await s.request('POST', '/api/v1/api-keys', { body: { name: 'traffic', role: 'validator' } })).body.key;
    expect((await validate('cached')).status).toBe(200);
    expect((await validate('also-cached')).status).toBe(200);
    traffic = new BackgroundLoad(async () => {
      const response = await validate('cached', { amount: 11 });
      return response.status === 200 && response.body.isValid === false;
    }, 2);
    traffic.start();
    await sleep(300);
    s.proxy!.cut(mode);
  });

  afterAll(async () => {
    await traffic?.stop();
    await s?.close();
  });

  it('cached contexts keep validating, by single, batch and transaction', async () => {
    const single = await validate('cached', { amount: 11 });
    expect(single.status, single.text).toBe(200);
    expect(single.body.failures.map((f: { ruleCode: string }) => f.ruleCode)).toEqual(['LIMIT']);
    const batch = await s.request('POST', '/api/v1/validation/validate-batch', { key: validatorKey, body: { context: 'cached', items: [{ id: 'a', payload: { amount: 1 } }] } });
    expect(batch.status, batch.text).toBe(200);
    const transaction = await s.request('POST', '/api/v1/validation/validate-transaction', {
      key: validatorKey,
      body: { transactionId: 't', contexts: ['cached', 'also-cached'], payload: { amount: 1 } },
    });
    expect(transaction.status, transaction.text).toBe(200);
    expect(transaction.body.overallResult).toBe('Approved');
  });

  it('an uncached context gets 503 with Retry-After within 5 s', async () => {
    const { response, ms } = await timed(() => validate('uncached'));
    report(`outage (${mode}): uncached validate ms`, Math.round(ms));
    expectUnavailable(response, ms, 'uncached validate');
  });

  it('a transaction that needs an uncached context gets 503 within 5 s', async () => {
    const { response, ms } = await timed(() => s.request('POST', '/api/v1/validation/validate-transaction', {
      key: validatorKey,
      body: { transactionId: 't', contexts: ['cached', 'uncached'], payload: {} },
    }));
    expectUnavailable(response, ms, 'transaction');
  });

  it.each([
    ['GET', '/api/v1/rules', undefined],
    ['GET', '/api/v1/contexts', undefined],
    ['POST', '/api/v1/rules', { context: 'new', code: 'NEW', name: 'n', expression: 'true' }],
    ['POST', '/api/v1/contexts/cached/publish', undefined],
    ['POST', '/api/v1/api-keys', { name: 'k', role: 'validator' }],
    ['POST', '/api/v1/rules/test', { context: 'cached', payload: {} }],
  ])('management %s %s gets 503 with Retry-After within 5 s', async (method, path, body) => {
    const { response, ms } = await timed(() => s.request(method, path, { body }));
    report(`outage (${mode}): ${method} ${path} ms`, Math.round(ms));
    expectUnavailable(response, ms, `${method} ${path}`);
  });

  it('a key never seen before cannot be checked: 503, not a wrong 401', async () => {
    const { response, ms } = await timed(() => validate('cached', {}, `rk_${'x'.repeat(43)}`));
    expectUnavailable(response, ms, 'unknown key');
  });

  it('/health/ready is 503 within 5 s while /health/live stays 200', async () => {
    const { response, ms } = await timed(() => s.request('GET', '/health/ready', {}));
    expectUnavailable(response, ms, '/health/ready');
    expect((await s.request('GET', '/health/live', {})).status).toBe(200);
  });

  it('recovers by itself within 10 s of the database coming back', async () => {
    s.proxy!.restore();
    const ready = await until(async () => (await s.request('GET', '/health/ready', {})).status === 200, RECOVERED_WITHIN_MS, 'ready');
    const uncached = await until(async () => (await validate('uncached', { amount: 11 })).status === 200, RECOVERED_WITHIN_MS, 'uncached validate');
    const management = await until(async () => (await s.request('GET', '/api/v1/rules')).status === 200, RECOVERED_WITHIN_MS, 'management');
    report(`outage (${mode}): recovered after restore (ms)`, { ready: Math.round(ready), uncached: Math.round(uncached), management: Math.round(management) });
    // And writes work again end to end.
    const rule = await s.request('POST', '/api/v1/rules', { body: { context: 'uncached', code: 'AFTER', name: 'after', expression: 'false' } });
    expect(rule.status, rule.text).toBe(201);
    const published = await s.request('POST', '/api/v1/contexts/uncached/publish');
    expect(published.status, published.text).toBe(200);
    const after = await validate('uncached', { amount: 1 });
    // Seen once in a CI rehearsal under full-suite load (blackhole): no failures, as if the cache still held the
    // version before the publish. The likely cause, since fixed, is the one the next test checks for: a pooled
    // connection left inside a repeatable-read transaction begun during the partition, whose old snapshot the
    // publish then read its drafts from. The message says which version the publish made and which one the cache holds.
    const cached = s.app.internals.validators.peek(s.tenantId, 'uncached')?.rulesetVersion;
    expect(after.body.failures.map((f: { ruleCode: string }) => f.ruleCode), `published ${published.text}; cached version ${cached}`).toEqual(['AFTER']);
  });

  it('leaves no database connection inside a transaction it gave up on', async () => {
    // The statements that timed out during the partition reach the server
    // once it heals; a connection kept after its timeout would then sit
    // inside their transaction, and the next request to borrow it would
    // write into it or fail on it. Every session of the service's database:
    const sessions = async (): Promise<Array<{ state: string; query: string }>> => {
      const admin = new pg.Client({ connectionString: s.database.databaseUrl });
      await admin.connect();
      try {
        const { rows } = await admin.query(
          'select state, query from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
        );
        return rows;
      } finally {
        await admin.end();
      }
    };
    const inTransaction = (all: Array<{ state: string; query: string }>) => all.filter((session) => session.state?.startsWith('idle in transaction'));
    expect(inTransaction(await sessions())).toEqual([]);
    // And requests that need many connections at once all get a working one.
    for (let round = 0; round < 3; round++) {
      const responses = await Promise.all(Array.from({ length: 12 }, () => s.request('GET', '/api/v1/rules')));
      expect(responses.map((response) => response.status)).toEqual(responses.map(() => 200));
    }
    expect(inTransaction(await sessions())).toEqual([]);
  });

  it('the cached traffic never failed through the outage and the recovery', async () => {
    const { latencies, failures } = await traffic.stop();
    report(`outage (${mode}): cached traffic`, { requests: latencies.length, failures: failures.length, maxMs: Math.round(latencies.reduce((a, b) => Math.max(a, b), 0)) });
    expect(failures).toEqual([]);
    expect(latencies.length).toBeGreaterThan(20);
  });
});

describe.skipIf(!!process.env.DATABASE_URL)('database outage on PGlite', () => {
  it.skip('needs PostgreSQL (set DATABASE_URL): PGlite runs inside the process and cannot go away and come back; closing it is covered by test/http/cache.test.ts', () => {});
});
