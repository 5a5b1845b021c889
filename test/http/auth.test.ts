/**
 * Authentication and roles over real HTTP (docs/api.md
 * 5): every kind of bad credential gets the same 401 body, a validator key
 * gets 403 on management routes, revocation is effective at once, and
 * health routes need no key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNAUTHORIZED_DETAIL } from '../../src/errors.ts';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.ts';

const VALIDATE = '/api/v1/validation/validate';
const BODY = { context: 'no-such-context', payload: {} };

let t: TestApp;
let validatorKey: string;
let revokedKey: string;

beforeAll(async () => {
  t = await startTestApp();
  validatorKey = (await t.request('POST', '/api/v1/api-keys', { body: { name: 'checkout', role: 'validator' } })).body.key;
  const revoked = await t.request('POST', '/api/v1/api-keys', { body: { name: 'old', role: 'admin' } });
  revokedKey = revoked.body.key;
  expect((await t.request('DELETE', `/api/v1/api-keys/${revoked.body.id}`)).status).toBe(204);
});
afterAll(async () => {
  await t?.close();
});

/** The 401 body with its per-request id blanked, for byte comparison. */
function anonymized(response: TestResponse): string {
  return response.text.replace(/"requestId":"[^"]+"/, '"requestId":""');
}

describe('401', () => {
  const cases: [string, () => { key?: string | null; tenant?: string | null }][] = [
    ['no key', () => ({ key: null })],
    ['an empty key', () => ({ key: '' })],
    ['a malformed key', () => ({ key: 'not a key!' })],
    ['a short key', () => ({ key: 'rk_short' })],
    ['a key with a space', () => ({ key: `${t.adminKey} ` + 'x' })],
    ['two keys', () => ({ key: `${t.adminKey}, ${t.adminKey}` })],
    ['an unknown key', () => ({ key: `rk_${'A'.repeat(43)}` })],
    ['a revoked key', () => ({ key: revokedKey })],
    ['no tenant', () => ({ tenant: null })],
    ['an empty tenant', () => ({ tenant: '' })],
    ['a malformed tenant', () => ({ tenant: 'Acme Corp' })],
    ['an over-long tenant', () => ({ tenant: 'a'.repeat(64) })],
    ['another tenant', () => ({ tenant: t.otherTenantId })],
    ['an unknown tenant', () => ({ tenant: 'initech' })],
    ['another tenant\'s key', () => ({ key: t.otherAdminKey })],
    ['nothing at all', () => ({ key: null, tenant: null })],
  ];

  let reference: string;
  beforeAll(async () => {
    reference = anonymized(await t.request('POST', VALIDATE, { body: BODY, key: null, tenant: null }));
  });

  it.each(cases)('is the same body for %s', async (_name, credentials) => {
    const response = await t.request('POST', VALIDATE, { body: BODY, ...credentials() });
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    expect(response.headers.get('server-timing')).toMatch(/^total;dur=\d+\.\d{3}$/);
    expect(response.body).toMatchObject({
      type: '/problems/unauthorized',
      title: 'Unauthorized',
      status: 401,
      code: 'UNAUTHORIZED',
      detail: UNAUTHORIZED_DETAIL,
    });
    expect(response.body.errors).toBeUndefined();
    expect(anonymized(response)).toBe(reference);
  });

  it.each([
    ['GET', '/api/v1/rules'],
    ['POST', '/api/v1/contexts/loan/publish'],
    ['GET', '/api/v1/no-such-route'],
    ['GET', '/api/v1'],
  ])('guards %s %s, known route or not', async (method, path) => {
    const response = await t.request(method, path, { key: null });
    expect(response.status).toBe(401);
    expect(anonymized(response)).toBe(reference);
  });

  it('is checked before the body is looked at', async () => {
    const response = await t.request('POST', VALIDATE, { rawBody: '{not json', key: null });
    expect(response.status).toBe(401);
  });
});

