/**
 * The fixed-rate load generator behind the latency figure, against real
 * HTTP servers in this process: it offers exactly the requests it says,
 * charges a slow server for the requests queued behind it (the property
 * autocannon's `overallRate` lacked), frames answers that arrive in parts,
 * and stops with a clear error on anything it cannot measure. No timing of
 * this machine is asserted; the one lower bound comes from the delays the
 * test server adds itself.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/tools/child-server.ts';
import { pooledLatency, runFixedRate } from '../../bench/tools/fixed-rate-load.ts';

type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void;

const servers: Server[] = [];

async function serve(handler: Handler): Promise<string> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handler(request, Buffer.concat(chunks).toString('utf8'), response));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/validation/validate`;
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const answer = (response: ServerResponse, status = 200, body = '{"isValid":true,"failures":[]}'): void => {
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  response.end(body);
};

describe('runFixedRate', () => {
  it('offers exactly rate × duration requests, each with the given headers and body, and measures every answer', async () => {
    const seen: { method?: string; url?: string; key?: string; type?: string; body: string }[] = [];
    const url = await serve((request, body, response) => {
      seen.push({ method: request.method, url: request.url, key: request.headers['x-api-key'] as string, type: request.headers['content-type'], body });
      answer(response);
    });
    const body = JSON.stringify({ context: 'orders', payload: { total: 12.5, note: 'ünïcode' } });

    const figures = await runFixedRate({
      url, headers: { 'content-type': 'application/json', 'x-api-key': 'key-1' }, body, rate: 2000, durationS: 0.5, connections: 4,
    });

    expect(figures.requests).toBe(1000);
    expect(seen).toHaveLength(1000);
    expect(new Set(seen.map((s) => JSON.stringify(s)))).toEqual(new Set([JSON.stringify({
      method: 'POST', url: '/api/v1/validation/validate', key: 'key-1', type: 'application/json', body,
    })]));
    const { p50, p90, p99, p999, max } = figures.latencyMs;
    expect(p50).toBeGreaterThan(0);
    expect([p50, p90, p99, p999, max]).toEqual([p50, p90, p99, p999, max].sort((a, b) => a - b));
    expect(figures.dispatchLagMs.p50).toBeGreaterThanOrEqual(0);
    expect(figures.offeredRate).toBe(2000);
  });

  it('charges a slow server for the requests that waited behind it, not just for the time each took once sent', async () => {
    // 30 requests offered over 300 ms to one connection, each answered 20 ms after it arrives:
    // serving them takes at least 600 ms, so the last ones wait about 300 ms before they are even sent.
    const url = await serve((_request, _body, response) => setTimeout(() => answer(response), 20));

    const figures = await runFixedRate({ url, headers: {}, body: '{}', rate: 100, durationS: 0.3, connections: 1 });

    expect(figures.requests).toBe(30);
    expect(figures.latencyMs.p50).toBeGreaterThanOrEqual(20);
    // A closed-loop client would report about 20 ms for every one of them.
    expect(figures.latencyMs.max).toBeGreaterThan(250);
  });

  it('frames answers that arrive in several reads, longer than its read buffer', async () => {
    const large = JSON.stringify({ failures: 'x'.repeat(200_000) });
    const url = await serve((_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(large) });
      response.write(large.slice(0, 10));
      setTimeout(() => response.end(large.slice(10)), 5);
    });

    const figures = await runFixedRate({ url, headers: {}, body: '{}', rate: 200, durationS: 0.1, connections: 2 });

    expect(figures.requests).toBe(20);
  });

  it('stops at the first answer that is not 2xx, with its status and body', async () => {
    const url = await serve((_request, _body, response) =>
      answer(response, 429, '{"title":"Too Many Requests","code":"RATE_LIMITED"}'));

    await expect(runFixedRate({ url, headers: {}, body: '{}', rate: 100, durationS: 0.2, connections: 2 }))
      .rejects.toThrow(/answer 429: \{"title":"Too Many Requests","code":"RATE_LIMITED"\}/);
  });

  it('stops when the server closes a connection', async () => {
    let count = 0;
    const url = await serve((request, _body, response) => {
      if (++count === 5) request.socket.destroy();
      else answer(response);
    });

    await expect(runFixedRate({ url, headers: {}, body: '{}', rate: 200, durationS: 0.2, connections: 2 }))
      .rejects.toThrow(/closed a connection/);
  });

  it('refuses answers it cannot frame (no Content-Length)', async () => {
    const url = await serve((_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"chunked":true}');
    });

    await expect(runFixedRate({ url, headers: {}, body: '{}', rate: 100, durationS: 0.1, connections: 1 }))
      .rejects.toThrow(/without Content-Length/);
  });

  it('refuses bytes that answer no request (a second answer to one request)', async () => {
    const url = await serve((request) => {
      const one = 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}';
      request.socket.write(one + one);
    });

    await expect(runFixedRate({ url, headers: {}, body: '{}', rate: 100, durationS: 0.1, connections: 1 }))
      .rejects.toThrow(/answer no request/);
  });

  it('with tally, counts every answer by status, and the 2xx answers that lack the header, instead of stopping', async () => {
    let count = 0;
    const url = await serve((_request, _body, response) => {
      const n = ++count;
      const status = n % 10 === 0 ? 503 : n % 10 === 5 ? 429 : 200;
      const body = '{}';
      const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': body.length };
      // Every fourth 200 passes without the header, as a request let through uncounted would.
      if (status !== 200 || n % 4 !== 0) headers['RateLimit-Limit'] = 100;
      response.writeHead(status, headers);
      response.end(body);
    });

    const figures = await runFixedRate({
      url, headers: {}, body: '{}', rate: 400, durationS: 0.1, connections: 1, tally: { header: 'ratelimit-limit' },
    });

    expect(figures.requests).toBe(40);
    expect(figures.statuses).toEqual({ 200: 32, 429: 4, 503: 4 });
    // Requests 4, 8, ..., 40 are the ones without the header; 20 and 40 are 503s, so 8 of the 200s lack it.
    expect(figures.okWithoutHeader).toBe(8);
  });

  it('with a stop signal, offers no request once it aborts and resolves when those offered are answered', async () => {
    const url = await serve((_request, _body, response) => setTimeout(() => answer(response), 30));
    const stop = new AbortController();

    const running = runFixedRate({ url, headers: {}, body: '{}', rate: 100, durationS: 600, connections: 4, stop: stop.signal });
    setTimeout(() => stop.abort(), 300);
    const figures = await running;

    // About 30 offered in 300 ms of a 60,000-request run, each answered and measured.
    expect(figures.requests).toBeGreaterThan(0);
    expect(figures.requests).toBeLessThan(200);
    expect(figures.latencyMs.p50).toBeGreaterThanOrEqual(30);
    expect(pooledLatency([figures]).max).toBe(figures.latencyMs.max);
  });

  it('with a stop signal that aborts before the first request, resolves with no requests and no latencies', async () => {
    const url = await serve((_request, _body, response) => answer(response));
    const stop = new AbortController();
    stop.abort();

    const figures = await runFixedRate({ url, headers: {}, body: '{}', rate: 100, durationS: 10, connections: 1, stop: stop.signal });

    expect(figures.requests).toBe(0);
    expect(figures.latencyMs.p99).toBeNaN();
  });

  it('says so when nothing listens', async () => {
    const port = await freePort();

    await expect(runFixedRate({ url: `http://127.0.0.1:${port}/x`, headers: {}, body: '{}', rate: 10, durationS: 1, connections: 3 }))
      .rejects.toThrow(/could not connect: connect ECONNREFUSED/);
  });

  it('sends traffic only to 127.0.0.1', async () => {
    await expect(runFixedRate({ url: 'http://localhost:9/x', headers: {}, body: '{}', rate: 10, durationS: 1, connections: 1 }))
      .rejects.toThrow(/only against 127\.0\.0\.1/);
  });
});

describe('pooledLatency', () => {
  it('takes the percentiles over every request of the runs together, where a slow run weighs in with all its requests', async () => {
    const fast = await serve((_request, _body, response) => answer(response));
    const slow = await serve((_request, _body, response) => setTimeout(() => answer(response), 40));
    const quick = await runFixedRate({ url: fast, headers: {}, body: '{}', rate: 200, durationS: 0.5, connections: 4 });
    const delayed = await runFixedRate({ url: slow, headers: {}, body: '{}', rate: 200, durationS: 0.5, connections: 10 });

    const pooled = pooledLatency([quick, delayed]);

    // 100 requests each: the slow run's 100 (all at least 40 ms) fill the top half, so the p99 is one of them;
    // the p50 is the 100th fastest, no slower than the fast run's slowest.
    expect(pooled.p99).toBeGreaterThanOrEqual(40);
    expect(pooled.p50).toBeLessThanOrEqual(quick.latencyMs.max);
    expect(pooled.max).toBe(Math.max(quick.latencyMs.max, delayed.latencyMs.max));
    expect(pooledLatency([delayed])).toEqual(delayed.latencyMs);
  });

  it('keeps the latencies out of the figures (they go into the results file) and takes only figures of its own runs', async () => {
    const url = await serve((_request, _body, response) => answer(response));
    const figures = await runFixedRate({ url, headers: {}, body: '{}', rate: 100, durationS: 0.1, connections: 1 });

    expect(Object.keys(figures).sort()).toEqual(['achievedRate', 'dispatchLagMs', 'durationS', 'latencyMs', 'offeredRate', 'requests']);
    expect(() => pooledLatency([{ ...figures }])).toThrow('pooledLatency takes figures returned by runFixedRate');
  });
});
