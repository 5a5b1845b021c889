/**
 * Tenant isolation over every route the app serves (collected from the
 * app itself, so a new route fails this suite until it is in the table).
 * For each route and each direction between two tenants:
 * - a key of one tenant with the other's X-Tenant-Id is 401, the one body;
 * - a key of one tenant, with its own id, on the other's rule ids, key ids
 *   and contexts is 404 (or an empty list, or acts on its own namespace);
 * - nothing of the other tenant appears in any response, nor in any log
 *   line (the service runs at trace level here, its most talkative), and
 *   the public routes (health, metrics, docs) show nothing of either tenant.
 * test/http/isolation.test.ts covers thirteen of these attacks in depth;
 * this suite is the complete matrix.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.ts';
import { UNLIMITED } from './support/measure.ts';
import { listRoutes, type RouteEntry } from './support/routes.ts';

interface Tenant {
  label: 'first' | 'second';
  tenantId: string;
  adminKey: string;
  validatorKey: string;
  keyId: string;
  keyName: string;
  context: string;
  code: string;
  ruleId: string;
  ruleName: string;
  sampleId: string;
}

/** What a request at the victim's resources must get, with the attacker's own tenant id. */
interface Expectation {
  statuses: number[];
  /** Body of the request (victim's names put in by `victim`). */
  body?: (victim: Tenant) => unknown;
  /** Query string appended to the URL. */
  query?: (victim: Tenant) => string;
  /** Content-Type of the body, when not JSON. */
  contentType?: string;
  /** A body sent as it is (with contentType), instead of `body` as JSON. */
  rawBody?: string;
  /** A CORS preflight: answered without a key by design (it carries no data), so never 401. */
  preflight?: boolean;
}

