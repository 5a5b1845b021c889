/**
 * The validation fast lane and hooks it does not know: an app with a hook
 * of its own on the single validation's path must run that hook for every
 * validation, so the fast lane turns itself off (and says so in the log)
 * and Fastify answers; the default app keeps it on. Either way the client
 * gets the same answers: status, headers (budget, Server-Timing, type,
 * length) and body.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../support/expect-response.ts';
import { startTestApp, type TestApp, type TestRequestOptions, type TestResponse } from '../support/app.ts';

const VALIDATE = '/api/v1/validation/validate';
/** Headers that differ between any two responses. */
const PER_RESPONSE_HEADERS = new Set(['date', 'server-timing', 'ratelimit-remaining', 'ratelimit-reset']);

const RULES = [
  { code: 'AMOUNT_MAX', name: 'Amount limit', fieldPath: 'amount', expression: 'amount <= 10000', message: 'Amount {{ $value }} exceeds {{ $expected }}' },
  { code: 'NAME', name: 'Name shape', fieldPath: 'name', schema: { type: 'string', minLength: 2, pattern: '^[A-Z]' } },
];

/** What each app is asked, in this order: a pass, a failure, refusals before and after the validator is found. */
const REQUESTS: { name: string; request: TestRequestOptions }[] = [
  { name: 'passing', request: { body: { context: 'loan', payload: { amount: 500, name: 'Ada' } } } },
  { name: 'failing', request: { body: { context: 'loan', payload: { amount: 20000, name: 'x' } } } },
  { name: 'body refused by the schema', request: { body: { context: 'loan' } } },
  { name: 'payload refused by the guard', request: { rawBody: '{"context":"loan","payload":{"amount":1e400}}' } },
  { name: 'unknown context', request: { body: { context: 'nope', payload: {} } } },
];

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The answer with what differs per response (date, timing, budget counts, request id) reduced to its shape. */
function stableAnswer(response: TestResponse): Answer {
  expect(response.headers.get('content-length')).toBe(String(Buffer.byteLength(response.text)));
  expect(response.headers.get('server-timing')).toMatch(/^total;dur=\d+\.\d{3}$/);
  expect(response.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
  expect(Number(response.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) {
    // Content-Length follows the body, whose executionTimeMs may have one digit more on a slow moment.
    if (name === 'content-length') headers[name] = 'the body\'s length';
    else headers[name] = PER_RESPONSE_HEADERS.has(name) ? 'present' : value;
  }
  const body = response.text.replace(/"executionTimeMs":\d+/, '"executionTimeMs":0').replace(/"requestId":"[^"]*"/, '"requestId":""');
  return { status: response.status, headers, body };
}

async function publishLoanRules(t: TestApp): Promise<void> {
  for (const rule of RULES) await ok(t.request('POST', '/api/v1/rules', { body: { context: 'loan', ...rule } }), 201);
  await ok(t.request('POST', '/api/v1/contexts/loan/publish'));
  // The fast lane takes only keys the auth hook has seen: this request introduces the admin key.
  await ok(t.request('POST', VALIDATE, { body: { context: 'loan', payload: { amount: 1 } } }));
}

async function answersOf(t: TestApp): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const { request } of REQUESTS) answers.push(stableAnswer(await t.request('POST', VALIDATE, request)));
  return answers;
}

describe('validation fast lane and the app\'s hooks', () => {
  let plain: TestApp;
  let withOnRequest: TestApp;
  let withPreHandler: TestApp;
  const lines: string[] = [];
  const seen = { onRequest: 0, preHandler: 0 };

  beforeAll(async () => {
    plain = await startTestApp({ env: { LOG_LEVEL: 'info' }, logStream: { write: (line) => void lines.push(`plain ${line}`) } });
    withOnRequest = await startTestApp({
      env: { LOG_LEVEL: 'info' },
      logStream: { write: (line) => void lines.push(`onRequest ${line}`) },
      beforeReady: (app: FastifyInstance) => {
        app.addHook('onRequest', function countValidations(request, _reply, done) {
          if (request.url === VALIDATE) seen.onRequest++;
          done();
        });
      },
    });
    withPreHandler = await startTestApp({
      beforeReady: (app: FastifyInstance) => {
        // eslint-disable-next-line @typescript-eslint/require-await -- Fastify runs a hook without a done parameter only when it returns a promise
        app.addHook('preHandler', async (request) => {
          if (request.url === VALIDATE) seen.preHandler++;
        });
      },
    });
    for (const t of [plain, withOnRequest, withPreHandler]) await publishLoanRules(t);
  });
  afterAll(async () => {
    await Promise.all([plain, withOnRequest, withPreHandler].map((t) => t?.close()));
  });

  it('is on in the app as built, and answers the validations', async () => {
    const fastLane = plain.app.internals.fastLane;
    expect(fastLane).toBeDefined();
    const before = fastLane!.answered;
    await ok(plain.request('POST', VALIDATE, { body: { context: 'loan', payload: { amount: 1 } } }));
    expect(fastLane!.answered).toBe(before + 1);
    expect(lines.filter((line) => line.startsWith('plain') && line.includes('validation fast lane off'))).toEqual([]);
  });

  it('is off with an onRequest hook it does not know, says so once, and the hook runs for every validation', async () => {
    expect(withOnRequest.app.internals.fastLane).toBeUndefined();
    const off = lines.filter((line) => line.startsWith('onRequest') && line.includes('validation fast lane off'));
    expect(off).toHaveLength(1);
    expect(JSON.parse(off[0].slice('onRequest '.length)).msg).toBe('validation fast lane off: onRequest hook (countValidations) not accounted for');
    const before = seen.onRequest;
    for (let i = 0; i < 3; i++) await ok(withOnRequest.request('POST', VALIDATE, { body: { context: 'loan', payload: { amount: i } } }));
    expect(seen.onRequest).toBe(before + 3);
  });

  it('is off with a preHandler hook it does not know, and the hook runs for every validation', async () => {
    expect(withPreHandler.app.internals.fastLane).toBeUndefined();
    const before = seen.preHandler;
    for (let i = 0; i < 3; i++) await ok(withPreHandler.request('POST', VALIDATE, { body: { context: 'loan', payload: { amount: i } } }));
    expect(seen.preHandler).toBe(before + 3);
  });

  it('gives the same answers with the fast lane on and off', async () => {
    const fastLane = plain.app.internals.fastLane!;
    const before = { ...fastLane };
    const on = await answersOf(plain);
    // The fast lane answered the two validations and handed the three refusals to Fastify.
    expect({ ...fastLane }).toEqual({ answered: before.answered + 2, handedBack: before.handedBack + 3 });
    const off = await answersOf(withOnRequest);
    expect(on.map((a) => a.status)).toEqual([200, 200, 400, 400, 404]);
    for (let i = 0; i < REQUESTS.length; i++) expect(on[i], REQUESTS[i].name).toEqual(off[i]);
    expect(on[0].headers['content-type']).toBe('application/json; charset=utf-8');
    expect(on[0].headers['ratelimit-limit']).toMatch(/^\d+$/);
  });
});
