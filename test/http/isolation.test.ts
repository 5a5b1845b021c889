/**
 * Tenant isolation across every management route (docs/api.md:
 * "a rule, context or key of another tenant is 404, never 403 and never
 * visible"). Two tenants each own a rule, a live context and a key; each
 * tries the other's ids on every route, and no response may carry anything
 * of the other tenant.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../support/app.ts';
import { ok, type Json, type Response } from '../support/expect-response.ts';

type TestApp = Awaited<ReturnType<typeof startTestApp>>;

interface TenantFixture {
  name: 'first' | 'second';
  tenantId: string;
  adminKey: string;
  validatorKey: string;
  context: string;
  code: string;
  rule: Json;
  keyId: string;
}

let t: TestApp;
const tenants: Record<'first' | 'second', TenantFixture> = {} as never;

function api(tenant: TenantFixture, method: string, path: string, body?: unknown, key = tenant.adminKey): Promise<Response> {
  return t.request(method, `/api/v1${path}`, { body, key, tenant: tenant.tenantId });
}

async function setUp(name: 'first' | 'second', tenantId: string, adminKey: string): Promise<TenantFixture> {
  const fixture = { name, tenantId, adminKey } as TenantFixture;
  // Names unique to each tenant, so leaks are found by a plain text search.
  fixture.context = `ctx-of-${name}`;
  fixture.code = `CODE_OF_${name.toUpperCase()}`;
  fixture.rule = await ok(api(fixture, 'POST', '/rules', {
    context: fixture.context,
    code: fixture.code,
    name: `rule of ${name}`,
    fieldPath: 'amount',
    expression: 'amount <= 100',
    tags: [`tag-of-${name}`],
  }), 201);
  await ok(api(fixture, 'POST', `/rules/${fixture.rule.id}/publish`));
  // A shared context name too: the same name in two tenants is two contexts.
  const shared = await ok(api(fixture, 'POST', '/rules', {
    context: 'shared', code: 'SHARED', name: `shared of ${name}`, fieldPath: 'amount', expression: 'amount <= 100',
  }), 201);
  await ok(api(fixture, 'POST', `/rules/${shared.id}/publish`));
  const key = await ok(api(fixture, 'POST', '/api-keys', { name: `key of ${name}`, role: 'validator' }), 201);
  fixture.keyId = key.id;
  fixture.validatorKey = key.key;
  return fixture;
}

beforeAll(async () => {
  t = await startTestApp();
  tenants.first = await setUp('first', t.tenantId, t.adminKey);
  tenants.second = await setUp('second', t.otherTenantId, t.otherAdminKey);
});
afterAll(async () => {
  await t?.close();
});

/** Every request one tenant can make at the other's resources, all expected 404. */
function attacks(victim: TenantFixture): [string, string, unknown?][] {
  const rule = `/rules/${victim.rule.id}`;
  const context = `/contexts/${victim.context}`;
  return [
    ['GET', rule],
    ['PUT', rule, { name: 'hijacked', expression: 'true', version: 1 }],
    ['PUT', rule, { name: 'hijacked', expression: 'true', version: 1, context: victim.context, code: victim.code }],
    ['DELETE', rule],
    ['POST', `${rule}/publish`],
    ['GET', `${rule}/versions`],
    ['POST', `${context}/publish`],
    ['POST', `${context}/rollback`, { rulesetVersion: 1 }],
    ['POST', `${context}/recompile`],
    ['GET', `${context}/validator`],
    ['POST', '/rules/test', { context: victim.context, payload: { amount: 1 } }],
    ['POST', '/rules/test', { context: victim.context, draft: true, payload: { amount: 1 } }],
    ['DELETE', `/api-keys/${victim.keyId}`],
  ];
}

function leaks(text: string, victim: TenantFixture): string[] {
  return [victim.tenantId, victim.rule.id, victim.context, victim.code, victim.keyId, `rule of ${victim.name}`, `shared of ${victim.name}`]
    .filter((secret) => text.includes(secret));
}

