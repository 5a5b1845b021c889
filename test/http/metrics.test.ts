/**
 * GET /metrics after real traffic: Prometheus text without authentication,
 * request latency by route pattern (never the raw URL) and status,
 * validations and failures by operation, validator cache and compile
 * figures, process metrics; tenant and context labels only with
 * METRICS_TENANT_LABELS; one registry per app.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.ts';
import { sampleOf } from '../support/metrics.ts';

async function ok(response: Promise<TestResponse>, status = 200): Promise<any> {
  const resolved = await response;
  expect(resolved.status, resolved.text).toBe(status);
  return resolved.body;
}

async function publishLoan(t: TestApp): Promise<string> {
  const rule = await ok(
    t.request('POST', '/api/v1/rules', {
      body: { context: 'loan', code: 'MAX', name: 'Max', fieldPath: 'amount', expression: 'amount <= 100', required: true },
    }),
    201,
  );
  await ok(t.request('POST', '/api/v1/contexts/loan/publish'));
  return rule.id;
}

async function scrape(t: TestApp): Promise<string> {
  const response = await t.request('GET', '/metrics', { key: null, tenant: null });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return response.text;
}

describe('GET /metrics', () => {
  let t: TestApp;
  let ruleId: string;
  let text: string;
  beforeAll(async () => {
    t = await startTestApp();
    ruleId = await publishLoan(t);
    // A restart empties the validator cache: the next validation is a miss and a compile.
    await t.restart();
    const validate = (amount: unknown) => t.request('POST', '/api/v1/validation/validate', { body: { context: 'loan', payload: { amount } } });
    await ok(validate(5));
    await ok(validate(500));
    await ok(validate(7));
    await ok(
      t.request('POST', '/api/v1/validation/validate-batch', {
        body: { context: 'loan', items: [{ id: 'a', payload: { amount: 1 } }, { id: 'b', payload: { amount: 101 } }, { id: 'c', payload: {} }] },
      }),
    );
    await ok(t.request('POST', '/api/v1/validation/validate-transaction', { body: { transactionId: 'x', contexts: ['loan'], payload: { amount: 1 } } }));
    await ok(t.request('GET', `/api/v1/rules/${ruleId}`));
    await ok(t.request('POST', '/api/v1/validation/validate', { body: { context: 'nowhere', payload: {} } }), 404);
    await ok(t.request('GET', '/api/v1/nothing/here'), 404);
    await ok(t.request('GET', '/api/v1/rules', { key: null }), 401);
    text = await scrape(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('times requests by route pattern and status, never by raw URL', () => {
    const duration = (method: string, route: string, status: number) =>
      sampleOf(text, `http_request_duration_seconds_count{method="${method}",route="${route}",status_code="${status}"}`);
    expect(duration('POST', '/api/v1/validation/validate', 200)).toBe(3);
    expect(duration('POST', '/api/v1/validation/validate', 404)).toBe(1);
    expect(duration('POST', '/api/v1/validation/validate-batch', 200)).toBe(1);
    expect(duration('GET', '/api/v1/rules/:id', 200)).toBe(1);
    expect(duration('GET', '/api/v1/rules', 401)).toBe(1);
    expect(duration('GET', 'unmatched', 404)).toBe(1);
    expect(text).not.toContain(ruleId);
    expect(text).not.toContain('/nothing/here');
    expect(text).toMatch(/^http_request_duration_seconds_bucket\{le="0\.001",method="POST",route="\/api\/v1\/validation\/validate",status_code="200"\} \d+$/m);
    expect(sampleOf(text, 'http_request_duration_seconds_sum{method="POST",route="/api/v1/validation/validate",status_code="200"}')).toBeGreaterThan(0);
  });

  it('counts validations by operation and result, and failure records', () => {
    const validations = (operation: string, result: string) => sampleOf(text, `rules_validations_total{operation="${operation}",result="${result}"}`);
    expect(validations('single', 'valid')).toBe(2);
    expect(validations('single', 'invalid')).toBe(1);
    expect(validations('batch', 'valid')).toBe(1);
    expect(validations('batch', 'invalid')).toBe(2);
    expect(validations('transaction', 'valid')).toBe(1);
    expect(validations('transaction', 'invalid')).toBe(0);
    expect(sampleOf(text, 'rules_validation_failures_total{operation="single"}')).toBe(1);
    expect(sampleOf(text, 'rules_validation_failures_total{operation="batch"}')).toBe(2);
  });

  it('reports validator cache hits, misses, compiles and compile time', () => {
    // After the restart: one miss (loan) compiled once, the unknown context
    // is a miss without a compile, and every later loan lookup is a hit.
    expect(sampleOf(text, 'rules_validator_cache_misses_total')).toBe(2);
    expect(sampleOf(text, 'rules_validator_compiles_total{result="ok"}')).toBe(1);
    expect(sampleOf(text, 'rules_validator_compile_duration_seconds_count')).toBe(1);
    expect(sampleOf(text, 'rules_validator_compile_duration_seconds_sum')).toBeGreaterThan(0);
    // Exactly one per validation after the first: 2 single, 1 batch, 1 transaction.
    expect(sampleOf(text, 'rules_validator_cache_hits_total')).toBe(4);
    expect(sampleOf(text, 'rules_validator_cache_entries')).toBe(1);
  });

  it('includes rate-limit refusals and the process metrics, with no tenant labels', () => {
    expect(sampleOf(text, 'rules_rate_limited_total{scope="tenant"}')).toBe(0);
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(text).toMatch(new RegExp(`^${name} [0-9.e+-]+$`, 'm'));
    }
    expect(text).not.toContain('tenant=');
    expect(text).not.toContain('context=');
    // Every metric is declared once, as Prometheus requires.
    const types = text.split('\n').filter((line) => line.startsWith('# TYPE '));
    expect(new Set(types).size).toBe(types.length);
  });

  it('counts the traffic of its own app only', async () => {
    const other = await startTestApp();
    try {
      const otherText = await scrape(other);
      expect(otherText).not.toContain('route="/api/v1/validation/validate"');
      expect(sampleOf(otherText, 'rules_validations_total{operation="single",result="valid"}')).toBe(0);
    } finally {
      await other.close();
    }
  });
});

describe('GET /metrics with METRICS_TENANT_LABELS=true', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { METRICS_TENANT_LABELS: 'true', RATE_LIMIT_MAX: '6' } });
    await publishLoan(t);
    await ok(t.request('POST', '/api/v1/validation/validate', { body: { context: 'loan', payload: { amount: 500 } } }));
    await ok(t.request('POST', '/api/v1/validation/validate-transaction', { body: { transactionId: 'x', contexts: ['loan'], payload: { amount: 1 } } }));
    await ok(t.request('GET', '/api/v1/rules', { key: t.otherAdminKey, tenant: t.otherTenantId }));
    for (let i = 0; i < 3; i++) await t.request('GET', '/api/v1/rules');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('labels validations, cache figures, requests and refusals by tenant and context', async () => {
    const text = await scrape(t);
    expect(sampleOf(text, 'rules_validations_total{operation="single",result="invalid",tenant="acme",context="loan"}')).toBe(1);
    expect(sampleOf(text, 'rules_validations_total{operation="transaction",result="valid",tenant="acme",context="loan"}')).toBe(1);
    expect(sampleOf(text, 'rules_validation_failures_total{operation="single",tenant="acme",context="loan"}')).toBe(1);
    expect(sampleOf(text, 'rules_validator_cache_hits_total{tenant="acme",context="loan"}')).toBeGreaterThanOrEqual(2);
    expect(sampleOf(text, 'rules_validator_compiles_total{result="ok",tenant="acme",context="loan"}')).toBe(1);
    expect(sampleOf(text, 'http_request_duration_seconds_count{method="GET",route="/api/v1/rules",status_code="200",tenant="globex"}')).toBe(1);
    expect(sampleOf(text, 'rules_rate_limited_total{scope="tenant",tenant="acme"}')).toBe(1);
  });
});