/** Every /api/v1 route: method and URL pattern as Fastify prints them. */
const MATRIX: Record<string, Expectation> = {
  'POST /api/v1/validation/validate': { statuses: [404], body: (v) => ({ context: v.context, payload: { amount: 1 } }) },
  'POST /api/v1/validation/validate-batch': { statuses: [404], body: (v) => ({ context: v.context, items: [{ id: 'a', payload: {} }] }) },
  'POST /api/v1/validation/validate-transaction': { statuses: [404], body: (v) => ({ transactionId: 't', contexts: [v.context], payload: {} }) },
  // The victim's code is free in the attacker's namespace (same names in two tenants: test/http/isolation.test.ts).
  'POST /api/v1/rules': { statuses: [201], body: (v) => ({ context: 'own-context', code: v.code, name: 'own', expression: 'true' }) },
  'GET /api/v1/rules': { statuses: [200], query: (v) => `?context=${v.context}&status=all&limit=500` },
  'POST /api/v1/rules/test': { statuses: [404], body: (v) => ({ context: v.context, payload: {} }) },
  // Checked against the attacker's own payload schema of that name (none): a typo of the victim's field gets no suggestion of it.
  'POST /api/v1/rules/check': { statuses: [200], body: (v) => ({ rule: { context: v.context, code: 'C', name: 'C', fieldPath: `secretfeld${v.label}`, required: true } }) },
  'GET /api/v1/rules/:id': { statuses: [404] },
  'PUT /api/v1/rules/:id': { statuses: [404], body: (v) => ({ name: 'hijack', expression: 'true', version: 1, context: v.context, code: v.code }) },
  'PATCH /api/v1/rules/:id': { statuses: [404], body: () => ({ name: 'hijack', version: 1 }), contentType: 'application/merge-patch+json' },
  'DELETE /api/v1/rules/:id': { statuses: [404] },
  'POST /api/v1/rules/:id/restore': { statuses: [404] },
  'POST /api/v1/rules/:id/publish': { statuses: [404] },
  'GET /api/v1/rules/:id/versions': { statuses: [404] },
  'GET /api/v1/contexts': { statuses: [200] },
  'POST /api/v1/contexts/:context/publish': { statuses: [404] },
  'POST /api/v1/contexts/:context/rollback': { statuses: [404], body: () => ({ rulesetVersion: 1 }) },
  'POST /api/v1/contexts/:context/recompile': { statuses: [404] },
  'GET /api/v1/contexts/:context/validator': { statuses: [404] },
  // Tests of the same context name in the attacker's own namespace: stored there, empty, nothing to run against.
  'PUT /api/v1/contexts/:context/tests': { statuses: [200], body: () => ({ tests: [] }) },
  'GET /api/v1/contexts/:context/tests': { statuses: [200] },
  'POST /api/v1/contexts/:context/tests/run': { statuses: [404] },
  'GET /api/v1/contexts/:context/versions': { statuses: [404] },
  'GET /api/v1/contexts/:context/versions/:n': { statuses: [404] },
  'GET /api/v1/contexts/:context/diff': { statuses: [404], query: () => '?from=1&to=live' },
  // PUT sets the attacker's own schema of that context name; GET and DELETE then see (only) that one.
  'PUT /api/v1/contexts/:context/payload-schema': { statuses: [200], body: () => ({ type: 'object' }) },
  'GET /api/v1/contexts/:context/payload-schema': { statuses: [200, 404] },
  'DELETE /api/v1/contexts/:context/payload-schema': { statuses: [204, 404] },
  'GET /api/v1/contexts/:context/export': { statuses: [404], query: () => '?from=draft' },
  // An import writes into the attacker's own context of that name: the victim's stays as it was.
  'POST /api/v1/contexts/:context/import': { statuses: [200], body: () => ({ format: 'rules/v1', rules: [] }), query: () => '?prune=true&publish=true' },
  // Samples are the tenant's: the victim's context and sample ids are unknown to the attacker.
  'POST /api/v1/contexts/:context/impact': { statuses: [404], body: () => ({ limit: 10 }) },
  'GET /api/v1/contexts/:context/samples/:sampleId': { statuses: [404] },
  'POST /api/v1/api-keys': { statuses: [201], body: () => ({ name: 'own key', role: 'validator' }) },
  'GET /api/v1/api-keys': { statuses: [200] },
  'DELETE /api/v1/api-keys/:id': { statuses: [404] },
  'GET /api/v1/tenant': { statuses: [200] },
  'PUT /api/v1/tenant/rate-limit': { statuses: [200], body: () => ({ default: true }) },
  // Sampling settings and samples are the caller's own: the attacker sets or deletes only its own.
  'PUT /api/v1/tenant/sampling': { statuses: [200], body: () => ({ rate: 0 }) },
  'DELETE /api/v1/tenant/samples': { statuses: [200] },
  'GET /api/v1/audit': { statuses: [200], query: (v) => `?context=${v.context}` },
  // Decision tables as CSV: the victim's rule ids are unknown to the attacker (no body: the id is looked up first).
  'GET /api/v1/rules/:id/table.csv': { statuses: [404] },
  'PUT /api/v1/rules/:id/table.csv': { statuses: [404], rawBody: 'a,b\r\n1,2\r\n', contentType: 'text/csv' },
  // Local evaluation, on the attacker's own context of that name (made by the routes above, or none): its settings,
  // left off (a feed of its own would be held open), so its feed and samples are refused.
  'GET /api/v1/contexts/:context/settings': { statuses: [200, 404] },
  'PUT /api/v1/contexts/:context/settings': { statuses: [200, 404], body: () => ({ localValidation: false }) },
  'GET /api/v1/contexts/:context/validator/events': { statuses: [403, 404] },
  'POST /api/v1/contexts/:context/samples': { statuses: [403, 404], body: () => ({
    samples: [{ payload: { amount: 1 }, rulesetVersion: 1, isValid: true, errorCodes: [], at: new Date().toISOString() }],
  }) },
  // The service's module-signing public key: the same for every tenant, nothing of either.
  'GET /api/v1/signing-key': { statuses: [200] },
  'PUT /api/v1/tenant/cors': { statuses: [200], body: () => ({ origins: [] }) },
  'OPTIONS /api/v1/contexts/:context/validator': { statuses: [204], preflight: true },
  'OPTIONS /api/v1/contexts/:context/validator/events': { statuses: [204], preflight: true },
  'OPTIONS /api/v1/contexts/:context/samples': { statuses: [204], preflight: true },
  'OPTIONS /api/v1/signing-key': { statuses: [204], preflight: true },
};

let t: TestApp;
const tenants = {} as Record<'first' | 'second', Tenant>;
let apiRoutes: RouteEntry[];
let publicRoutes: RouteEntry[];
/** Every log line the service wrote, at trace level. */
const logLines: string[] = [];

async function setUp(label: 'first' | 'second', tenantId: string, adminKey: string): Promise<Tenant> {
  const as = { key: adminKey, tenant: tenantId };
  const tenant = { label, tenantId, adminKey } as Tenant;
  tenant.context = `iso-ctx-${label}`;
  tenant.code = `ISO_CODE_${label.toUpperCase()}`;
  tenant.ruleName = `iso rule of ${label}`;
  const rule = await t.request('POST', '/api/v1/rules', {
    ...as,
    body: { context: tenant.context, code: tenant.code, name: tenant.ruleName, fieldPath: 'amount', expression: 'amount <= 100', message: `secret message of ${label}` },
  });
  expect(rule.status, rule.text).toBe(201);
  tenant.ruleId = rule.body.id;
  expect((await t.request('POST', `/api/v1/contexts/${tenant.context}/publish`, as)).status).toBe(200);
  const schema = { type: 'object', properties: { [`secretfield${label}`]: { type: 'string' } } };
  expect((await t.request('PUT', `/api/v1/contexts/${tenant.context}/payload-schema`, { ...as, body: schema })).status).toBe(200);
  tenant.keyName = `iso key of ${label}`;
  const key = await t.request('POST', '/api/v1/api-keys', { ...as, body: { name: tenant.keyName, role: 'validator' } });
  tenant.keyId = key.body.id;
  tenant.validatorKey = key.body.key;
  // A recorded sample (through the store the sampling writer uses) whose payload holds a secret.
  await t.storage.samples.insertMany([{
    tenantId, context: tenant.context, recordedAt: new Date(), rulesetVersion: 1, isValid: false, failures: [tenant.code],
    payload: { amount: 1000, [`secretpayload${label}`]: 'x' },
  }]);
  [{ id: tenant.sampleId }] = await t.storage.samples.newest(tenantId, tenant.context, 1);
  return tenant;
}

