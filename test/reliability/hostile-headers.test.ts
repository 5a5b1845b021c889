/**
 * Hostile authentication headers (docs/api.md, SECURITY-NOTES 4 API1/API2):
 * missing, empty, oversized, non-ASCII, repeated and injection-shaped
 * X-Api-Key and X-Tenant-Id values. Every one is 401 with the same body
 * (only requestId differs), on a management route and on a validation
 * route, sent on a raw socket so no client library cleans them up first.
 * Then timing: the median answer time must not tell an unknown tenant from
 * a known tenant with a wrong key, or from another tenant's valid key, both
 * the first time a key and tenant fail together (a storage lookup) and when
 * the same pair fails again (answered from memory).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { quantile, report, UNLIMITED } from './support/measure.ts';
import { rawRequest, type RawResponse } from './support/raw-http.ts';

let t: TestApp;
let validatorKey: string;
let revokedKey: string;
let reference: { body: Record<string, unknown>; headers: Record<string, string> };

const randomKey = (): string => `rk_${randomBytes(32).toString('base64url')}`;
const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');

type Headers = Array<[string, string | Buffer]>;

/** Each case: the auth headers to send (null = the suite fills in nothing else). */
const CASES: Array<[string, () => Headers]> = [
  ['no headers at all', () => []],
  ['no X-Api-Key', () => [['X-Tenant-Id', t.tenantId]]],
  ['no X-Tenant-Id', () => [['X-Api-Key', t.adminKey]]],
  ['an empty key', () => [['X-Api-Key', ''], ['X-Tenant-Id', t.tenantId]]],
  ['an empty tenant', () => [['X-Api-Key', t.adminKey], ['X-Tenant-Id', '']]],
  ['a tenant of spaces', () => [['X-Api-Key', t.adminKey], ['X-Tenant-Id', '     ']]],
  ['an 8,000-character key', () => [['X-Api-Key', 'k'.repeat(8000)], ['X-Tenant-Id', t.tenantId]]],
  ['an 8,000-character tenant', () => [['X-Api-Key', t.adminKey], ['X-Tenant-Id', 'a'.repeat(8000)]]],
  ['the key plus one character', () => [['X-Api-Key', `${t.adminKey}x`], ['X-Tenant-Id', t.tenantId]]],
  ['the key less one character', () => [['X-Api-Key', t.adminKey.slice(0, -1)], ['X-Tenant-Id', t.tenantId]]],
  ['the key in upper case', () => [['X-Api-Key', t.adminKey.toUpperCase()], ['X-Tenant-Id', t.tenantId]]],
  ['the tenant in upper case', () => [['X-Api-Key', t.adminKey], ['X-Tenant-Id', t.tenantId.toUpperCase()]]],
  ['a Cyrillic look-alike tenant (UTF-8 bytes)', () => [['X-Api-Key', t.adminKey], ['X-Tenant-Id', utf8('\u0430cme')]]],
  ['a key with UTF-8 bytes', () => [['X-Api-Key', utf8(`${t.adminKey}\u00e9`)], ['X-Tenant-Id', t.tenantId]]],
  ['an emoji tenant', () => [['X-Api-Key', t.adminKey], ['X-Tenant-Id', utf8('acme\u{1f600}')]]],
  ['a Latin-1 byte in the key', () => [['X-Api-Key', Buffer.concat([Buffer.from(t.adminKey), Buffer.from([0xff])])], ['X-Tenant-Id', t.tenantId]]],
  ['SQL in the tenant', () => [['X-Api-Key', t.adminKey], ['X-Tenant-Id', "acme' OR '1'='1"]]],
  ['SQL in the key', () => [['X-Api-Key', "' OR 1=1 --"], ['X-Tenant-Id', t.tenantId]]],
  ['a well-formed SQL-looking key', () => [['X-Api-Key', 'x_OR_1_1_UNION_SELECT_key_hash_FROM_api_keys'], ['X-Tenant-Id', t.tenantId]]],
  ['a path in the tenant', () => [['X-Api-Key', t.adminKey], ['X-Tenant-Id', `../${t.otherTenantId}`]]],
  ['a percent-encoded NUL in the tenant', () => [['X-Api-Key', t.adminKey], ['X-Tenant-Id', `${t.tenantId}%00`]]],
  ['two tenants in one value', () => [['X-Api-Key', t.adminKey], ['X-Tenant-Id', `${t.tenantId},${t.otherTenantId}`]]],
  ['X-Tenant-Id twice', () => [['X-Api-Key', t.adminKey], ['X-Tenant-Id', t.tenantId], ['X-Tenant-Id', t.otherTenantId]]],
  ['X-Tenant-Id twice, both right', () => [['X-Api-Key', t.adminKey], ['X-Tenant-Id', t.tenantId], ['X-Tenant-Id', t.tenantId]]],
  ['X-Api-Key twice', () => [['X-Api-Key', t.otherAdminKey], ['X-Api-Key', t.adminKey], ['X-Tenant-Id', t.tenantId]]],
  ['a header line smuggled into the key', () => [['X-Api-Key', `junk\r\nX-Tenant-Id: ${t.otherTenantId}`], ['X-Tenant-Id', t.tenantId]]],
  ['an unknown well-formed key', () => [['X-Api-Key', randomKey()], ['X-Tenant-Id', t.tenantId]]],
  ['an unknown tenant', () => [['X-Api-Key', randomKey()], ['X-Tenant-Id', 'no-such-tenant']]],
  ["the other tenant's valid key", () => [['X-Api-Key', t.otherAdminKey], ['X-Tenant-Id', t.tenantId]]],
  ["a valid key with the other tenant's id", () => [['X-Api-Key', t.adminKey], ['X-Tenant-Id', t.otherTenantId]]],
  ['a revoked key', () => [['X-Api-Key', revokedKey], ['X-Tenant-Id', t.tenantId]]],
  ['the key as a Bearer token instead', () => [['Authorization', `Bearer ${t.adminKey}`], ['X-Tenant-Id', t.tenantId]]],
  ['the key as a cookie instead', () => [['Cookie', `x-api-key=${t.adminKey}`], ['X-Tenant-Id', t.tenantId]]],
  ['the header name misspelt', () => [['X-Api_Key', t.adminKey], ['X-Tenant-Id', t.tenantId]]],
];

