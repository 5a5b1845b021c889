/**
 * Answers that would be enormous are refused, not built. A payload can fail
 * a rule once per array element (forEach), and every failure carries the
 * payload's value, so a small request could ask for an answer of hundreds
 * of megabytes (measured before the bounds: a 32 KB payload against 50
 * rules answered 486 MB after 15 s, with 1.5 GB resident). Two bounds hold
 * now: at most MAX_FAILURES_PER_VALIDATION failures per validation
 * (generated code stops there), and at most MAX_ANSWER_BYTES of estimated
 * failures per answer (src/validators/answer-size.ts). Both are 400
 * INVALID_BODY naming the part of the request that asks for too much.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FAILURES_PER_VALIDATION } from '../../compiler/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';

/** The smallest MAX_ANSWER_BYTES allowed, so that a few rules reach it. */
const MAX_ANSWER_BYTES = 65_536;
const MESSAGE = 'M'.repeat(1000);
const VALIDATE = '/api/v1/validation/validate';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ env: { MAX_ANSWER_BYTES: String(MAX_ANSWER_BYTES) } });
  // One failure per element of `items` whose x is not 1, each with a 1000-character message.
  const rules = Array.from({ length: 5 }, (_, i) => ({
    context: 'elements', code: `E${i}`, name: `element ${i}`, forEach: 'items', fieldPath: 'items[].x', expression: '$item.x == 1', message: MESSAGE,
  }));
  for (const rule of rules) expect((await t.request('POST', '/api/v1/rules', { body: rule })).status).toBe(201);
  expect((await t.request('POST', '/api/v1/contexts/elements/publish')).status).toBe(200);
});

afterAll(async () => {
  await t?.close();
});

/** `count` elements that fail every rule of `elements`. */
function failingItems(count: number): { x: number }[] {
  return Array.from({ length: count }, () => ({ x: 2 }));
}

describe('the answer size bound (MAX_ANSWER_BYTES)', () => {
  it('answers a single validation under the bound, in full', async () => {
    // 5 rules x 10 elements = 50 failures of about 1.1 KB: about 55 KB.
    const response = await t.request('POST', VALIDATE, { body: { context: 'elements', payload: { items: failingItems(10) } } });
    expect(response.status).toBe(200);
    expect(response.body.failures).toHaveLength(50);
    expect(response.body.failures[0]).toMatchObject({ ruleCode: 'E0', fieldPath: 'items[0].x', message: MESSAGE, actualValue: 2 });
    expect(response.text.length).toBeLessThan(MAX_ANSWER_BYTES);
  });

  it('refuses a single validation over the bound with 400 naming the payload, on both paths', async () => {
    // 5 x 20 = 100 failures: about 110 KB.
    const body = { context: 'elements', payload: { items: failingItems(20) } };
    // A new key: its first request goes through Fastify's route, the second through the fast lane (a key it has seen).
    const key = (await t.request('POST', '/api/v1/api-keys', { body: { name: 'validator', role: 'validator' } })).body.key as string;
    const fastLane = t.app.internals.fastLane!;
    const handedBack = fastLane.handedBack;
    for (let i = 0; i < 2; i++) {
      const response = await t.request('POST', VALIDATE, { key, body });
      expect(response.status, response.text.slice(0, 300)).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({ code: 'INVALID_BODY', detail: 'The answer would be too large to send.' });
      expect(response.body.errors).toEqual([{
        path: 'payload',
        message: `its failures would take more than ${MAX_ANSWER_BYTES} bytes (MAX_ANSWER_BYTES); send a smaller payload, or fewer items`,
      }]);
    }
    // The fast lane took the second request and handed it to Fastify's route, which refused it.
    expect(fastLane.handedBack).toBe(handedBack + 1);
  });

  it('bounds a batch by the sum of its items, naming the items', async () => {
    // Batch answers carry ruleCode and message: about 1 KB a failure, 5 per item.
    const items = (count: number) => Array.from({ length: count }, (_, i) => ({ id: `item-${i}`, payload: { items: failingItems(1) } }));
    const small = await t.request('POST', '/api/v1/validation/validate-batch', { body: { context: 'elements', items: items(10) } });
    expect(small.status).toBe(200);
    expect(small.body.totalFailed).toBe(10);
    expect(small.body.results[9].failures).toEqual(Array.from({ length: 5 }, (_, i) => ({ ruleCode: `E${i}`, message: MESSAGE })));

    // Each item alone is small; together they are over.
    const large = await t.request('POST', '/api/v1/validation/validate-batch', { body: { context: 'elements', items: items(20) } });
    expect(large.status).toBe(400);
    expect(large.body.errors).toEqual([{ path: 'items', message: expect.stringContaining(`more than ${MAX_ANSWER_BYTES} bytes`) }]);
  });

  it('bounds a transaction by the sum of its contexts, naming the payload', async () => {
    for (const context of ['elements-2', 'elements-3']) {
      const rule = { context, code: 'E', name: 'e', forEach: 'items', fieldPath: 'items[].x', expression: '$item.x == 1', message: MESSAGE };
      expect((await t.request('POST', '/api/v1/rules', { body: rule })).status).toBe(201);
      expect((await t.request('POST', `/api/v1/contexts/${context}/publish`)).status).toBe(200);
    }
    const transaction = (count: number) => ({
      transactionId: 'tx-1', contexts: ['elements', 'elements-2', 'elements-3'], payload: { items: failingItems(count) },
    });
    // 7 failures per element: 8 elements are about 57 KB, 12 are about 86 KB.
    const small = await t.request('POST', '/api/v1/validation/validate-transaction', { body: transaction(8) });
    expect(small.status).toBe(200);
    expect(small.body.overallResult).toBe('Rejected');
    const large = await t.request('POST', '/api/v1/validation/validate-transaction', { body: transaction(12) });
    expect(large.status).toBe(400);
    expect(large.body.errors).toEqual([{ path: 'payload', message: expect.stringContaining('MAX_ANSWER_BYTES') }]);
  });

  it('counts a large value once per failure that reports it', async () => {
    // 40 rules report the same 4 KB array as actualValue: 160 KB of answer from a 4 KB payload.
    const rules = Array.from({ length: 40 }, (_, i) => ({ context: 'shared-value', code: `S${i}`, name: 's', fieldPath: 'list', expression: 'len(list) < 3' }));
    for (const rule of rules) expect((await t.request('POST', '/api/v1/rules', { body: rule })).status).toBe(201);
    expect((await t.request('POST', '/api/v1/contexts/shared-value/publish')).status).toBe(200);
    const list = Array.from({ length: 500 }, (_, i) => i * 1000);
    const response = await t.request('POST', VALIDATE, { body: { context: 'shared-value', payload: { list } } });
    expect(response.status).toBe(400);
    expect(response.body.detail).toBe('The answer would be too large to send.');
    const fits = await t.request('POST', VALIDATE, { body: { context: 'shared-value', payload: { list: list.slice(0, 50) } } });
    expect(fits.status).toBe(200);
    expect(fits.body.failures).toHaveLength(40);
  });

  it('bounds a rule test the same way', async () => {
    const response = await t.request('POST', '/api/v1/rules/test', { body: { context: 'elements', payload: { items: failingItems(20) } } });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ path: 'payload', message: expect.stringContaining('MAX_ANSWER_BYTES') }]);
  });
});

