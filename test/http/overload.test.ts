/**
 * Overload protection (docs/operations.md, "Isolation and overload"):
 * while the process is overloaded, management requests get 503
 * SERVICE_UNAVAILABLE with Retry-After and /health/ready is 503 saying why,
 * while the three validations, liveness and metrics are answered as ever;
 * once it recovers, everything is answered again.
 *
 * Real causes: the event loop lagging (this test shares the in-process
 * server's event loop and holds it in busy loops, as heavy work on the
 * loop would), a pressure source of the kind the management work queue
 * plugs in, past its limit, and the server process (the bundle `npm start`
 * runs) stopped in bursts by the kernel, as a container's CPU quota does.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { ok } from '../support/expect-response.ts';
import { startInstance, type Instance } from '../support/instances.ts';
import { sampleOf } from '../support/metrics.ts';

/** Lower than the default, so that the test's busy loops are unmistakably past it. */
const MAX_DELAY_MS = 100;
/** How long the process takes to notice a change, at most: a few of its half-second samples. */
const POLL = { timeout: 10_000, interval: 100 };

const RULE = { context: 'loan', code: 'AMOUNT_MAX', name: 'Amount limit', fieldPath: 'amount', expression: 'amount <= 10000' };

let t: TestApp;
let lines: string[];
let ruleId: string;

/** An app with `env`, its log lines, and one published rule in `loan`. */
async function setUp(env: Record<string, string>): Promise<void> {
  lines = [];
  const own = lines;
  t = await startTestApp({ env: { ...env, LOG_LEVEL: 'info' }, logStream: { write: (line) => void own.push(line) } });
  // This process's first requests (the embedded database's first queries, first compiles) can hold its
  // loop past 100 ms, and the instance sheds for a moment: the set-up retries, as a client would.
  ruleId = (await ok(answered(() => t.request('POST', '/api/v1/rules', { body: RULE })), 201)).id as string;
  await ok(answered(() => t.request('POST', '/api/v1/contexts/loan/publish')));
  // The fast lane takes keys the auth hook has seen: this introduces the admin key.
  await ok(t.request('POST', '/api/v1/validation/validate', { body: { context: 'loan', payload: { amount: 1 } } }));
}

/** The answer to `send`, sent again while the instance is overloaded. */
async function answered<R extends { status: number }>(send: () => Promise<R>): Promise<R> {
  let response = await send();
  for (const started = performance.now(); response.status === 503 && performance.now() - started < POLL.timeout;) {
    await new Promise((resolve) => setTimeout(resolve, POLL.interval));
    response = await send();
  }
  return response;
}

/** Holds the loop 150 ms out of about every 200, as heavy work on it would: every half-second window's delay is past 100 ms. */
function stallTheLoop(): () => void {
  const stall = setInterval(() => {
    const end = performance.now() + 150;
    while (performance.now() < end);
  }, 50);
  return () => clearInterval(stall);
}

const readiness = (): Promise<TestResponse> => t.request('GET', '/health/ready', { key: null, tenant: null });

async function metrics(): Promise<string> {
  const response = await t.request('GET', '/metrics', { key: null, tenant: null });
  expect(response.status).toBe(200);
  return response.text;
}

