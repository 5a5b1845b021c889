/**
 * Errors over real HTTP (docs/api.md): every error is problem+json with a
 * stable code and a request id, carries Server-Timing, and never leaks a
 * stack, SQL or a secret. Covers the content-type tricks of SECURITY-NOTES
 * 5.2 (each replayed on a raw socket, so no client library normalizes the
 * header first), body size, bad JSON, unknown routes, unexpected errors and
 * an unreachable database.
 */
import { STATUS_CODES } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { ERRORS, problemType, type ErrorCode, type ErrorEntry } from '../../src/errors.ts';
import { UnavailableError, type Storage } from '../../src/storage/types.ts';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SERVER_TIMING = /^total;dur=\d+\.\d{3}$/;
const VALIDATE = '/api/v1/validation/validate';
const BODY = JSON.stringify({ context: 'no-such-context', payload: { a: 1 } });

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ env: { MAX_BODY_BYTES: '2048' } });
});
afterAll(async () => {
  await t?.close();
});

/** Asserts the problem+json shape of docs/api.md and returns the body. */
function expectProblem(response: TestResponse, status: number, code: ErrorCode): Record<string, any> {
  expect(response.status, response.text).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
  expect(response.headers.get('server-timing')).toMatch(SERVER_TIMING);
  const body = response.body;
  expect(body).toMatchObject({ type: problemType(code), title: ERRORS[code].title, status, code });
  expect(typeof body.detail).toBe('string');
  expect(body.requestId).toMatch(UUID);
  return body;
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends bytes as they are and reads the response until the server closes
 * the connection (requests say Connection: close). `halfClose` also ends
 * our side, for requests whose body must be seen to stop short; Node then
 * drops responses still being computed, so it is off by default.
 */
function rawRequest(request: string | Buffer, halfClose = false): Promise<RawResponse> {
  const { hostname, port } = new URL(t.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => (halfClose ? socket.end(request) : socket.write(request)));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') });
    });
  });
}