describe('the failure count bound (MAX_FAILURES_PER_VALIDATION)', () => {
  it('stops a validation past the bound with 400, quickly, and the service goes on', async () => {
    // 5 rules x 20,001 elements: just over 100,000 failures from a 160 KB payload.
    const elements = MAX_FAILURES_PER_VALIDATION / 5 + 1;
    const started = performance.now();
    const response = await t.request('POST', VALIDATE, { body: { context: 'elements', payload: { items: failingItems(elements) } } });
    const ms = performance.now() - started;
    expect(response.status, response.text.slice(0, 300)).toBe(400);
    expect(response.body).toMatchObject({ code: 'INVALID_BODY', detail: 'The payload fails too many rules to answer.' });
    expect(response.body.errors).toEqual([{
      path: 'payload', message: `fails rules more than ${MAX_FAILURES_PER_VALIDATION} times in one validation; send a smaller payload`,
    }]);
    // Generous on a loaded 2-core machine; building the answer took 15 s before the bounds.
    expect(ms).toBeLessThan(5000);

    const next = await t.request('POST', VALIDATE, { body: { context: 'elements', payload: { items: [{ x: 1 }] } } });
    expect(next.body).toMatchObject({ isValid: true, totalRulesEvaluated: 5 });
  });

  it('refuses a batch whose one item fails too often, naming the items', async () => {
    const items = [{ id: 'a', payload: { items: failingItems(1) } }, { id: 'b', payload: { items: failingItems(MAX_FAILURES_PER_VALIDATION / 5 + 1) } }];
    const response = await t.request('POST', '/api/v1/validation/validate-batch', { body: { context: 'elements', items } });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ path: 'items', message: expect.stringContaining(`more than ${MAX_FAILURES_PER_VALIDATION} times`) }]);
  });
});

describe('expectedValue is bounded like a schema', () => {
  it('refuses an expectedValue over 64 KiB of JSON at save, naming the field', async () => {
    const big = 'x'.repeat(65_536);
    const response = await t.request('POST', '/api/v1/rules', {
      body: { context: 'expected', code: 'BIG', name: 'big', fieldPath: 'a', expression: 'a == 1', expectedValue: big },
    });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ path: 'expectedValue', message: 'expectedValue is 65538 bytes of JSON; the limit is 65536' }]);
    const stored = await t.request('GET', '/api/v1/rules?context=expected');
    expect(stored.body.items).toEqual([]);

    const fits = await t.request('POST', '/api/v1/rules', {
      body: { context: 'expected', code: 'FITS', name: 'fits', fieldPath: 'a', expression: 'a == 1', expectedValue: big.slice(2) },
    });
    expect(fits.status).toBe(201);
  });
});
