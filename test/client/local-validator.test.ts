/**
 * Local evaluation with the typed client (clients/typescript), against the
 * real server: a context turned on for local validation, a key of the
 * `client` role, the service's signing key given to the validator out of
 * band. The local answer equals the server's for the same ruleset version
 * over random payloads; a publish reaches the validator through the change
 * feed (polling is set too slow to be the path), also one made while the
 * feed's connection was cut (it resumes with Last-Event-ID), and by
 * polling where the feed does not get through; a module whose bytes were
 * altered on the way, or signed by another key, is refused, and so is a
 * signed one that is older than the version running (a replay) or of
 * another context; a feed ended because local validation was turned off
 * is reported as NOT_SERVED and the version kept; an unchanged
 * module costs a 304; sampled outcomes reach the impact report.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRulesClient, LocalValidatorError, type LocalValidator, type RulesClient } from '../../clients/typescript/src/index.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { ok } from '../support/expect-response.ts';
import { startTcpProxy } from '../support/proxy.ts';

let t: TestApp;
/** An admin's client: management and remote validation. */
let admin: RulesClient;
/** The `client` role's client: modules and events only. */
let reader: RulesClient;
let clientKey: string;
/** The signing key as GET /api/v1/signing-key gives it (base64 of the raw 32 bytes). */
let publicKey: string;
const open: LocalValidator[] = [];

const RULES = [
  { code: 'TOTAL_MAX', name: 'Total limit', fieldPath: 'total', expression: '$value <= 10000', message: 'Total {{ $value }} exceeds {{ $expected }}' },
  { code: 'EMAIL', name: 'Email', fieldPath: 'customer.email', required: true, expression: 'matches($value, "^[^@ ]+@[^@ ]+$")' },
  { code: 'DISCOUNT', name: 'Discount', fieldPath: 'discount', expression: '$value <= total * 0.1' },
  { code: 'COUNTRY', name: 'Country', fieldPath: 'country', expression: '$value == "DE" || $value == "FR" || $value == "NL"' },
];

/** A local validator closed after the file. */
function local(client: RulesClient, context: string, options: Parameters<RulesClient['localValidator']>[1]): LocalValidator {
  const validator = client.localValidator(context, options);
  open.push(validator);
  return validator;
}

/** Node's fetch, noting method, path and status of every answer. */
function recordingFetch(seen: string[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    seen.push(`${init?.method ?? 'GET'} ${url.pathname}${url.search} ${response.status}`);
    return response;
  };
}

async function publish(context: string): Promise<number> {
  const { data } = await admin.api.POST('/api/v1/contexts/{context}/publish', { params: { path: { context } }, body: {} });
  return data?.rulesetVersion ?? -1;
}

let extraRules = 0;
/** Adds a rule to the context and publishes it: a new ruleset version. */
async function publishNewRule(context: string): Promise<number> {
  extraRules++;
  await admin.api.POST('/api/v1/rules', { body: { context, code: `EXTRA_${extraRules}`, name: 'Extra', fieldPath: 'extra', expression: '$value != "never"' } });
  return publish(context);
}

beforeAll(async () => {
  t = await startTestApp();
  admin = createRulesClient({ baseUrl: t.baseUrl, tenantId: t.tenantId, apiKey: t.adminKey });
  for (const context of ['orders', 'sampled']) {
    for (const rule of RULES) await admin.api.POST('/api/v1/rules', { body: { context, ...rule } });
    await publish(context);
    await ok(t.request('PUT', `/api/v1/contexts/${context}/settings`, { body: { localValidation: true } }));
  }
  const created = await ok(t.request('POST', '/api/v1/api-keys', { body: { name: 'browser', role: 'client' } }), 201);
  clientKey = created.key;
  reader = createRulesClient({ baseUrl: t.baseUrl, tenantId: t.tenantId, apiKey: clientKey });
  publicKey = (await ok(t.request('GET', '/api/v1/signing-key'))).publicKey;
});
afterAll(async () => {
  await Promise.all(open.map((validator) => validator.close()));
  await t?.close();
});