/** The URL of a route aimed at the victim's resources. */
function urlFor(route: RouteEntry, victim: Tenant, expectation?: Expectation): string {
  const id = route.url.startsWith('/api/v1/api-keys') ? victim.keyId : victim.ruleId;
  return route.url.replace(':id', id).replace(':context', victim.context).replace(':n', '1').replace(':sampleId', victim.sampleId) + (expectation?.query?.(victim) ?? '');
}

/** Strings of the victim that must never appear unless the request itself carried them. */
function secretsOf(victim: Tenant): string[] {
  return [
    victim.tenantId, victim.ruleId, victim.code, victim.ruleName, victim.keyId, victim.keyName, victim.validatorKey, victim.adminKey,
    `secret message of ${victim.label}`, victim.context, `secretfield${victim.label}`, victim.sampleId, `secretpayload${victim.label}`,
  ];
}

function leaked(response: TestResponse, victim: Tenant, sent: string): string[] {
  return secretsOf(victim).filter((secret) => response.text.includes(secret) && !sent.includes(secret));
}

beforeAll(async () => {
  t = await startTestApp({ env: { ...UNLIMITED, LOG_LEVEL: 'trace' }, logStream: { write: (line) => void logLines.push(line) } });
  tenants.first = await setUp('first', t.tenantId, t.adminKey);
  tenants.second = await setUp('second', t.otherTenantId, t.otherAdminKey);
  const routes = listRoutes(t.app);
  apiRoutes = routes.filter((route) => route.url.startsWith('/api/v1'));
  publicRoutes = routes.filter((route) => !route.url.startsWith('/api/v1') && route.method === 'GET' && !route.url.includes('*') && !route.url.includes(':'));
});
afterAll(async () => {
  await t?.close();
});

describe('the route table', () => {
  it('covers every /api/v1 route the app serves', () => {
    expect(apiRoutes.length).toBeGreaterThanOrEqual(Object.keys(MATRIX).length);
    const missing = apiRoutes
      .filter((route) => route.method !== 'HEAD')
      .map((route) => `${route.method} ${route.url}`)
      .filter((key) => MATRIX[key] === undefined);
    expect(missing).toEqual([]);
  });
});