/** A 503 for overload, naming `reason`. */
function expectOverloaded(response: Pick<TestResponse, 'status' | 'headers' | 'body'>, reason: RegExp): void {
  expect(response.status).toBe(503);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.headers.get('retry-after')).toBe('5');
  expect(response.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
  expect(response.body.detail).toMatch(/^The instance is overloaded \(/);
  expect(response.body.detail).toMatch(reason);
  expect(response.body.detail).toContain('still answers validations');
}

/** The three validation operations and the unauthenticated endpoints answer as ever. */
async function expectDataPlaneServed(): Promise<void> {
  const answeredBefore = t.app.internals.fastLane?.answered ?? 0;
  const single = await ok(t.request('POST', '/api/v1/validation/validate', { body: { context: 'loan', payload: { amount: 20_000 } } }));
  expect(single).toMatchObject({ isValid: false, failures: [{ ruleCode: 'AMOUNT_MAX' }] });
  // The single validation was the fast lane's: shedding left it on.
  expect(t.app.internals.fastLane?.answered).toBe(answeredBefore + 1);
  const batch = await ok(t.request('POST', '/api/v1/validation/validate-batch', {
    body: { context: 'loan', items: [{ id: 'a', payload: { amount: 1 } }, { id: 'b', payload: { amount: 20_000 } }] },
  }));
  expect(batch).toMatchObject({ totalProcessed: 2, totalFailed: 1 });
  const transaction = await ok(t.request('POST', '/api/v1/validation/validate-transaction', {
    body: { transactionId: 'tx-1', contexts: ['loan'], payload: { amount: 1 } },
  }));
  expect(transaction).toMatchObject({ overallResult: 'Approved' });
  expect((await t.request('GET', '/health/live', { key: null, tenant: null })).status).toBe(200);
}

/** Readiness and management requests are back. */
async function expectRecovered(): Promise<void> {
  await expect.poll(async () => (await readiness()).body, POLL).toEqual({ status: 'ready' });
  await expect.poll(async () => (await t.request('GET', `/api/v1/rules/${ruleId}`)).status, POLL).toBe(200);
  await expect.poll(async () => sampleOf(await metrics(), 'rules_overload_shedding'), POLL).toBe(0);
}

describe('overload protection: the event loop', () => {
  beforeAll(() => setUp({ MAX_EVENT_LOOP_DELAY_MS: String(MAX_DELAY_MS) }));
  afterAll(() => t?.close());

  it('sees the fast lane on, the instance ready and nothing shed while the loop keeps up', async () => {
    expect(t.app.internals.fastLane).toBeDefined();
    await expect.poll(async () => (await readiness()).status, POLL).toBe(200);
    const text = await metrics();
    expect(sampleOf(text, 'rules_overload_shedding')).toBeLessThanOrEqual(1);
    expect(sampleOf(text, 'rules_event_loop_delay_p99_seconds')).toBeGreaterThanOrEqual(0);
    expect(sampleOf(text, 'rules_event_loop_delay_max_seconds')).toBeGreaterThanOrEqual(0);
    expect(sampleOf(text, 'rules_overload_pressure_ratio{source="event_loop_delay"}')).toBeGreaterThanOrEqual(0);
  });

  it('sheds management requests, not validations, while the event loop lags, and recovers once it keeps up', async () => {
    const stop = stallTheLoop();
    try {
      await expect.poll(async () => (await readiness()).status, POLL).toBe(503);
      expectOverloaded(await readiness(), /event loop delay \d+ ms, over its limit of 100 ms/);

      const shedBefore = sampleOf(await metrics(), 'rules_overload_shed_total') ?? 0;
      expectOverloaded(await t.request('GET', `/api/v1/rules/${ruleId}`), /event loop delay/);
      expectOverloaded(await t.request('POST', '/api/v1/rules/test', {
        body: { rule: RULE, payload: { amount: 1 } },
      }), /event loop delay/);
      await expectDataPlaneServed();

      const text = await metrics();
      expect(sampleOf(text, 'rules_overload_shedding')).toBe(1);
      expect(sampleOf(text, 'rules_overload_shed_total')).toBeGreaterThanOrEqual(shedBefore + 2);
      expect(sampleOf(text, 'rules_event_loop_delay_p99_seconds')).toBeGreaterThan(MAX_DELAY_MS / 1000);
      expect(sampleOf(text, 'rules_event_loop_delay_max_seconds')).toBeGreaterThan(MAX_DELAY_MS / 1000);
      expect(sampleOf(text, 'rules_overload_pressure_ratio{source="event_loop_delay"}')).toBeGreaterThan(1);
    } finally {
      stop();
    }
    await expectRecovered();
    expect(lines.some((line) => line.includes('"level":40') && line.includes('overloaded (event loop delay'))).toBe(true);
    expect(lines.some((line) => line.includes('no longer overloaded'))).toBe(true);
  });
});

describe('overload protection: a watched pressure source, with MAX_EVENT_LOOP_DELAY_MS=0', () => {
  beforeAll(() => setUp({ MAX_EVENT_LOOP_DELAY_MS: '0' }));
  afterAll(() => t?.close());

  it('never sheds for the event loop: its delay is measured, and no limit is exported for it', async () => {
    const stop = stallTheLoop();
    try {
      await expect.poll(async () => sampleOf(await metrics(), 'rules_event_loop_delay_p99_seconds'), POLL).toBeGreaterThan(MAX_DELAY_MS / 1000);
      expect((await readiness()).status).toBe(200);
      await ok(t.request('GET', `/api/v1/rules/${ruleId}`));
    } finally {
      stop();
    }
    expect(sampleOf(await metrics(), 'rules_overload_pressure_ratio{source="event_loop_delay"}')).toBeUndefined();
  });

  it('refuses nothing for one reading over the limit: shedding needs two in a row', async () => {
    let reads = 0;
    t.app.internals.overload.watch({ name: 'lone_spike', read: () => (++reads === 1 ? 100 : 0), limit: 10 });
    await expect.poll(() => reads, POLL).toBeGreaterThanOrEqual(4);
    expect((await readiness()).status).toBe(200);
    expect(sampleOf(await metrics(), 'rules_overload_shed_total')).toBe(0);
    expect(lines.filter((line) => line.includes('overloaded ('))).toEqual([]);
  });

  it('sheds while a source (the management queue\'s kind) is past its limit, before authentication and the rate limit', async () => {
    let queued = 0;
    t.app.internals.overload.watch({ name: 'test_queue', read: () => queued, limit: 10 });
    queued = 11;
    await expect.poll(async () => (await readiness()).status, POLL).toBe(503);
    expectOverloaded(await readiness(), /test queue 11, over its limit of 10/);

    const shed = await t.request('DELETE', `/api/v1/rules/${ruleId}`);
    expectOverloaded(shed, /test queue 11, over its limit of 10/);
    // Refused before the budget was counted: no RateLimit headers.
    expect(shed.headers.get('ratelimit-remaining')).toBeNull();
    // Refused before the key was looked at: shedding says nothing about keys.
    expectOverloaded(await t.request('GET', '/api/v1/rules', { key: 'not-a-key' }), /test queue/);
    await expectDataPlaneServed();
    const text = await metrics();
    expect(sampleOf(text, 'rules_overload_pressure_ratio{source="test_queue"}')).toBeCloseTo(1.1);
    expect(sampleOf(text, 'rules_overload_shed_total')).toBe(2);

    queued = 0;
    await expectRecovered();
    expect(lines.some((line) => line.includes('overloaded (test queue 11, over its limit of 10)'))).toBe(true);
    // The rule the shed DELETE named is still there.
    expect(await ok(t.request('GET', `/api/v1/rules/${ruleId}`))).toMatchObject({ code: 'AMOUNT_MAX' });
  });
});

describe('overload protection: a server process stopped in bursts', () => {
  let database: FreshDatabase;
  let server: Instance;
  const tenant = 'acme';
  const key = `test_${randomBytes(24).toString('base64url')}`;
  const api = (method: string, path: string, body?: unknown) => server.request(method, path, { body, key, tenant });

  beforeAll(async () => {
    database = await freshDatabase();
    server = await startInstance({
      databaseUrl: database.databaseUrl ?? '',
      dataDir: database.dataDir,
      env: { RULES_BOOTSTRAP_TENANTS: `${tenant}:${key}`, MAX_EVENT_LOOP_DELAY_MS: String(MAX_DELAY_MS) },
    });
    ruleId = (await ok(answered(() => api('POST', '/api/v1/rules', RULE)), 201)).id as string;
    await ok(answered(() => api('POST', '/api/v1/contexts/loan/publish')));
  });
  afterAll(async () => {
    await server?.stop();
    await database?.drop();
  });

  it('sheds management calls and reports not ready while the kernel keeps stopping it, answers validations, and recovers', async () => {
    // 250 ms stopped out of every 350, as a CPU quota throttles a container: every half-second window has a stop.
    let throttling = true;
    const throttled = (async () => {
      while (throttling) {
        process.kill(server.pid, 'SIGSTOP');
        await new Promise((resolve) => setTimeout(resolve, 250));
        process.kill(server.pid, 'SIGCONT');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    try {
      await expect.poll(async () => (await server.request('GET', '/health/ready')).status, POLL).toBe(503);
      expectOverloaded(await server.request('GET', '/health/ready'), /event loop delay \d+ ms, over its limit of 100 ms/);
      expectOverloaded(await api('GET', `/api/v1/rules/${ruleId}`), /event loop delay/);
      expect(await ok(api('POST', '/api/v1/validation/validate', { context: 'loan', payload: { amount: 20_000 } })))
        .toMatchObject({ isValid: false, failures: [{ ruleCode: 'AMOUNT_MAX' }] });
      expect(await ok(api('POST', '/api/v1/validation/validate-batch', { context: 'loan', items: [{ id: 'a', payload: { amount: 1 } }] })))
        .toMatchObject({ totalProcessed: 1, totalFailed: 0 });
      const metricsText = (await server.request('GET', '/metrics')).body as string;
      expect(sampleOf(metricsText, 'rules_overload_shedding')).toBe(1);
      expect(sampleOf(metricsText, 'rules_overload_shed_total')).toBeGreaterThanOrEqual(1);
    } finally {
      throttling = false;
      await throttled;
      process.kill(server.pid, 'SIGCONT');
    }
    await expect.poll(async () => (await server.request('GET', '/health/ready')).status, POLL).toBe(200);
    await ok(api('GET', `/api/v1/rules/${ruleId}`));
    expect(server.output()).toMatch(/overloaded \(event loop delay \d+ ms, over its limit of 100 ms\)/);
    expect(server.output()).toContain('no longer overloaded');
  });
});