const payloads = fc.record({
  total: fc.oneof(fc.integer({ min: -10, max: 20_000 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom('100', null, true)),
  discount: fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.constant('5')),
  customer: fc.record({ email: fc.oneof(fc.emailAddress(), fc.string({ maxLength: 12 }), fc.constant(7)) }, { requiredKeys: [] }),
  country: fc.constantFrom('DE', 'FR', 'NL', 'US', '', 1),
}, { requiredKeys: [] });

describe('a local validator', () => {
  it('answers exactly as the server does for the same ruleset version, over random payloads', async () => {
    const validator = local(reader, 'orders', { publicKey });
    await validator.ready;
    expect(validator.version).toBe(1);
    await fc.assert(fc.asyncProperty(payloads, async (payload) => {
      const here = await validator.validate(payload);
      const there = await admin.validate({ context: 'orders', payload });
      const { executionTimeMs: _local, ...localAnswer } = here;
      const { executionTimeMs: _remote, ...remoteAnswer } = there;
      expect(JSON.stringify(localAnswer)).toBe(JSON.stringify(remoteAnswer));
    }), { numRuns: 150 });
  });

  it('runs a newly published version, told by the change feed', async () => {
    const validator = local(reader, 'orders', { publicKey, pollIntervalMs: 10 * 60_000 });
    await validator.ready;
    const before = validator.version ?? 0;
    const updates: number[] = [];
    validator.onUpdate(({ version }) => updates.push(version));
    await admin.api.PUT('/api/v1/rules/{id}', {
      params: { path: { id: (await admin.api.GET('/api/v1/rules', { params: { query: { context: 'orders' } } })).data?.items.find((r) => r.code === 'TOTAL_MAX')?.id ?? '' } },
      body: { ...RULES[0], expression: '$value <= 500', version: 1 } as never,
    });
    const version = await publish('orders');
    expect(version).toBe(before + 1);
    await expect.poll(() => validator.version, { timeout: 10_000, interval: 20 }).toBe(version);
    expect(updates).toEqual([version]);
    expect((await validator.validate({ total: 600, customer: { email: 'a@b.c' } })).failures.map((f) => f.ruleCode)).toEqual(['TOTAL_MAX']);
  });

  it('resumes the change feed with Last-Event-ID after its connection was cut, and runs what was published meanwhile', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(t.baseUrl).port) });
    try {
      const sent: Array<{ path: string; lastEventId: string | null }> = [];
      const noting: typeof fetch = async (input, init) => {
        const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
        sent.push({ path: url.pathname, lastEventId: new Headers(init?.headers).get('last-event-id') });
        return fetch(input, init);
      };
      const client = createRulesClient({ baseUrl: `http://127.0.0.1:${proxy.port}`, tenantId: t.tenantId, apiKey: clientKey, fetch: noting });
      const validator = local(client, 'orders', { publicKey, pollIntervalMs: 10 * 60_000, maxReconnectDelayMs: 200 });
      await validator.ready;
      const before = validator.version ?? 0;
      // The first event (the live state) names the version as its id.
      await expect.poll(() => validator.lastEventId, { timeout: 10_000 }).toBe(String(before));
      // Loads still on their way (the first event asks for one) end before the cut: only the resumed feed can bring the next version.
      await validator.refresh();
      proxy.cut('reset');
      const version = await publishNewRule('orders');
      expect(version).toBe(before + 1);
      proxy.restore();
      await expect.poll(() => validator.version, { timeout: 10_000, interval: 20 }).toBe(version);
      const reconnects = sent.filter((request) => request.path.endsWith('/events') && request.lastEventId !== null);
      expect(reconnects[0]?.lastEventId).toBe(String(before));
    } finally {
      await proxy.close();
    }
  });

  it('polls by ETag where the change feed does not get through', async () => {
    // A proxy in the way that refuses event streams.
    const noStreams: typeof fetch = async (input, init) => {
      const url = typeof input === 'string' || input instanceof URL ? String(input) : input.url;
      if (url.endsWith('/validator/events')) return new Response('streams not allowed here', { status: 502 });
      return fetch(input, init);
    };
    const client = createRulesClient({ baseUrl: t.baseUrl, tenantId: t.tenantId, apiKey: clientKey, fetch: noStreams, retry: { maxRetries: 0 } });
    const validator = local(client, 'orders', { publicKey, pollIntervalMs: 200 });
    await validator.ready;
    const before = validator.version ?? 0;
    const version = await publishNewRule('orders');
    expect(version).toBe(before + 1);
    await expect.poll(() => validator.version, { timeout: 10_000, interval: 20 }).toBe(version);
  });

  it('asks with If-None-Match and gets a 304 when nothing changed', async () => {
    const seen: string[] = [];
    const client = createRulesClient({ baseUrl: t.baseUrl, tenantId: t.tenantId, apiKey: clientKey, fetch: recordingFetch(seen) });
    const validator = local(client, 'orders', { publicKey, transport: 'poll', pollIntervalMs: 10 * 60_000 });
    await validator.ready;
    await validator.refresh();
    const modules = seen.filter((line) => line.includes('/validator?format=module'));
    expect(modules).toEqual(['GET /api/v1/contexts/orders/validator?format=module 200', 'GET /api/v1/contexts/orders/validator?format=module 304']);
  });

  it('refuses a module altered on its way, and falls back to the server when asked', async () => {
    // A proxy that changes one byte of every module it passes on.
    const tampering: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const url = typeof input === 'string' || input instanceof URL ? String(input) : input.url;
      if (!url.includes('format=module') || response.status !== 200) return response;
      const text = (await response.text()).replace('isValid', 'isValid ');
      return new Response(text, { status: 200, headers: response.headers });
    };
    // An admin key: the fallback validates over HTTP, which a `client` key may not.
    const client = createRulesClient({ baseUrl: t.baseUrl, tenantId: t.tenantId, apiKey: t.adminKey, fetch: tampering });
    const errors: Error[] = [];
    const validator = local(client, 'orders', { publicKey, fallback: 'remote', transport: 'poll', onError: (error) => errors.push(error) });
    await expect(validator.ready).rejects.toMatchObject({ name: 'LocalValidatorError', code: 'SIGNATURE_INVALID' });
    expect(validator.loaded).toBe(false);
    expect(errors[0]).toBeInstanceOf(LocalValidatorError);
    // Remote while nothing verified is loaded: the server's answer, executionTimeMs and all.
    const answer = await validator.validate({ total: 1, customer: { email: 'a@b.c' } });
    expect(answer).toMatchObject({ isValid: true, executionTimeMs: expect.any(Number) });
  });

  it('refuses an older module replayed to it, whatever the headers beside it claim, and keeps running its version', async () => {
    // What an attacker on the way (or a stale cache) kept: a signed module of an earlier version, as served.
    const old = await fetch(`${t.baseUrl}/api/v1/contexts/orders/validator?format=module`, { headers: { 'x-api-key': clientKey, 'x-tenant-id': t.tenantId } });
    const oldBody = await old.text();
    let replaying = false;
    const replay: typeof fetch = async (input, init) => {
      const url = typeof input === 'string' || input instanceof URL ? String(input) : input.url;
      if (!replaying || !url.includes('format=module')) return fetch(input, init);
      const headers = new Headers(old.headers);
      headers.set('x-ruleset-version', '999999');
      headers.set('etag', '"sha256-replayed"');
      return new Response(oldBody, { status: 200, headers });
    };
    const client = createRulesClient({ baseUrl: t.baseUrl, tenantId: t.tenantId, apiKey: clientKey, fetch: replay });
    const errors: Error[] = [];
    const version = await publishNewRule('orders');
    const validator = local(client, 'orders', { publicKey, transport: 'poll', pollIntervalMs: 10 * 60_000, onError: (error) => errors.push(error) });
    await validator.ready;
    expect(validator.version).toBe(version);
    replaying = true;
    await expect(validator.refresh()).rejects.toMatchObject({ name: 'LocalValidatorError', code: 'MODULE_REFUSED' });
    expect(errors.map((error) => (error as LocalValidatorError).code)).toEqual(['MODULE_REFUSED']);
    expect(validator.version).toBe(version);
    // Still the newer rules: the rule the old module lacks is there.
    const answer = await validator.validate({ total: 1, customer: { email: 'a@b.c' }, extra: 'never' });
    expect(answer.failures.map((failure) => failure.ruleCode)).toContain(`EXTRA_${extraRules}`);
  });

  it('refuses the module of another context served in place of its own', async () => {
    // Both contexts are signed by the same key: only the signed text says which one a module is.
    const swapping: typeof fetch = (input, init) => {
      const url = typeof input === 'string' || input instanceof URL ? String(input) : input.url;
      return fetch(url.replace('/contexts/orders/', '/contexts/sampled/'), init);
    };
    const client = createRulesClient({ baseUrl: t.baseUrl, tenantId: t.tenantId, apiKey: clientKey, fetch: swapping });
    const validator = local(client, 'orders', { publicKey, transport: 'poll' });
    await expect(validator.ready).rejects.toMatchObject({ name: 'LocalValidatorError', code: 'MODULE_REFUSED' });
    expect(validator.loaded).toBe(false);
  });

  it('hears that its context is no longer served when the admin turns local validation off, keeps its version, and stops asking', async () => {
    for (const rule of RULES) await admin.api.POST('/api/v1/rules', { body: { context: 'withdrawn', ...rule } });
    await publish('withdrawn');
    await ok(t.request('PUT', '/api/v1/contexts/withdrawn/settings', { body: { localValidation: true } }));
    const errors: Error[] = [];
    const seen: string[] = [];
    const watched = createRulesClient({ baseUrl: t.baseUrl, tenantId: t.tenantId, apiKey: clientKey, fetch: recordingFetch(seen) });
    // Fast reconnection and polling: a validator that kept asking would send many refused requests within the wait below.
    const validator = local(watched, 'withdrawn', {
      publicKey, pollIntervalMs: 50, maxReconnectDelayMs: 50, notServedRetryMs: 60_000, onError: (error) => errors.push(error),
    });
    await validator.ready;
    await expect.poll(() => validator.lastEventId, { timeout: 10_000 }).toBe('1');
    expect(validator.served).toBe(true);
    await ok(t.request('PUT', '/api/v1/contexts/withdrawn/settings', { body: { localValidation: false } }));
    await expect.poll(() => errors.map((error) => (error as LocalValidatorError).code), { timeout: 10_000 }).toContain('NOT_SERVED');
    expect(errors.find((error) => (error as LocalValidatorError).code === 'NOT_SERVED')?.message).toContain('turned off');
    expect(validator.served).toBe(false);
    const sentBefore = seen.length;
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(seen.slice(sentBefore)).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(validator.version).toBe(1);
    expect((await validator.validate({ total: 20_000, customer: { email: 'a@b.c' } })).failures.map((failure) => failure.ruleCode)).toEqual(['TOTAL_MAX']);
  });

  it('reports a context that is not served once, as NOT_SERVED, asks again at notServedRetryMs, and loads it once it is served', async () => {
    for (const rule of RULES) await admin.api.POST('/api/v1/rules', { body: { context: 'later', ...rule } });
    await publish('later');
    const errors: Error[] = [];
    const seen: string[] = [];
    const watched = createRulesClient({ baseUrl: t.baseUrl, tenantId: t.tenantId, apiKey: clientKey, fetch: recordingFetch(seen) });
    const validator = local(watched, 'later', {
      publicKey, pollIntervalMs: 50, maxReconnectDelayMs: 50, notServedRetryMs: 700, onError: (error) => errors.push(error),
    });
    const refused = await validator.ready.catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(LocalValidatorError);
    expect(refused).toMatchObject({ code: 'NOT_SERVED', cause: { status: 403, code: 'FORBIDDEN' } });
    expect((refused as Error).message).toContain('Local validation is off');
    expect(validator.served).toBe(false);
    await ok(t.request('PUT', '/api/v1/contexts/later/settings', { body: { localValidation: true } }));
    await expect.poll(() => validator.loaded, { timeout: 10_000 }).toBe(true);
    expect(validator.served).toBe(true);
    expect(validator.version).toBe(1);
    // Refused requests: the first module and feed requests, then one feed request per notServedRetryMs, no polls between.
    const refusals = seen.filter((line) => line.endsWith(' 403'));
    expect(refusals.filter((line) => line.includes('format=module'))).toHaveLength(1);
    // Reported once, whichever refused request (module or feed) came back first.
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ name: 'LocalValidatorError', code: 'NOT_SERVED' });
  });

  it('refuses a module signed by a key other than the one it was given', async () => {
    const other = await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify']) as { publicKey: Parameters<typeof crypto.subtle.exportKey>[1] };
    const otherKey = new Uint8Array(await crypto.subtle.exportKey('raw', other.publicKey));
    const validator = local(reader, 'orders', { publicKey: otherKey, transport: 'poll' });
    await expect(validator.ready).rejects.toMatchObject({ code: 'SIGNATURE_INVALID' });
    await expect(validator.validate({})).rejects.toMatchObject({ name: 'LocalValidatorError', code: 'NOT_LOADED' });
  });

  it('refuses a malformed publicKey where it is given, and reports a key that will not import as LOAD_FAILED', async () => {
    for (const malformed of ['not a key', 'AAAA', new Uint8Array(31), '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----']) {
      expect(() => reader.localValidator('orders', { publicKey: malformed, transport: 'poll' })).toThrow(/publicKey is not an Ed25519 public key/);
    }
    // The length of an Ed25519 SPKI, but not one: only WebCrypto can tell, in the background.
    const notEd25519 = `-----BEGIN PUBLIC KEY-----\n${btoa('x'.repeat(44))}\n-----END PUBLIC KEY-----`;
    const errors: Error[] = [];
    const validator = local(reader, 'orders', { publicKey: notEd25519, transport: 'poll', onError: (error) => errors.push(error) });
    await expect(validator.ready).rejects.toMatchObject({ name: 'LocalValidatorError', code: 'LOAD_FAILED' });
    expect(errors.map((error) => (error as LocalValidatorError).code)).toEqual(['LOAD_FAILED']);
  });

  it('takes now for rules that read the clock', async () => {
    await admin.api.POST('/api/v1/rules', { body: { context: 'clock', code: 'BEFORE_2001', name: 'Before 2001', expression: 'now() < 978307200000' } });
    await publish('clock');
    await ok(t.request('PUT', '/api/v1/contexts/clock/settings', { body: { localValidation: true } }));
    const validator = local(reader, 'clock', { publicKey, transport: 'poll' });
    await validator.ready;
    expect((await validator.validate({})).isValid).toBe(false);
    expect((await validator.validate({}, { now: Date.UTC(2000, 5, 1) })).isValid).toBe(true);
    expect(validator.validateSync({}, { now: new Date(Date.UTC(2000, 5, 1)) }).isValid).toBe(true);
  });

  it('counts in droppedSamples the samples the service drops while the tenant samples nothing', async () => {
    await ok(t.request('PUT', '/api/v1/tenant/sampling', { body: { rate: 0 } }));
    const validator = local(reader, 'sampled', { publicKey, transport: 'poll', sampleOutcomes: { rate: 1, batchSize: 2, flushMs: 60_000 } });
    await validator.ready;
    for (const total of [1, 2, 3]) validator.validateSync({ total, customer: { email: 'a@b.c' }, country: 'DE' });
    await validator.close();
    expect(validator.droppedSamples).toBe(3);
  });

  it('sends sampled outcomes back in batches, which the impact report then counts', async () => {
    await ok(t.request('PUT', '/api/v1/tenant/sampling', { body: { rate: 1 } }));
    const validator = local(reader, 'sampled', { publicKey, transport: 'poll', sampleOutcomes: { rate: 1, batchSize: 3, flushMs: 60_000 } });
    await validator.ready;
    for (const total of [1, 20_000, 3]) await validator.validate({ total, customer: { email: 'a@b.c' }, country: 'DE' });
    await expect.poll(async () => (await ok(t.request('POST', '/api/v1/contexts/sampled/impact'))).samples, { timeout: 10_000, interval: 200 }).toBe(3);
    expect(validator.droppedSamples).toBe(0);
  });
});
