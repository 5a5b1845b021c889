/**
 * Slow clients (SECURITY-NOTES 4, API4: Fastify's requestTimeout defaults
 * to 0, "must be set to a non-zero value… to protect against potential
 * Denial-of-Service"). A request that has not arrived in full within
 * REQUEST_TIMEOUT_MS is answered with a 400 problem and its connection
 * closed, whether its headers or its body are slow, whether it is silent
 * or trickles a byte at a time, and on the validation fast lane too; other
 * clients are served meanwhile. Run with a 1 s timeout so that the suite
 * stays short; the default is 30 s.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { UNLIMITED } from './support/measure.ts';

const TIMEOUT_MS = 1000;
/** Node checks for late requests every quarter of the timeout; generous for a loaded 2-core machine. */
const CUT_WITHIN_MS = 5000;
const VALIDATE = '/api/v1/validation/validate';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ env: { ...UNLIMITED, REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) } });
  await t.request('POST', '/api/v1/rules', { body: { context: 'orders', code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100' } });
  await t.request('POST', '/api/v1/contexts/orders/publish');
  // The admin key is now known, so validations with it take the fast lane.
  expect((await t.request('POST', VALIDATE, { body: { context: 'orders', payload: { amount: 1 } } })).status).toBe(200);
});
afterAll(async () => {
  await t?.close();
});

interface SlowOutcome {
  /** Everything the server wrote before closing. */
  text: string;
  /** From the first byte sent to the close. */
  ms: number;
}

/**
 * Sends `head` at once, then each of `trickle` every `everyMs` (if any),
 * and waits for the server to close the connection.
 */
function slowClient(head: string, trickle: string[] = [], everyMs = 200): Promise<SlowOutcome> {
  const { hostname, port } = new URL(t.baseUrl);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      socket.write(head);
      let next = 0;
      timer = setInterval(() => {
        if (next < trickle.length && socket.writable) socket.write(trickle[next++]);
      }, everyMs);
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ text: Buffer.concat(chunks).toString('utf8'), ms: performance.now() - started });
    });
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept a slow connection open for ${CUT_WITHIN_MS * 3} ms`));
    }, CUT_WITHIN_MS * 3);
  });
}

function headers(path: string, contentLength: number): string {
  return `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n`
    + `X-Api-Key: ${t.adminKey}\r\nX-Tenant-Id: ${t.tenantId}\r\nContent-Length: ${contentLength}\r\n\r\n`;
}

function expectCutOff(outcome: SlowOutcome): void {
  expect(outcome.text, outcome.text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
  expect(outcome.text).toContain('Content-Type: application/problem+json');
  expect(outcome.text).toContain('Connection: close');
  const body = JSON.parse(outcome.text.slice(outcome.text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
  expect(body).toMatchObject({ status: 400, code: 'INVALID_BODY', detail: 'The request took too long to arrive.' });
  expect(outcome.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  expect(outcome.ms).toBeLessThan(CUT_WITHIN_MS);
}

describe('a request that does not arrive in full within REQUEST_TIMEOUT_MS', () => {
  it('is cut off when its body stops short (on the fast lane)', async () => {
    const fastLane = t.app.internals.fastLane!;
    const before = fastLane.answered + fastLane.handedBack;
    expectCutOff(await slowClient(`${headers(VALIDATE, 200)}{"context":"orders"`));
    // The fast lane had taken it (its headers were the common case) and answered nothing.
    expect(fastLane.answered + fastLane.handedBack).toBe(before);
  });

  it('is cut off when its body stops short (on a Fastify route)', async () => {
    expectCutOff(await slowClient(`${headers('/api/v1/rules', 200)}{"context":"orders"`));
  });

  it('is cut off when its headers never end', async () => {
    expectCutOff(await slowClient(`GET /api/v1/rules HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: ${t.adminKey}\r\n`));
  });

  it('is cut off when it trickles a byte at a time: the timeout is for the whole request, not a pause', async () => {
    const body = JSON.stringify({ context: 'orders', payload: { amount: 1 } });
    expectCutOff(await slowClient(headers(VALIDATE, body.length), [...body], 100));
  });

  it('while other clients are answered as usual', async () => {
    const slow = slowClient(`${headers(VALIDATE, 200)}{`);
    const answers: number[] = [];
    for (let i = 0; i < 10; i++) {
      answers.push((await t.request('POST', VALIDATE, { body: { context: 'orders', payload: { amount: i } } })).status);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(answers).toEqual(new Array(10).fill(200));
    expectCutOff(await slow);
  });
});

describe('a request that arrives in time, however slowly', () => {
  it('is answered', async () => {
    const body = JSON.stringify({ context: 'orders', payload: { amount: 500 } });
    // Its body half the timeout after its headers; Connection: close, so the server ends the exchange.
    const head = headers(VALIDATE, body.length).replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n');
    const { text } = await slowClient(head, [body], TIMEOUT_MS / 2);
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text).toContain('"isValid":false');
  });
});