describe('roles', () => {
  it('lets a validator key validate', async () => {
    const response = await t.request('POST', VALIDATE, { body: BODY, key: validatorKey });
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('CONTEXT_NOT_FOUND');
  });

  it.each([
    ['GET', '/api/v1/rules'],
    ['POST', '/api/v1/rules'],
    ['GET', '/api/v1/contexts'],
    ['GET', '/api/v1/api-keys'],
    ['POST', '/api/v1/api-keys'],
    ['POST', '/api/v1/rules/test'],
  ])('refuses a validator key on %s %s with 403', async (method, path) => {
    const response = await t.request(method, path, { key: validatorKey, body: method === 'POST' ? {} : undefined });
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    expect(response.body).toMatchObject({ code: 'FORBIDDEN', status: 403, type: '/problems/forbidden' });
  });

  it('refuses a validator key on HEAD of a management route (the route Fastify adds beside GET)', async () => {
    const response = await t.request('HEAD', '/api/v1/rules', { key: validatorKey });
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
  });

  it('lets a validator key through to the three validation operations', async () => {
    const single = await t.request('POST', '/api/v1/validation/validate', { key: validatorKey, body: { context: 'no-such-context', payload: {} } });
    expect(single.status).toBe(404);
    expect(single.body.code).toBe('CONTEXT_NOT_FOUND');
    const transaction = await t.request('POST', '/api/v1/validation/validate-transaction', {
      key: validatorKey, body: { transactionId: 't-1', contexts: ['no-such-context'], payload: {} },
    });
    expect(transaction.status).toBe(404);
    const batch = await t.request('POST', '/api/v1/validation/validate-batch', {
      key: validatorKey, body: { context: 'no-such-context', items: [{ id: 'a', payload: {} }] },
    });
    expect(batch.status).toBe(404);
  });

  it('answers an unknown route with 404, not 403, for a validator key', async () => {
    const response = await t.request('GET', '/api/v1/no-such-route', { key: validatorKey });
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('NOT_FOUND');
  });

  it('lets an admin key call management routes', async () => {
    expect((await t.request('GET', '/api/v1/rules')).status).toBe(200);
  });
});

describe('keys', () => {
  it('issues rk_ keys of 32 random bytes, shown once', async () => {
    const created = await t.request('POST', '/api/v1/api-keys', { body: { name: 'new', role: 'validator' } });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^rk_[A-Za-z0-9_-]{43}$/);
    const listed = await t.request('GET', '/api/v1/api-keys');
    expect(listed.text).not.toContain(created.body.key);
  });

  it('revokes at once: the next request with the key is 401', async () => {
    const created = await t.request('POST', '/api/v1/api-keys', { body: { name: 'short-lived', role: 'validator' } });
    const key = created.body.key;
    expect((await t.request('POST', VALIDATE, { body: BODY, key })).status).toBe(404);
    expect((await t.request('DELETE', `/api/v1/api-keys/${created.body.id}`)).status).toBe(204);
    expect((await t.request('POST', VALIDATE, { body: BODY, key })).status).toBe(401);
  });

  it('revokes at once through KeyService too', async () => {
    const { record, key } = await t.app.deps.keys.create(t.tenantId, 'direct', 'validator');
    expect((await t.request('POST', VALIDATE, { body: BODY, key })).status).toBe(404);
    await t.app.deps.keys.revoke(t.tenantId, record.id);
    expect((await t.request('POST', VALIDATE, { body: BODY, key })).status).toBe(401);
  });

  it('records lastUsedAt in the background', async () => {
    const created = await t.request('POST', '/api/v1/api-keys', { body: { name: 'tracked', role: 'validator' } });
    const before = Date.now();
    await t.request('POST', VALIDATE, { body: BODY, key: created.body.key });
    await t.app.internals.lastUsed.flush();
    const listed = await t.request('GET', '/api/v1/api-keys');
    const item = listed.body.items.find((k: { id: string }) => k.id === created.body.id);
    expect(item.lastUsedAt).not.toBeNull();
    expect(Date.parse(item.lastUsedAt)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('keeps tenants apart: a key works only with its own tenant', async () => {
    const response = await t.request('POST', VALIDATE, { body: BODY, key: t.otherAdminKey, tenant: t.otherTenantId });
    expect(response.status).toBe(404);
  });
});

describe('health', () => {
  it.each(['/health/live', '/health/ready'])('%s needs no key', async (path) => {
    const response = await t.request('GET', path, { key: null, tenant: null });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ status: path.endsWith('live') ? 'ok' : 'ready' });
  });
});