const ROUTES: Array<[string, string, string | undefined]> = [
  ['GET', '/api/v1/rules', undefined],
  ['POST', '/api/v1/validation/validate', JSON.stringify({ context: 'orders', payload: { amount: 1 } })],
  ['GET', '/api/v1/rules?api_key=KEY', undefined],
];

function withoutRequestId(response: RawResponse): Record<string, unknown> {
  const body = JSON.parse(response.body) as Record<string, unknown>;
  expect(body.requestId).toMatch(/^[0-9a-f-]{36}$/);
  const { requestId: _ignored, ...rest } = body;
  return rest;
}

beforeAll(async () => {
  t = await startTestApp({ env: UNLIMITED });
  await t.request('POST', '/api/v1/rules', { body: { context: 'orders', code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100' } });
  await t.request('POST', '/api/v1/contexts/orders/publish');
  validatorKey = (await t.request('POST', '/api/v1/api-keys', { body: { name: 'validator', role: 'validator' } })).body.key;
  const revoked = (await t.request('POST', '/api/v1/api-keys', { body: { name: 'revoked', role: 'admin' } })).body;
  revokedKey = revoked.key;
  expect((await t.request('DELETE', `/api/v1/api-keys/${revoked.id}`)).status).toBe(204);
  const first = await rawRequest(t.baseUrl, 'GET', '/api/v1/rules', []);
  expect(first.status).toBe(401);
  reference = { body: withoutRequestId(first), headers: first.headers };
});
afterAll(async () => {
  await t?.close();
});

describe.each(ROUTES)('%s %s', (method, path, body) => {
  it.each(CASES)('%s: 401 with the one body', async (_name, headers) => {
    const sentPath = path.replace('KEY', encodeURIComponent(t.adminKey));
    const response = await rawRequest(t.baseUrl, method, sentPath, headers(), body);
    expect(response.status, response.body).toBe(401);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(response.headers['content-length']).toBe(reference.headers['content-length']);
    expect(withoutRequestId(response)).toEqual(reference.body);
    expect(response.headers['www-authenticate']).toBe(reference.headers['www-authenticate']);
    // Nothing names what was wrong, and nothing is echoed.
    for (const echo of [t.adminKey, t.otherAdminKey, t.otherTenantId, 'SELECT', "OR '1'"]) {
      expect(response.body).not.toContain(echo);
    }
  });
});

describe('the edges of the header grammar', () => {
  it('the reference 401 says nothing about which part was wrong', () => {
    expect(reference.body).toEqual({
      type: '/problems/unauthorized',
      title: 'Unauthorized',
      status: 401,
      detail: 'A valid X-Api-Key and the X-Tenant-Id of its tenant are required.',
      code: 'UNAUTHORIZED',
    });
  });

  it('headers past the HTTP parser limit are a 400 problem before authentication, not a crash', async () => {
    const response = await rawRequest(t.baseUrl, 'GET', '/api/v1/rules', [['X-Api-Key', 'k'.repeat(20_000)], ['X-Tenant-Id', t.tenantId]]);
    expect([400, 431]).toContain(response.status);
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(JSON.parse(response.body).code).toBe('INVALID_BODY');
    expect((await t.request('GET', '/health/live')).status).toBe(200);
  });

  it('a raw NUL byte is refused by the HTTP parser with a 400 problem', async () => {
    const response = await rawRequest(t.baseUrl, 'GET', '/api/v1/rules', [['X-Api-Key', t.adminKey], ['X-Tenant-Id', Buffer.from('acme\u0000', 'latin1')]]);
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body).code).toBe('INVALID_BODY');
  });

  it('whitespace around a value is HTTP framing and ignored: the right key and tenant still work', async () => {
    const response = await rawRequest(t.baseUrl, 'GET', '/api/v1/rules', [['X-Api-Key', `  ${t.adminKey}\t`], ['X-Tenant-Id', `\t${t.tenantId}  `]]);
    expect(response.status, response.body).toBe(200);
  });

  it('header names are case-insensitive, as HTTP says', async () => {
    const response = await rawRequest(t.baseUrl, 'GET', '/api/v1/rules', [['x-API-key', t.adminKey], ['X-TENANT-ID', t.tenantId]]);
    expect(response.status, response.body).toBe(200);
  });

  it('a validator key on a management route is 403, the same for existing and unknown ids', async () => {
    const rules = await t.request('GET', '/api/v1/rules');
    const id = rules.body.items[0].id;
    const bodies = [];
    for (const path of [`/api/v1/rules/${id}`, '/api/v1/rules/00000000-0000-4000-8000-000000000000']) {
      const response = await t.request('GET', path, { key: validatorKey });
      expect(response.status).toBe(403);
      const { requestId: _ignored, ...rest } = response.body;
      bodies.push(rest);
    }
    expect(bodies[0]).toEqual(bodies[1]);
  });
});

describe('timing does not tell which part was wrong', () => {
  const ROUNDS = 300;
  const WARM_UP = 30;

  /** Interleaves the cases so drift on a shared machine hits them alike; returns medians in ms. */
  async function medians(cases: Record<string, () => Record<string, string>>): Promise<Record<string, number>> {
    const samples: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
    const send = async (headers: Record<string, string>): Promise<number> => {
      const started = performance.now();
      const response = await fetch(`${t.baseUrl}/api/v1/validation/validate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{"context":"orders","payload":{"amount":1}}',
      });
      await response.arrayBuffer();
      expect(response.status).toBe(401);
      return performance.now() - started;
    };
    for (let warm = 0; warm < WARM_UP; warm++) for (const make of Object.values(cases)) await send(make());
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, make] of Object.entries(cases)) samples[name].push(await send(make()));
    }
    return Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, Math.round(quantile(values, 0.5) * 1000) / 1000]));
  }

  function expectClose(figures: Record<string, number>): void {
    const values = Object.values(figures);
    const ratio = Math.max(...values) / Math.min(...values);
    expect(ratio, JSON.stringify(figures)).toBeLessThan(3);
  }

  it('the first time each key and tenant fail together (each one looked up)', async () => {
    // The attacker's own valid keys, each used legitimately once, so each is in memory.
    const ownKeys: string[] = [];
    for (let i = 0; i < ROUNDS + WARM_UP; i++) {
      const { key } = await t.app.deps.keys.create(t.otherTenantId, `own ${i}`, 'validator');
      const own = await t.request('POST', '/api/v1/validation/validate', { key, tenant: t.otherTenantId, body: { context: 'none', payload: {} } });
      expect(own.status).toBe(404);
      ownKeys.push(key);
    }
    const figures = await medians({
      unknownTenant: () => ({ 'x-api-key': randomKey(), 'x-tenant-id': 'no-such-tenant' }),
      knownTenantWrongKey: () => ({ 'x-api-key': randomKey(), 'x-tenant-id': t.tenantId }),
      otherTenantsValidKey: () => ({ 'x-api-key': ownKeys.pop()!, 'x-tenant-id': t.tenantId }),
    });
    report('auth 401 median ms, first failure of each pair', figures);
    expectClose(figures);
  });

  it('the same key and tenant failing again and again (answered from memory)', async () => {
    const wrong = randomKey();
    const figures = await medians({
      unknownTenant: () => ({ 'x-api-key': wrong, 'x-tenant-id': 'no-such-tenant' }),
      knownTenantWrongKey: () => ({ 'x-api-key': wrong, 'x-tenant-id': t.tenantId }),
      otherTenantsValidKey: () => ({ 'x-api-key': t.otherAdminKey, 'x-tenant-id': t.tenantId }),
    });
    report('auth 401 median ms, repeated pair', figures);
    expectClose(figures);
  });
});
