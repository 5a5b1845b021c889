/**
 * A heavy operation that waits its whole time budget for a management
 * thread (docs/operations.md, "Management threads"), on the real server
 * and database, with one thread:
 * - behind the tenant's own operation, it is the tenant's doing: 429
 *   RATE_LIMITED with Retry-After, naming the operation and saying what it
 *   waited behind (it was a 503, the service's fault, before);
 * - behind another tenant's operation only, it is still the service's 503.
 *
 * To order things without timing luck, the test delays two of the real
 * stores' reads (reading the real database) until it opens their gates:
 * the stored-test run is admitted first and held before it reads its tests,
 * then an impact report's replay takes the one thread and waits there for
 * its samples; once the run goes on, its task queues behind the report and
 * its budget, which began first, ends first, while the thread is still held.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.ts';
import { expectProblem, ok } from '../support/expect-response.ts';
import { metricSample } from '../support/metrics.ts';

const BUDGET_MS = 2000;
const IMPACT = '/api/v1/contexts/loans/impact';
const RUN_TESTS = '/api/v1/contexts/loans/tests/run';

/** A gate reads wait at while it is closed, counting them. */
class Gate {
  reads = 0;
  #open: () => void = () => {};
  #opened: Promise<void> = Promise.resolve();
  close(): void {
    this.#opened = new Promise((resolve) => {
      this.#open = resolve;
    });
  }
  open(): void {
    this.#open();
  }
  async pass(): Promise<void> {
    this.reads++;
    await this.#opened;
  }
  /** Resolves once a read has come since `before` reads. */
  async reached(before: number): Promise<void> {
    await expect.poll(() => this.reads, { timeout: 20_000 }).toBeGreaterThan(before);
  }
}

describe('an operation that waited its whole budget for a thread', () => {
  let t: TestApp;
  const samplesGate = new Gate();
  const testsGate = new Gate();
  const other = () => ({ key: t.otherAdminKey, tenant: t.otherTenantId });

  beforeAll(async () => {
    t = await startTestApp({ env: { POOL_THREADS: '1', OPERATIONS_PER_TENANT: '2', OPERATION_TIME_BUDGET_MS: String(BUDGET_MS) } });
    for (const who of [{}, other()]) {
      await ok(t.request('POST', '/api/v1/rules', { ...who, body: { context: 'loans', code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100' } }), 201);
      await ok(t.request('POST', '/api/v1/contexts/loans/publish', who));
    }
    await t.storage.samples.insertMany([t.tenantId, t.otherTenantId].map((tenantId) => ({
      tenantId, context: 'loans', recordedAt: new Date(), rulesetVersion: 1, isValid: true, failures: [], payload: { amount: 50 },
    })));
    const { samples, tests } = t.storage;
    const readSamples = samples.newestTextsBefore.bind(samples);
    samples.newestTextsBefore = async (...args) => {
      await samplesGate.pass();
      return readSamples(...args);
    };
    // A stored-test run reads its tests as one JSON text (parsed on the thread); other callers read the list.
    const listTests = tests.list.bind(tests);
    tests.list = async (...args) => {
      await testsGate.pass();
      return listTests(...args);
    };
    const listTestsText = tests.listText.bind(tests);
    tests.listText = async (...args) => {
      await testsGate.pass();
      return listTestsText(...args);
    };
  });
  afterAll(async () => {
    samplesGate.open();
    testsGate.open();
    await t?.close();
  });

  /**
   * The tenant's stored-test run, admitted first, its task queued behind an impact report of
   * `holder` that holds the one thread; answers both.
   */
  const runBehindReport = async (holder: object): Promise<[TestResponse, TestResponse]> => {
    testsGate.close();
    samplesGate.close();
    const testsBefore = testsGate.reads;
    const run = t.request('POST', RUN_TESTS);
    // Its first read held, or, should it be answered before reading its tests, that answer said.
    await Promise.race([testsGate.reached(testsBefore), run.then((answer) => {
      throw new Error(`the run was answered before reading its tests: ${answer.status} ${JSON.stringify(answer.body)}`);
    })]);
    const samplesBefore = samplesGate.reads;
    const report = t.request('POST', IMPACT, holder);
    await samplesGate.reached(samplesBefore);
    testsGate.open();
    const answers = await Promise.all([run, report]);
    samplesGate.open();
    return answers;
  };

  it('answers 429 with Retry-After, naming the operation, when the tenant\'s own operation held the thread', async () => {
    const [waited, report] = await runBehindReport({});
    const problem = await expectProblem(Promise.resolve(waited), 429, 'RATE_LIMITED');
    expect(problem.detail).toMatch(/^The stored-test run was not started: it waited its whole time budget \(OPERATION_TIME_BUDGET_MS, 2000 ms\)/);
    expect(problem.detail).toContain('behind the tenant\'s 1 other heavy management operation(s)');
    expect(waited.headers.get('retry-after')).toBe('1');
    // The report holding the thread stopped at its own budget, as any operation does.
    await expectProblem(Promise.resolve(report), 409, 'LIMIT_EXCEEDED');
    expect(await metricSample(t, 'rules_pool_operations_refused_total{reason="tenant_queue"}')).toBe(1);
    // The thread is free again: the next run is answered.
    expect(await ok(t.request('POST', RUN_TESTS))).toMatchObject({ passed: 0, failed: 0, truncated: false });
  });

  it('stays the service\'s 503 when only another tenant\'s operation held the thread', async () => {
    const [waited, report] = await runBehindReport(other());
    const problem = await expectProblem(Promise.resolve(waited), 503, 'SERVICE_UNAVAILABLE');
    expect(problem.detail).toMatch(/^The stored-test run was not started: every management thread stayed busy with other tenants' operations/);
    await expectProblem(Promise.resolve(report), 409, 'LIMIT_EXCEEDED');
  });
});
