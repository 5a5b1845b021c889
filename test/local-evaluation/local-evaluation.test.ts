/**
 * Local evaluation over HTTP (docs/api.md, "Local evaluation"), on PGlite
 * and on PostgreSQL: context settings and their audit, the `client` role,
 * the signed module with its ETag, the change feed (first event, a publish,
 * rollback or import within a second, Last-Event-ID, heartbeats, bounds,
 * the end with a reason when local validation is turned off or the key
 * revoked, the end at close),
 * samples sent back, and CORS on exactly local evaluation's routes.
 */
import { createPublicKey, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { openFeed, type Feed } from '../support/event-feed.ts';
import { expectProblem, ok } from '../support/expect-response.ts';

const CONTEXT = 'orders';
const SHOP = 'https://shop.example.com';
/** docs/api.md: a change reaches every subscriber within a second. */
const DELIVERY_BOUND_MS = 1000;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('local evaluation', () => {
  let t: TestApp;
  let ruleId: string;
  let clientKey: string;
  let validatorKey: string;
  const feeds: Feed[] = [];

  const asClient = { key: '' };
  const publish = async (max: number): Promise<number> => {
    // A rollback makes a new version of the rule too: edit the latest.
    const { version } = await ok(t.request('GET', `/api/v1/rules/${ruleId}`));
    await ok(t.request('PUT', `/api/v1/rules/${ruleId}`, {
      body: { name: 'Limit', fieldPath: 'amount', expression: `amount <= ${max}`, version },
    }));
    return (await ok(t.request('POST', `/api/v1/contexts/${CONTEXT}/publish`))).rulesetVersion;
  };
  const feed = async (headers: Record<string, string> = {}, key = clientKey): Promise<Feed> => {
    const opened = await openFeed(`${t.baseUrl}/api/v1/contexts/${CONTEXT}/validator/events`, {
      'x-api-key': key, 'x-tenant-id': t.tenantId, ...headers,
    });
    feeds.push(opened);
    return opened;
  };
  const moduleOf = (headers: Record<string, string> = {}, key = clientKey) =>
    t.request('GET', `/api/v1/contexts/${CONTEXT}/validator?format=module`, { key, headers });

  beforeAll(async () => {
    t = await startTestApp({
      env: { SSE_HEARTBEAT_MS: '100', SSE_MAX_CONNECTIONS_PER_TENANT: '5', SAMPLE_MAX_PAYLOAD_BYTES: '200' },
      sampling: { flushIntervalMs: 50 },
    });
    const rule = await ok(t.request('POST', '/api/v1/rules', {
      body: { context: CONTEXT, code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100' },
    }), 201);
    ruleId = rule.id;
    await ok(t.request('POST', `/api/v1/contexts/${CONTEXT}/publish`));
    clientKey = (await ok(t.request('POST', '/api/v1/api-keys', { body: { name: 'browser', role: 'client' } }), 201)).key;
    validatorKey = (await ok(t.request('POST', '/api/v1/api-keys', { body: { name: 'backend', role: 'validator' } }), 201)).key;
    asClient.key = clientKey;
  });

  afterAll(async () => {
    for (const opened of feeds) opened.close();
    await t?.close();
  });

  describe('context settings', () => {
    it('are off by default, set by an admin, read back and audited', async () => {
      expect(await ok(t.request('GET', `/api/v1/contexts/${CONTEXT}/settings`))).toEqual({ localValidation: false });
      expect(await ok(t.request('PUT', `/api/v1/contexts/${CONTEXT}/settings`, { body: { localValidation: true } }))).toEqual({ localValidation: true });
      expect(await ok(t.request('GET', `/api/v1/contexts/${CONTEXT}/settings`))).toEqual({ localValidation: true });
      const audit = await ok(t.request('GET', '/api/v1/audit?action=context.settings'));
      expect(audit.items[0]).toMatchObject({
        action: 'context.settings', context: CONTEXT, before: { localValidation: false }, after: { localValidation: true },
      });
    });

    it('are 404 for an unknown context and 400 for a body that is not a boolean', async () => {
      await expectProblem(t.request('GET', '/api/v1/contexts/nothing-here/settings'), 404, 'CONTEXT_NOT_FOUND');
      await expectProblem(t.request('PUT', '/api/v1/contexts/nothing-here/settings', { body: { localValidation: true } }), 404, 'CONTEXT_NOT_FOUND');
      await expectProblem(t.request('PUT', `/api/v1/contexts/${CONTEXT}/settings`, { body: { localValidation: 'yes' } }), 400, 'INVALID_BODY');
    });

    it('are for admin keys only', async () => {
      await expectProblem(t.request('GET', `/api/v1/contexts/${CONTEXT}/settings`, { key: validatorKey }), 403, 'FORBIDDEN');
      await expectProblem(t.request('PUT', `/api/v1/contexts/${CONTEXT}/settings`, { key: clientKey, body: { localValidation: false } }), 403, 'FORBIDDEN');
    });
  });

  describe('the client role', () => {
    it('is refused everywhere but local evaluation, with a problem naming the role', async () => {
      for (const [method, path, body] of [
        ['GET', '/api/v1/rules', undefined],
        ['GET', '/api/v1/contexts', undefined],
        ['POST', '/api/v1/validation/validate', { context: CONTEXT, payload: { amount: 1 } }],
        ['GET', `/api/v1/contexts/${CONTEXT}/validator`, undefined],
      ] as const) {
        const problem = await expectProblem(t.request(method, path, { key: clientKey, body }), 403, 'FORBIDDEN');
        expect(problem.detail).toContain('`client`');
      }
    });

    it('may read the signing key, which any key may', async () => {
      for (const key of [clientKey, validatorKey, t.adminKey]) {
        expect((await ok(t.request('GET', '/api/v1/signing-key', { key }))).algorithm).toBe('Ed25519');
      }
    });

    it('gets the module only while local validation is on; validator keys never, admins always', async () => {
      await ok(t.request('PUT', `/api/v1/contexts/${CONTEXT}/settings`, { body: { localValidation: false } }));
      const off = await expectProblem(moduleOf(), 403, 'FORBIDDEN');
      expect(off.detail).toContain('Local validation is off for context "orders"');
      await expectProblem(t.request('POST', `/api/v1/contexts/${CONTEXT}/samples`, { key: clientKey, body: { samples: [] } }), 400, 'INVALID_BODY');
      expect((await moduleOf({}, t.adminKey)).status).toBe(200);
      await ok(t.request('PUT', `/api/v1/contexts/${CONTEXT}/settings`, { body: { localValidation: true } }));
      expect((await moduleOf()).status).toBe(200);
      await expectProblem(moduleOf({}, validatorKey), 403, 'FORBIDDEN');
      await expectProblem(t.request('GET', '/api/v1/contexts/nothing-here/validator?format=module', { key: clientKey }), 404, 'CONTEXT_NOT_FOUND');
    });
  });

  describe('the signed module', () => {
    it('comes with its ETag, version and a signature the published key verifies, and fails on a tampered body', async () => {
      const response = await moduleOf();
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/javascript/);
      expect(response.headers.get('etag')).toMatch(/^"sha256-[A-Za-z0-9_-]{43}"$/);
      const live = (await ok(t.request('GET', '/api/v1/contexts'))).items.find((c: { context: string }) => c.context === CONTEXT);
      expect(response.headers.get('x-ruleset-version')).toBe(String(live.rulesetVersion));
      const key = await ok(t.request('GET', '/api/v1/signing-key', { key: clientKey }));
      expect(response.headers.get('x-rules-signing-key-id')).toBe(key.keyId);
      expect(response.text).toMatch(/export \{\s*validate\s*\}/);
      const signature = Buffer.from(response.headers.get('x-rules-signature')!, 'base64');
      const body = Buffer.from(response.text, 'utf8');
      expect(verify(null, body, createPublicKey(key.publicKeyPem), signature)).toBe(true);
      // The raw key verifies as well (what a browser imports).
      const raw = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(key.publicKey, 'base64').toString('base64url') }, format: 'jwk' });
      expect(verify(null, body, raw, signature)).toBe(true);
      const tampered = Buffer.from(response.text.replace('amount', 'amounT'), 'utf8');
      expect(verify(null, tampered, createPublicKey(key.publicKeyPem), signature)).toBe(false);
    });

    it('answers 304 without a body to its current ETag, and the new module once the ruleset changes', async () => {
      const first = await moduleOf();
      const etag = first.headers.get('etag')!;
      const unchanged = await moduleOf({ 'if-none-match': etag });
      expect(unchanged.status).toBe(304);
      expect(unchanged.text).toBe('');
      expect(unchanged.headers.get('etag')).toBe(etag);
      const version = await publish(150);
      const changed = await moduleOf({ 'if-none-match': etag });
      expect(changed.status).toBe(200);
      expect(changed.headers.get('x-ruleset-version')).toBe(String(version));
      expect(changed.headers.get('etag')).not.toBe(etag);
    });
  });

  describe('the change feed', () => {
    it('starts with the live state, then delivers a publish within a second', async () => {
      const module = await moduleOf();
      const opened = await feed();
      expect(opened.status).toBe(200);
      expect(opened.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const first = await opened.next((m) => m.event === 'published');
      const version = Number(module.headers.get('x-ruleset-version'));
      expect(first.id).toBe(String(version));
      expect(JSON.parse(first.data!)).toEqual({ context: CONTEXT, version, etag: module.headers.get('etag') });

      const publishedAt = performance.now();
      const next = await publish(160);
      const event = await opened.next((m) => m.event === 'published', DELIVERY_BOUND_MS);
      expect(performance.now() - publishedAt).toBeLessThan(DELIVERY_BOUND_MS + 1000);
      expect(event.id).toBe(String(next));
      const now = await moduleOf();
      expect(JSON.parse(event.data!)).toEqual({ context: CONTEXT, version: next, etag: now.headers.get('etag') });
      opened.close();
    });

    it('delivers a rollback too', async () => {
      const opened = await feed();
      const first = await opened.next((m) => m.event === 'published');
      const rolledBack = await ok(t.request('POST', `/api/v1/contexts/${CONTEXT}/rollback`, { body: { rulesetVersion: 1 } }));
      const event = await opened.next((m) => m.event === 'published', DELIVERY_BOUND_MS);
      expect(Number(event.id)).toBe(rolledBack.rulesetVersion);
      expect(Number(event.id)).toBeGreaterThan(Number(first.id));
      opened.close();
    });

    it('delivers an import that publishes too', async () => {
      const opened = await feed();
      const first = await opened.next((m) => m.event === 'published');
      const document = await ok(t.request('GET', `/api/v1/contexts/${CONTEXT}/export`));
      document.rules[0].expression = 'amount <= 190';
      const imported = await ok(t.request('POST', `/api/v1/contexts/${CONTEXT}/import?publish=true`, { body: document }));
      const event = await opened.next((m) => m.event === 'published', DELIVERY_BOUND_MS);
      expect(Number(event.id)).toBe(imported.rulesetVersion);
      expect(Number(event.id)).toBeGreaterThan(Number(first.id));
      opened.close();
    });

    it('sends heartbeats', async () => {
      const opened = await feed();
      await opened.next((m) => m.comment === 'heartbeat', 2000);
      opened.close();
    });

    it('resumes after Last-Event-ID: an older id gets the live state, the live id only what comes next', async () => {
      const live = Number((await moduleOf()).headers.get('x-ruleset-version'));
      const behind = await feed({ 'last-event-id': String(live - 1) });
      expect((await behind.next((m) => m.event === 'published')).id).toBe(String(live));
      const current = await feed({ 'last-event-id': String(live) });
      const next = await publish(170);
      expect((await current.next((m) => m.event === 'published', DELIVERY_BOUND_MS)).id).toBe(String(next));
      behind.close();
      current.close();
    });

    it('refuses a stale or malformed Last-Event-ID with a problem saying so', async () => {
      const live = Number((await moduleOf()).headers.get('x-ruleset-version'));
      for (const id of [String(live + 1), 'abc', '-1']) {
        const problem = await expectProblem(
          t.request('GET', `/api/v1/contexts/${CONTEXT}/validator/events`, { key: clientKey, headers: { 'last-event-id': id } }), 400, 'INVALID_BODY',
        );
        expect(problem.detail).toContain('Last-Event-ID');
        expect(problem.errors).toEqual([{ path: 'Last-Event-ID', message: `must be a ruleset version of the context, at most ${live}` }]);
      }
    });

    it('ends with a closed event saying why when local validation is turned off, and is refused until it is on again', async () => {
      const held = [await feed(), await feed()];
      for (const opened of held) await opened.next((m) => m.event === 'published');
      await ok(t.request('PUT', `/api/v1/contexts/${CONTEXT}/settings`, { body: { localValidation: false } }));
      for (const opened of held) {
        const closed = await opened.next((m) => m.event === 'closed');
        expect(JSON.parse(closed.data!)).toMatchObject({ context: CONTEXT, reason: 'LOCAL_VALIDATION_OFF', detail: expect.stringContaining('turned off') });
        await opened.ended;
      }
      const refused = await expectProblem(t.request('GET', `/api/v1/contexts/${CONTEXT}/validator/events`, { key: clientKey }), 403, 'FORBIDDEN');
      expect(refused.detail).toContain('Local validation is off');
      await ok(t.request('PUT', `/api/v1/contexts/${CONTEXT}/settings`, { body: { localValidation: true } }));
      const again = await feed();
      expect((await again.next((m) => m.event === 'published')).event).toBe('published');
      // Turning it on again (or setting what is set) ends nothing.
      await ok(t.request('PUT', `/api/v1/contexts/${CONTEXT}/settings`, { body: { localValidation: true } }));
      await publish(175);
      expect((await again.next((m) => m.event === 'published', DELIVERY_BOUND_MS)).event).toBe('published');
      again.close();
    });

    it('ends with a closed event when its key is revoked, and only the feeds of that key', async () => {
      const created = await ok(t.request('POST', '/api/v1/api-keys', { body: { name: 'to revoke', role: 'client' } }), 201);
      const doomed = await feed({}, created.key);
      const kept = await feed();
      for (const opened of [doomed, kept]) await opened.next((m) => m.event === 'published');
      await ok(t.request('DELETE', `/api/v1/api-keys/${created.id}`), 204);
      const closed = await doomed.next((m) => m.event === 'closed');
      expect(JSON.parse(closed.data!)).toMatchObject({ context: CONTEXT, reason: 'KEY_CHANGED', detail: expect.stringContaining('revoked') });
      await doomed.ended;
      await expectProblem(t.request('GET', `/api/v1/contexts/${CONTEXT}/validator/events`, { key: created.key }), 401, 'UNAUTHORIZED');
      const next = await publish(180);
      expect((await kept.next((m) => m.event === 'published', DELIVERY_BOUND_MS)).id).toBe(String(next));
      kept.close();
    });

    it('is refused while local validation is off, for a validator key, and past the tenant\'s bound', async () => {
      await ok(t.request('PUT', `/api/v1/contexts/${CONTEXT}/settings`, { body: { localValidation: false } }));
      await expectProblem(t.request('GET', `/api/v1/contexts/${CONTEXT}/validator/events`, { key: t.adminKey }), 403, 'FORBIDDEN');
      await ok(t.request('PUT', `/api/v1/contexts/${CONTEXT}/settings`, { body: { localValidation: true } }));
      await expectProblem(t.request('GET', `/api/v1/contexts/${CONTEXT}/validator/events`, { key: validatorKey }), 403, 'FORBIDDEN');

      for (const opened of feeds) opened.close();
      await sleep(200);
      const held = [];
      for (let i = 0; i < 5; i++) {
        const opened = await feed();
        expect(opened.status).toBe(200);
        held.push(opened);
      }
      const refused = await expectProblem(t.request('GET', `/api/v1/contexts/${CONTEXT}/validator/events`, { key: clientKey }), 429, 'RATE_LIMITED');
      expect(refused.detail).toContain('SSE_MAX_CONNECTIONS_PER_TENANT');
      // A closed feed frees its place.
      held[0].close();
      await sleep(200);
      expect((await feed()).status).toBe(200);
      for (const opened of held) opened.close();
    });
  });

  describe('samples', () => {
    const sample = (payload: object, rulesetVersion: number) => ({
      payload, rulesetVersion, isValid: false, errorCodes: ['LIMIT'], at: new Date().toISOString(),
    });

    it('are dropped while the tenant samples nothing, and recorded for the impact report once it does', async () => {
      const live = Number((await moduleOf()).headers.get('x-ruleset-version'));
      const off = await ok(t.request('POST', `/api/v1/contexts/${CONTEXT}/samples`, {
        key: clientKey, body: { samples: [sample({ amount: 500 }, live)] },
      }), 202);
      expect(off).toEqual({ accepted: 0, dropped: 1, reasons: { samplingOff: 1 }, samplingRate: 0 });

      await ok(t.request('PUT', '/api/v1/tenant/sampling', { body: { rate: 1 } }));
      const answer = await ok(t.request('POST', `/api/v1/contexts/${CONTEXT}/samples`, {
        key: clientKey,
        body: { samples: [sample({ amount: 500 }, live), sample({ amount: 600 }, live), sample({ note: 'x'.repeat(300) }, live), sample({ amount: 1 }, live + 5)] },
      }), 202);
      expect(answer).toEqual({ accepted: 2, dropped: 2, reasons: { payloadTooLarge: 1, versionNotLive: 1 }, samplingRate: 1 });

      await sleep(500);
      const report = await ok(t.request('POST', `/api/v1/contexts/${CONTEXT}/impact`));
      expect(report.samples).toBe(2);
    });

    it('are bounded per batch', async () => {
      const many = Array.from({ length: 101 }, () => sample({ amount: 1 }, 1));
      await expectProblem(t.request('POST', `/api/v1/contexts/${CONTEXT}/samples`, { key: clientKey, body: { samples: many } }), 400, 'INVALID_BODY');
    });
  });

  describe('CORS', () => {
    const cross = { origin: SHOP };

    it('is set per tenant, shown with the tenant, and audited', async () => {
      expect(await ok(t.request('PUT', '/api/v1/tenant/cors', { body: { origins: [SHOP] } }))).toEqual({ origins: [SHOP] });
      expect((await ok(t.request('GET', '/api/v1/tenant'))).corsOrigins).toEqual([SHOP]);
      const audit = await ok(t.request('GET', '/api/v1/audit?action=tenant.cors'));
      expect(audit.items[0]).toMatchObject({ action: 'tenant.cors', after: { corsOrigins: [SHOP] } });
      await expectProblem(t.request('PUT', '/api/v1/tenant/cors', { body: { origins: ['shop.example.com/path'] } }), 400, 'INVALID_BODY');
    });

    it('answers allowed origins on exactly the module, events, samples and signing-key routes', async () => {
      const module = await moduleOf(cross);
      expect(module.status).toBe(200);
      expect(module.headers.get('access-control-allow-origin')).toBe(SHOP);
      expect(module.headers.get('access-control-expose-headers')).toContain('x-rules-signature');
      expect((await t.request('GET', '/api/v1/signing-key', { key: clientKey, headers: cross })).headers.get('access-control-allow-origin')).toBe(SHOP);
      const samples = await t.request('POST', `/api/v1/contexts/${CONTEXT}/samples`, {
        key: clientKey,
        headers: cross,
        body: { samples: [{ payload: { amount: 1 }, rulesetVersion: 1, isValid: true, errorCodes: [], at: new Date().toISOString() }] },
      });
      expect(samples.status).toBe(202);
      expect(samples.headers.get('access-control-allow-origin')).toBe(SHOP);
      const opened = await feed(cross);
      expect(opened.headers.get('access-control-allow-origin')).toBe(SHOP);
      opened.close();

      for (const path of ['/api/v1/rules', '/api/v1/tenant', `/api/v1/contexts/${CONTEXT}/settings`]) {
        const other = await t.request('GET', path, { headers: cross });
        expect(other.status).toBe(200);
        expect(other.headers.get('access-control-allow-origin')).toBeNull();
      }
    });

    it('refuses other origins, and answers preflights of those routes only', async () => {
      const refused = await expectProblem(moduleOf({ origin: 'https://evil.example.com' }), 403, 'FORBIDDEN');
      expect(refused.detail).toContain('https://evil.example.com');
      const preflight = { origin: SHOP, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-api-key, x-tenant-id' };
      const answered = await t.request('OPTIONS', `/api/v1/contexts/${CONTEXT}/validator/events`, { key: null, tenant: null, headers: preflight });
      expect(answered.status).toBe(204);
      expect(answered.headers.get('access-control-allow-origin')).toBe(SHOP);
      expect(answered.headers.get('access-control-allow-headers')).toContain('last-event-id');
      const elsewhere = await t.request('OPTIONS', '/api/v1/rules', { key: null, tenant: null, headers: preflight });
      expect(elsewhere.status).not.toBe(204);
      expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
    });
  });
});

describe('held feeds at close', () => {
  it('end when the app closes, so the close does not wait on them', async () => {
    const t = await startTestApp();
    try {
      await ok(t.request('POST', '/api/v1/rules', { body: { context: CONTEXT, code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100' } }), 201);
      await ok(t.request('POST', `/api/v1/contexts/${CONTEXT}/publish`));
      await ok(t.request('PUT', `/api/v1/contexts/${CONTEXT}/settings`, { body: { localValidation: true } }));
      const opened = await openFeed(`${t.baseUrl}/api/v1/contexts/${CONTEXT}/validator/events`, { 'x-api-key': t.adminKey, 'x-tenant-id': t.tenantId });
      await opened.next((m) => m.event === 'published');
      const closing = t.app.close();
      await opened.ended;
      await closing;
    } finally {
      await t.close();
    }
  });
});
