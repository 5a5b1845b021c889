/**
 * The typed client's retries against the service's real rate limiting: a
 * tenant budget of 3 requests a second, so a burst gets 429 with
 * Retry-After, which the client waits out and retries, within bounds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRulesClient, RulesApiError } from '../../clients/typescript/src/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ok } from '../support/expect-response.ts';

let t: TestApp;

/** Node's fetch, noting the status of every answer (what went over the wire, attempt by attempt). */
function recordingFetch(statuses: number[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    statuses.push(response.status);
    return response;
  };
}

beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '1000' } });
  await ok(t.request('POST', '/api/v1/rules', { body: { context: 'loans', code: 'MAX', name: 'Max', fieldPath: 'amount', expression: 'amount <= 100' } }), 201);
  await ok(t.request('POST', '/api/v1/contexts/loans/publish'));
});
afterAll(async () => {
  await t?.close();
});

describe('retries of 429', () => {
  it('waits out Retry-After and gets every answer of a burst larger than the budget', async () => {
    const statuses: number[] = [];
    const client = createRulesClient({
      baseUrl: t.baseUrl, tenantId: t.tenantId, apiKey: t.adminKey, fetch: recordingFetch(statuses), retry: { maxRetries: 5, maxDelayMs: 5_000 },
    });
    const answers = [];
    for (let i = 0; i < 7; i++) answers.push(await client.validate({ context: 'loans', payload: { amount: i * 30 } }));
    expect(answers.map((answer) => answer.isValid)).toEqual([true, true, true, true, false, false, false]);
    expect(statuses).toContain(429);
    expect(statuses.filter((status) => status === 200)).toHaveLength(7);
  });

  it('throws the 429 as RulesApiError with retryAfterMs when retries are off', async () => {
    const client = createRulesClient({ baseUrl: t.baseUrl, tenantId: t.tenantId, apiKey: t.adminKey, retry: { maxRetries: 0 } });
    const error = await (async () => {
      for (let i = 0; i < 10; i++) await client.validate({ context: 'loans', payload: { amount: 1 } });
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RulesApiError);
    expect(error).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect((error as RulesApiError).retryAfterMs).toBeGreaterThanOrEqual(1000);
  });

  it('does not wait longer than maxDelayMs: a longer Retry-After is thrown at once', async () => {
    const statuses: number[] = [];
    const client = createRulesClient({
      baseUrl: t.baseUrl, tenantId: t.tenantId, apiKey: t.adminKey, fetch: recordingFetch(statuses), retry: { maxRetries: 5, maxDelayMs: 500 },
    });
    const error = await (async () => {
      for (let i = 0; i < 10; i++) await client.validate({ context: 'loans', payload: { amount: 1 } });
    })().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    // The refused request was sent once: not retried.
    expect(statuses.filter((status) => status === 429)).toHaveLength(1);
  });

  it('stops waiting for a retry at the call\'s deadline', async () => {
    const client = createRulesClient({ baseUrl: t.baseUrl, tenantId: t.tenantId, apiKey: t.adminKey, retry: { maxRetries: 5, maxDelayMs: 5_000 } });
    const error = await (async () => {
      for (let i = 0; i < 10; i++) await client.validate({ context: 'loans', payload: { amount: 1 } }, { timeoutMs: 200 });
    })().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'TimeoutError' });
  });
});
