/**
 * The typed client package (clients/typescript) against the real server:
 * validations and management operations typed from the OpenAPI document,
 * problems thrown as RulesApiError with their code and field errors,
 * per-call deadlines and cancellation, and connections kept alive.
 * Retries on 429 are in retry.test.ts.
 */
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRulesClient, RulesApiError, type RulesClient } from '../../clients/typescript/src/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

/** A header that makes the test's own hook hold a management request this long (ms) before the service sees it. */
const HOLD = 'x-test-hold-ms';

let t: TestApp;
let client: RulesClient;
const connections: Socket[] = [];

beforeAll(async () => {
  t = await startTestApp({
    beforeReady: (app) => {
      app.addHook('onRequest', async (request) => {
        const hold = Number(request.headers[HOLD] ?? 0);
        if (hold > 0) await new Promise((resolve) => setTimeout(resolve, hold));
      });
      app.server.on('connection', (socket: Socket) => connections.push(socket));
    },
  });
  client = createRulesClient({ baseUrl: t.baseUrl, tenantId: t.tenantId, apiKey: t.adminKey });
});
afterAll(async () => {
  await t?.close();
});

describe('typed operations', () => {
  it('creates a rule, publishes its context, and validates single, batch and transaction', async () => {
    const { data: rule } = await client.api.POST('/api/v1/rules', {
      body: { context: 'orders', code: 'TOTAL_MAX', name: 'Order total limit', fieldPath: 'total', expression: '$value <= 10000', message: 'Total {{ $value }} exceeds {{ $expected }}' },
    });
    expect(rule).toMatchObject({ context: 'orders', code: 'TOTAL_MAX', status: 'draft', version: 1 });
    const { data: published } = await client.api.POST('/api/v1/contexts/{context}/publish', { params: { path: { context: 'orders' } }, body: {} });
    expect(published).toMatchObject({ context: 'orders', rulesetVersion: 1, published: [rule?.id] });

    const single = await client.validate({ context: 'orders', payload: { total: 12500 } });
    expect(single).toEqual({
      isValid: false,
      totalRulesEvaluated: 1,
      failures: [expect.objectContaining({ ruleCode: 'TOTAL_MAX', message: 'Total 12500 exceeds 10000', fieldPath: 'total', actualValue: 12500, expectedValue: 10000 })],
      executionTimeMs: expect.any(Number),
    });

    const batch = await client.validateBatch({ context: 'orders', items: [{ id: 'a', payload: { total: 5 } }, { id: 'b', payload: { total: 50000 } }] });
    expect(batch.results.map((item) => [item.id, item.isValid])).toEqual([['a', true], ['b', false]]);

    const transaction = await client.validateTransaction({ transactionId: 'tx-1', contexts: ['orders'], payload: { total: 20000 } });
    expect(transaction).toMatchObject({ transactionId: 'tx-1', overallResult: 'Rejected' });
  });

  it('lists rules with typed query parameters', async () => {
    const { data } = await client.api.GET('/api/v1/rules', { params: { query: { context: 'orders', status: 'published' } } });
    expect(data?.items.map((rule) => rule.code)).toEqual(['TOTAL_MAX']);
  });
});

describe('problems as typed errors', () => {
  it('throws a 400 with its code and the field errors', async () => {
    const error = await client.validate({ context: 'orders', payload: 'not an object' as unknown as Record<string, unknown> }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RulesApiError);
    const problem = error as RulesApiError;
    expect(problem).toMatchObject({ status: 400, code: 'INVALID_BODY', requestId: expect.any(String) });
    expect(problem.errors).toContainEqual(expect.objectContaining({ path: 'payload' }));
    expect(problem.detail).toEqual(expect.any(String));
  });

  it('throws a 404 from a management operation', async () => {
    const error = await client.api.GET('/api/v1/rules/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RulesApiError);
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });

  it('throws a 401 for a wrong key', async () => {
    const stranger = createRulesClient({ baseUrl: t.baseUrl, tenantId: t.tenantId, apiKey: 'rk_not_a_key_of_anyone_0123456789abcdef' });
    await expect(stranger.validate({ context: 'orders', payload: {} })).rejects.toMatchObject({ name: 'RulesApiError', status: 401, code: 'UNAUTHORIZED' });
  });
});

describe('deadlines and cancellation', () => {
  it('gives up a call at its own deadline', async () => {
    const error = await client.api.GET('/api/v1/rules', { headers: { [HOLD]: '3000' }, signal: AbortSignal.timeout(100) }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'TimeoutError' });
  });

  it('gives up at the client\'s default deadline', async () => {
    const impatient = createRulesClient({ baseUrl: t.baseUrl, tenantId: t.tenantId, apiKey: t.adminKey, timeoutMs: 100 });
    await expect(impatient.api.GET('/api/v1/contexts', { headers: { [HOLD]: '3000' } })).rejects.toMatchObject({ name: 'TimeoutError' });
    // A call's own timeoutMs replaces the default.
    const answer = await impatient.validate({ context: 'orders', payload: { total: 1 } }, { timeoutMs: 10_000 });
    expect(answer.isValid).toBe(true);
  });

  it('stops a call when its signal aborts', async () => {
    const controller = new AbortController();
    const call = client.api.GET('/api/v1/contexts', { headers: { [HOLD]: '3000' }, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user left the page')), 50);
    await expect(call).rejects.toThrow('user left the page');
  });
});

describe('connections', () => {
  it('keeps one connection alive across sequential calls', async () => {
    const before = connections.length;
    for (let i = 0; i < 5; i++) await client.validate({ context: 'orders', payload: { total: i } });
    expect(connections.length - before).toBeLessThanOrEqual(1);
  });
});