describe.each([
  ['first', 'second'],
  ['second', 'first'],
] as const)('%s tenant against the %s', (attackerLabel, victimLabel) => {
  it("every route with the other tenant's X-Tenant-Id is 401 with the one body", async () => {
    const attacker = tenants[attackerLabel];
    const victim = tenants[victimLabel];
    const bodies = new Set<string>();
    for (const route of apiRoutes) {
      for (const key of [attacker.adminKey, attacker.validatorKey]) {
        const expectation = MATRIX[`${route.method === 'HEAD' ? 'GET' : route.method} ${route.url}`];
        const body = expectation?.body?.(victim);
        const response = await t.request(route.method, urlFor(route, victim, expectation), {
          key, tenant: victim.tenantId, body, rawBody: expectation?.rawBody, contentType: expectation?.contentType,
        });
        if (expectation?.preflight === true) {
          // A preflight is answered before any key is read, and says nothing of anyone.
          expect(response.status, `${route.method} ${route.url}`).toBe(204);
          expect(leaked(response, victim, urlFor(route, victim, expectation))).toEqual([]);
          continue;
        }
        expect(response.status, `${route.method} ${route.url}: ${response.text}`).toBe(401);
        if (route.method !== 'HEAD') {
          const { requestId: _ignored, ...rest } = response.body;
          bodies.add(JSON.stringify(rest));
          expect(leaked(response, victim, JSON.stringify(body ?? null) + urlFor(route, victim, expectation))).toEqual([]);
        }
      }
    }
    expect(bodies.size).toBe(1);
  });

  it("every route aimed at the other tenant's ids and contexts is 404 or stays in its own namespace, and leaks nothing", async () => {
    const attacker = tenants[attackerLabel];
    const victim = tenants[victimLabel];
    for (const route of apiRoutes) {
      const expectation = MATRIX[`${route.method === 'HEAD' ? 'GET' : route.method} ${route.url}`];
      const body = expectation.body?.(victim);
      const url = urlFor(route, victim, expectation);
      const linesBefore = logLines.length;
      const response = await t.request(route.method, url, {
        key: attacker.adminKey, tenant: attacker.tenantId, body, rawBody: expectation.rawBody, contentType: expectation.contentType,
      });
      expect(expectation.statuses, `${route.method} ${url}: ${response.status} ${response.text.slice(0, 300)}`).toContain(response.status);
      if (response.status === 404 && route.method !== 'HEAD') {
        expect(['NOT_FOUND', 'CONTEXT_NOT_FOUND']).toContain(response.body.code);
      }
      // What the request named (a context in the URL or body) may be echoed back; nothing else of the victim.
      expect(leaked(response, victim, JSON.stringify(body ?? null) + url), `${route.method} ${url}`).toEqual([]);
      // The log lines of the attacker's request carry nothing of the victim it did not send itself.
      const sent = JSON.stringify(body ?? null) + url;
      const logged = logLines.slice(linesBefore).join('');
      expect(logged, 'the request itself is in the captured log').toContain(url.split('?')[0]);
      expect(secretsOf(victim).filter((secret) => logged.includes(secret) && !sent.includes(secret)), `log of ${route.method} ${url}`).toEqual([]);
    }
    expect(logLines.length, 'the service logs at trace level in this suite').toBeGreaterThan(0);
  });

  it("the other tenant's validator key validates only its own contexts", async () => {
    const attacker = tenants[attackerLabel];
    const victim = tenants[victimLabel];
    const response = await t.request('POST', '/api/v1/validation/validate', {
      key: attacker.validatorKey,
      tenant: attacker.tenantId,
      body: { context: victim.context, payload: { amount: 1000 } },
    });
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('CONTEXT_NOT_FOUND');
  });
});

describe('public routes', () => {
  it('show nothing of any tenant', async () => {
    // Some traffic first, so counters and caches hold both tenants' contexts.
    for (const tenant of Object.values(tenants)) {
      await t.request('POST', '/api/v1/validation/validate', { key: tenant.validatorKey, tenant: tenant.tenantId, body: { context: tenant.context, payload: { amount: 1 } } });
    }
    expect(publicRoutes.map((route) => route.url)).toEqual(expect.arrayContaining(['/health/live', '/health/ready']));
    for (const route of publicRoutes) {
      const response = await t.request('GET', route.url, { key: null, tenant: null });
      expect(response.status, route.url).toBeLessThan(500);
      for (const tenant of Object.values(tenants)) {
        expect(secretsOf(tenant).filter((secret) => response.text.includes(secret)), route.url).toEqual([]);
      }
    }
  });
});

describe('after every attempt', () => {
  it("each tenant's rule, context and key are untouched", async () => {
    for (const tenant of Object.values(tenants)) {
      const as = { key: tenant.adminKey, tenant: tenant.tenantId };
      const rule = await t.request('GET', `/api/v1/rules/${tenant.ruleId}`, as);
      expect(rule.body).toMatchObject({ name: tenant.ruleName, status: 'published', version: 1, publishedVersion: 1 });
      const contexts = await t.request('GET', '/api/v1/contexts', as);
      expect(contexts.body.items.find((c: { context: string }) => c.context === tenant.context)).toMatchObject({ rulesetVersion: 1 });
      const schema = await t.request('GET', `/api/v1/contexts/${tenant.context}/payload-schema`, as);
      expect(schema.body).toEqual({ type: 'object', properties: { [`secretfield${tenant.label}`]: { type: 'string' } } });
      const keys = await t.request('GET', '/api/v1/api-keys', as);
      expect(keys.body.items.find((k: { id: string }) => k.id === tenant.keyId)).toMatchObject({ revokedAt: null });
      const validated = await t.request('POST', '/api/v1/validation/validate', { key: tenant.validatorKey, tenant: tenant.tenantId, body: { context: tenant.context, payload: { amount: 1000 } } });
      expect(validated.body.failures.map((f: { ruleCode: string }) => f.ruleCode)).toEqual([tenant.code]);
      // The rule each attacker made with the other's code lives in its own namespace.
      const own = await t.request('GET', '/api/v1/rules?status=all&limit=500', as);
      const other = Object.values(tenants).find((candidate) => candidate !== tenant)!;
      expect(own.body.items.map((r: { context: string; code: string }) => `${r.context}/${r.code}`).sort()).toEqual([`${tenant.context}/${tenant.code}`, `own-context/${other.code}`].sort());
    }
  });
});