describe.each([
  ['first', 'second'],
  ['second', 'first'],
] as const)('%s tenant at the %s tenant', (attackerName, victimName) => {
  it.each([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])('route %i of the other tenant is 404 and leaks nothing', async (index) => {
    const attacker = tenants[attackerName];
    const victim = tenants[victimName];
    const [method, path, body] = attacks(victim)[index];
    const response = await api(attacker, method, path, body);
    expect(response.status, `${method} ${path}: ${JSON.stringify(response.body)}`).toBe(404);
    expect(['NOT_FOUND', 'CONTEXT_NOT_FOUND']).toContain(response.body.code);
    // What the request itself named (a context in the URL or body) may be echoed; nothing else may appear.
    const sent = path + JSON.stringify(body ?? null);
    expect(leaks(JSON.stringify(response.body) ?? '', victim).filter((s) => !sent.includes(s))).toEqual([]);
  });

  it('lists show nothing of the other tenant', async () => {
    const attacker = tenants[attackerName];
    const victim = tenants[victimName];
    for (const path of ['/rules?status=all&limit=500', `/rules?context=${victim.context}&status=all`, `/rules?tag=tag-of-${victim.name}`, '/contexts', '/api-keys']) {
      const response = await api(attacker, 'GET', path);
      expect(response.status).toBe(200);
      const text = JSON.stringify(response.body);
      expect(leaks(text, victim).filter((s) => !path.includes(s)), path).toEqual([]);
    }
    expect((await api(attacker, 'GET', `/rules?context=${victim.context}`)).body.items).toEqual([]);
  });

  it('the same context name is a separate context per tenant', async () => {
    const attacker = tenants[attackerName];
    const rules = (await ok(api(attacker, 'GET', '/rules?context=shared'))).items as Json[];
    expect(rules.map((rule) => rule.name)).toEqual([`shared of ${attackerName}`]);
    const validated = await ok(api(attacker, 'POST', '/validation/validate', { context: 'shared', payload: { amount: 1000 } }, attacker.validatorKey));
    expect(validated.failures).toHaveLength(1);
    expect(validated.failures[0].ruleName).toBe(`shared of ${attackerName}`);
  });

  it("the other tenant's context does not validate, even with a key of this tenant", async () => {
    const attacker = tenants[attackerName];
    const victim = tenants[victimName];
    const response = await api(attacker, 'POST', '/validation/validate', { context: victim.context, payload: { amount: 1 } }, attacker.validatorKey);
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('CONTEXT_NOT_FOUND');
  });

  it("a key used with the other tenant's id is 401", async () => {
    const attacker = tenants[attackerName];
    const victim = tenants[victimName];
    const response = await t.request('GET', '/api/v1/rules', { key: attacker.adminKey, tenant: victim.tenantId }) as Response;
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('UNAUTHORIZED');
  });
});

describe('after every attempt', () => {
  it("each tenant's rule, context and keys are untouched", async () => {
    for (const fixture of Object.values(tenants)) {
      const rule = await ok(api(fixture, 'GET', `/rules/${fixture.rule.id}`));
      expect(rule).toMatchObject({ name: `rule of ${fixture.name}`, status: 'published', version: 1, publishedVersion: 1 });
      const summary = (await ok(api(fixture, 'GET', '/contexts'))).items.find((c: Json) => c.context === fixture.context);
      expect(summary).toMatchObject({ rulesetVersion: 1, rules: { draft: 0, published: 1, archived: 0 } });
      const keys = (await ok(api(fixture, 'GET', '/api-keys'))).items as Json[];
      expect(keys.find((key) => key.id === fixture.keyId)).toMatchObject({ revokedAt: null });
      const validated = await ok(api(fixture, 'POST', '/validation/validate', { context: fixture.context, payload: { amount: 1000 } }, fixture.validatorKey));
      expect(validated.failures.map((f: Json) => f.ruleCode)).toEqual([fixture.code]);
    }
  });
});