/** A POST to the validate endpoint with a verbatim Content-Type line (or none), and any extra header lines. */
function postWithContentType(contentType: string | undefined, body: string | Buffer = BODY, extraLines: string[] = []): Promise<RawResponse> {
  const lines = [
    `POST ${VALIDATE} HTTP/1.1`,
    'Host: 127.0.0.1',
    `X-Api-Key: ${t.adminKey}`,
    `X-Tenant-Id: ${t.tenantId}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...extraLines,
  ];
  if (contentType !== undefined) lines.push(`Content-Type: ${contentType}`);
  return rawRequest(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), Buffer.from(body)]));
}

describe('Content-Type', () => {
  // A JSON body under an accepted type reaches the handler: the context is
  // unknown, so 404 CONTEXT_NOT_FOUND proves the body was parsed and used.
  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=utf-8',
    'Application/JSON; Charset=UTF-8',
    'application/json; charset="utf-8"',
  ])('accepts %j', async (contentType) => {
    const response = await postWithContentType(contentType);
    expect(response.status, response.body).toBe(404);
    expect(JSON.parse(response.body).code).toBe('CONTEXT_NOT_FOUND');
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['no header at all', undefined],
    ['trailing text after the subtype', 'application/json whatever'],
    ['a tab before ;', 'application/json\t; charset=utf-8'],
    ['a space before ;', 'application/json ; charset=utf-8'],
    ['a longer subtype', 'application/jsonx'],
    ['another charset', 'application/json; charset=latin1'],
    ['an extra parameter', 'application/json; charset=utf-8; boundary=x'],
    ['another JSON flavour', 'application/problem+json'],
    ['markup after the type', 'application/json<script>alert(1)</script>'],
    ['extra slashes', 'application/json/extra/slashes'],
    ['comment-like garbage', 'application/json(garbage)'],
    ['an at sign', 'application/json@evil'],
    ['a prototype name', 'constructor'],
    ['a prototype name with parameters', 'constructor; charset=utf-8'],
    ['a JSON type smuggled into a parameter', 'text/plain; content-type="application/json"'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['non-ASCII', 'foo/\u03c0; param=1'],
  ])('refuses %s with 415', async (_name, contentType) => {
    const response = await postWithContentType(contentType);
    expect(response.status, response.body).toBe(415);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    const body = JSON.parse(response.body);
    expect(body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(body.requestId).toMatch(UUID);
  });

  // On the wire, spaces after the colon are optional whitespace that the
  // HTTP parser drops; a value that starts with a space can only reach the
  // app from an in-process client, so that case goes through inject.
  it.each([' application/json', '\tapplication/json', 'application/json '])(
    'refuses %j when a client hands it over verbatim',
    async (contentType) => {
      const response = await t.app.inject({
        method: 'POST',
        url: VALIDATE,
        headers: { 'content-type': contentType, 'x-api-key': t.adminKey, 'x-tenant-id': t.tenantId },
        payload: BODY,
      });
      expect(response.statusCode, response.body).toBe(415);
      expect(response.json().code).toBe('UNSUPPORTED_MEDIA_TYPE');
    },
  );

  it('refuses every Object.prototype name as a Content-Type, like fastify', async () => {
    for (const name of Object.getOwnPropertyNames(Object.prototype)) {
      const response = await postWithContentType(name);
      expect(response.status, name).toBe(415);
    }
  });
});

describe('Content-Encoding', () => {
  // The service reads bodies as sent. A compressed body must not be parsed as
  // JSON text, nor a plain one labelled compressed be taken as it is.
  it.each([
    ['a gzip body', gzipSync(BODY), 'gzip'],
    ['a plain body labelled gzip', BODY, 'gzip'],
    ['a plain body labelled deflate', BODY, 'deflate'],
    ['a plain body labelled br', BODY, 'br'],
    ['a list of codings', BODY, 'identity, gzip'],
  ])('refuses %s with 415', async (_name, body, encoding) => {
    const response = await postWithContentType('application/json', body, [`Content-Encoding: ${encoding}`]);
    expect(response.status, response.body).toBe(415);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    const problem = JSON.parse(response.body);
    expect(problem.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(problem.detail).toMatch(/Content-Encoding/);
  });

  it.each(['identity', 'IDENTITY'])('reads a body labelled %j as sent', async (encoding) => {
    const response = await postWithContentType('application/json', BODY, [`Content-Encoding: ${encoding}`]);
    expect(response.status, response.body).toBe(404);
    expect(JSON.parse(response.body).code).toBe('CONTEXT_NOT_FOUND');
  });
});

describe('bodies', () => {
  it('answers 413 PAYLOAD_TOO_LARGE past MAX_BODY_BYTES', async () => {
    const payload = { blob: 'x'.repeat(4096) };
    const response = await t.request('POST', VALIDATE, { body: { context: 'c', payload } });
    const body = expectProblem(response, 413, 'PAYLOAD_TOO_LARGE');
    expect(body.errors).toBeUndefined();
  });

  it('reads a body that starts with a UTF-8 byte order mark, as some clients send', async () => {
    const response = await postWithContentType('application/json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(BODY)]));
    expect(response.status, response.body).toBe(404);
    expect(JSON.parse(response.body).code).toBe('CONTEXT_NOT_FOUND');
  });

  it('accepts a body just under the limit', async () => {
    const filler = 'x'.repeat(2048 - JSON.stringify({ context: 'c', payload: { blob: '' } }).length);
    const response = await t.request('POST', VALIDATE, { body: { context: 'c', payload: { blob: filler } } });
    expect(response.status).toBe(404);
  });

  it.each([
    ['truncated JSON', '{"context":'],
    ['a trailing comma', '{"context":"c","payload":{},}'],
    ['single quotes', "{'context':'c'}"],
    ['NaN', '{"context":"c","payload":{"a":NaN}}'],
  ])('answers 400 INVALID_BODY for %s', async (_name, rawBody) => {
    const body = expectProblem(await t.request('POST', VALIDATE, { rawBody }), 400, 'INVALID_BODY');
    expect(body.errors).toEqual([{ path: '', message: 'must be valid JSON' }]);
  });

  it('answers 400 for an empty body where one is required', async () => {
    const body = expectProblem(await t.request('POST', VALIDATE, { rawBody: '' }), 400, 'INVALID_BODY');
    expect(body.errors).toEqual([expect.objectContaining({ path: '' })]);
  });

  it('answers 400 for a POST without any body', async () => {
    const body = expectProblem(await t.request('POST', VALIDATE), 400, 'INVALID_BODY');
    expect(body.errors).toEqual([expect.objectContaining({ path: '' })]);
  });

  it('answers 400 when Content-Length promises more than is sent', async () => {
    const lines = [
      `POST ${VALIDATE} HTTP/1.1`, 'Host: 127.0.0.1', `X-Api-Key: ${t.adminKey}`, `X-Tenant-Id: ${t.tenantId}`,
      'Content-Type: application/json', 'Content-Length: 5', 'Connection: close',
    ];
    const response = await rawRequest(`${lines.join('\r\n')}\r\n\r\n{}`, true);
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(response.headers['server-timing']).toMatch(SERVER_TIMING);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'INVALID_BODY', status: 400 });
  });

  it('answers a request the HTTP parser refuses with a problem', async () => {
    const response = await rawRequest('GET /health/live HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'INVALID_BODY', requestId: expect.stringMatching(UUID) });
  });
});

describe('routes', () => {
  it.each(['/nope', '/api', '/health', '/api/v2/validation/validate'])('answers 404 NOT_FOUND for %s', async (path) => {
    expectProblem(await t.request('GET', path, { key: null, tenant: null }), 404, 'NOT_FOUND');
  });

  it('answers 404 for a known path with the wrong method, after authentication', async () => {
    expectProblem(await t.request('GET', VALIDATE), 404, 'NOT_FOUND');
  });

  it('gives every response a fresh request id', async () => {
    const first = await t.request('GET', '/nope');
    const second = await t.request('GET', '/nope');
    expect(first.body.requestId).not.toBe(second.body.requestId);
  });

  it('does not take a request id from the client', async () => {
    const response = await t.request('GET', '/nope', { headers: { 'request-id': 'mine', 'x-request-id': 'mine' } });
    expect(response.body.requestId).toMatch(UUID);
  });

  it('answers a malformed URL with a problem', async () => {
    const response = await rawRequest('GET /api/v1/contexts/%E0%A4%A/validator HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(response.headers['server-timing']).toMatch(SERVER_TIMING);
    expect(JSON.parse(response.body)).toMatchObject({
      code: 'INVALID_BODY', requestId: expect.stringMatching(UUID),
      detail: 'The URL is malformed: a path segment is not valid percent-encoded UTF-8.',
    });
  });

  it('authenticates a request with a long path segment before anything else, like any other', async () => {
    const long = 'a'.repeat(5000);
    const unauthenticated = await t.request('GET', `/api/v1/rules/${long}`, { key: null });
    expect(unauthenticated.status, unauthenticated.text).toBe(401);
    expect(unauthenticated.body.code).toBe('UNAUTHORIZED');
    const context = await t.request('GET', `/api/v1/contexts/${long}/validator`);
    expect(context.status, context.text).toBe(404);
  });

  it('times successful responses too', async () => {
    const response = await t.request('GET', '/health/live');
    expect(response.status).toBe(200);
    expect(response.headers.get('server-timing')).toMatch(SERVER_TIMING);
  });
});

describe('failures inside the service', () => {
  /** The real storage with rule loading replaced by a failure. */
  function failingStorage(storage: Storage, failure: () => Error): Storage {
    const rules = Object.create(storage.rules) as Storage['rules'];
    rules.liveRuleset = () => Promise.reject(failure());
    return { ...storage, rules, close: async () => {} };
  }

  async function withApp(storage: Storage, run: (baseUrl: string) => Promise<void>): Promise<void> {
    const app = await buildApp({ config: t.config, storage });
    const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
    try {
      await run(baseUrl);
    } finally {
      await app.close();
    }
  }

  async function post(baseUrl: string): Promise<{ status: number; headers: Headers; text: string }> {
    const response = await fetch(baseUrl + VALIDATE, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': t.adminKey, 'x-tenant-id': t.tenantId },
      body: JSON.stringify({ context: 'loan', payload: {} }),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  it('answers an unexpected error with a generic 500 that leaks nothing', async () => {
    const secret = 'SELECT key_hash FROM api_keys WHERE password = \'hunter2\'';
    await withApp(failingStorage(t.storage, () => new TypeError(`boom: ${secret}`)), async (baseUrl) => {
      const response = await post(baseUrl);
      expect(response.status).toBe(500);
      expect(response.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
      expect(response.headers.get('server-timing')).toMatch(SERVER_TIMING);
      const body = JSON.parse(response.text);
      expect(body).toMatchObject({ code: 'INTERNAL', status: 500, type: problemType('INTERNAL') });
      for (const leak of ['SELECT', 'hunter2', 'boom', 'TypeError', ' at ', '.ts:', t.adminKey]) {
        expect(response.text).not.toContain(leak);
      }
    });
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After when the database is unreachable', async () => {
    await withApp(failingStorage(t.storage, () => new UnavailableError('connection refused')), async (baseUrl) => {
      const response = await post(baseUrl);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toMatch(/^[1-5]$/);
      expect(JSON.parse(response.text)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
    });
  });
});

describe('the error catalogue', () => {
  const entries = Object.entries(ERRORS) as Array<[ErrorCode, ErrorEntry]>;

  it.each(entries)('%s: an upper-case code, an HTTP error status, a title and a default detail', (code, entry) => {
    expect(code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
    expect(entry.status).toBeGreaterThanOrEqual(400);
    expect(entry.status).toBeLessThanOrEqual(599);
    expect(STATUS_CODES[entry.status], `status ${entry.status}`).toBeDefined();
    expect(entry.title.trim()).not.toBe('');
    expect(entry.detail.trim()).not.toBe('');
  });

  it('gives every code its own type URI', () => {
    const types = entries.map(([code]) => problemType(code));
    expect(new Set(types).size).toBe(types.length);
  });
});
