/**
 * API keys over HTTP (docs/api.md): the secret is shown
 * once, lists never carry secrets, roles are enforced, revocation is
 * effective at once, and the tenant's last active admin key stays.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../support/app.ts';
import { ok, expectProblem, type Json, type Response } from '../support/expect-response.ts';

type TestApp = Awaited<ReturnType<typeof startTestApp>>;

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

function api(method: string, path: string, body?: unknown, key?: string): Promise<Response> {
  return t.request(method, `/api/v1${path}`, { body, key });
}

async function listKeys(): Promise<Json[]> {
  return (await ok(api('GET', '/api-keys'))).items;
}

describe('api keys', () => {
  let admin: Json;
  let validator: Json;

  it('POST creates a key and shows its secret once', async () => {
    admin = await ok(api('POST', '/api-keys', { name: 'ci admin', role: 'admin' }), 201);
    validator = await ok(api('POST', '/api-keys', { name: 'checkout', role: 'validator' }), 201);
    expect(Object.keys(admin)).toEqual(['id', 'name', 'role', 'key', 'createdAt']);
    expect(admin).toMatchObject({ name: 'ci admin', role: 'admin' });
    expect(validator).toMatchObject({ name: 'checkout', role: 'validator' });
    // 32 random bytes in base64url: 43 characters after the prefix.
    expect(admin.key).toMatch(/^rk_[A-Za-z0-9_-]{43}$/);
    expect(validator.key).not.toBe(admin.key);
    expect(Date.parse(admin.createdAt)).not.toBeNaN();
  });

  it('a new admin key manages, a new validator key only validates', async () => {
    await ok(api('GET', '/rules', undefined, admin.key));
    await expectProblem(api('GET', '/rules', undefined, validator.key), 403, 'FORBIDDEN');
    await expectProblem(api('POST', '/api-keys', { name: 'escalate', role: 'admin' }, validator.key), 403, 'FORBIDDEN');
    // The validator key is accepted by validation: the context simply does not exist.
    const response = await api('POST', '/validation/validate', { context: 'none', payload: {} }, validator.key);
    expect(response.status).toBe(404);
  });

  it('GET lists keys without secrets or hashes', async () => {
    const response = await api('GET', '/api-keys');
    expect(response.status).toBe(200);
    const text = JSON.stringify(response.body);
    expect(text).not.toContain(admin.key);
    expect(text).not.toContain(validator.key);
    expect(text).not.toContain(t.adminKey);
    const items = response.body.items as Json[];
    const mine = items.find((item) => item.id === admin.id)!;
    expect(mine).toEqual({
      id: admin.id,
      name: 'ci admin',
      role: 'admin',
      createdAt: admin.createdAt,
      revokedAt: null,
      lastUsedAt: mine.lastUsedAt,
    });
    expect(mine.lastUsedAt === null || typeof mine.lastUsedAt === 'string').toBe(true);
    for (const item of items) {
      expect(Object.keys(item).sort()).toEqual(['createdAt', 'id', 'lastUsedAt', 'name', 'revokedAt', 'role']);
    }
    expect(items.map((item) => item.id)).toEqual(expect.arrayContaining([admin.id, validator.id]));
  });

  it('DELETE revokes at once (204, again 204) and the key gets 401', async () => {
    await ok(api('GET', '/rules', undefined, admin.key));
    expect((await api('DELETE', `/api-keys/${admin.id}`)).status).toBe(204);
    await expectProblem(api('GET', '/rules', undefined, admin.key), 401, 'UNAUTHORIZED');
    expect((await api('DELETE', `/api-keys/${admin.id}`)).status).toBe(204);

    expect((await api('DELETE', `/api-keys/${validator.id}`)).status).toBe(204);
    await expectProblem(api('POST', '/validation/validate', { context: 'none', payload: {} }, validator.key), 401, 'UNAUTHORIZED');

    const revoked = (await listKeys()).find((item) => item.id === admin.id)!;
    expect(revoked.revokedAt).toEqual(expect.any(String));
  });

  it('404 for unknown and malformed ids', async () => {
    await expectProblem(api('DELETE', '/api-keys/3f0c4a52-1c1b-4b8e-9a53-7a8d2c7e9f10'), 404, 'NOT_FOUND');
    await expectProblem(api('DELETE', '/api-keys/not-a-uuid'), 404, 'NOT_FOUND');
  });

  it.each([
    ['a missing name', { role: 'admin' }, 'name'],
    ['an empty name', { name: '', role: 'admin' }, 'name'],
    ['a missing role', { name: 'k' }, 'role'],
    ['an unknown role', { name: 'k', role: 'root' }, 'role'],
    ['an unknown field', { name: 'k', role: 'admin', tenantId: 'other' }, 'tenantId'],
  ])('400 for %s', async (_name, body, field) => {
    const problem = await expectProblem(api('POST', '/api-keys', body), 400, 'INVALID_BODY');
    expect(JSON.stringify(problem.errors)).toContain(field);
  });

  it("409 for the tenant's last active admin key, which keeps working", async () => {
    const active = (await listKeys()).filter((item) => item.role === 'admin' && item.revokedAt === null);
    expect(active.length).toBeGreaterThanOrEqual(1);
    // Revoke every active admin key but the one the tests use...
    const spare = await ok(api('POST', '/api-keys', { name: 'spare', role: 'admin' }), 201);
    for (const item of active) {
      if (item.id === spare.id) continue;
      expect((await api('DELETE', `/api-keys/${item.id}`, undefined, spare.key)).status).toBe(204);
    }
    // ...then the last one may not go.
    await expectProblem(api('DELETE', `/api-keys/${spare.id}`, undefined, spare.key), 409, 'CONFLICT');
    await ok(api('GET', '/api-keys', undefined, spare.key));
    await expectProblem(api('GET', '/api-keys'), 401, 'UNAUTHORIZED');
  });
});
