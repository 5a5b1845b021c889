/**
 * The audit trail (docs/api.md), on the real server: each change made
 * through the API or the CLI leaves one entry saying who, when and what
 * changed, written with the change (a refused change leaves none); a key's
 * secret and hash never appear; GET /audit filters and pages newest first;
 * no route changes an entry; a validator key gets 403 and each tenant sees
 * only its own trail.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../src/cli/run-command.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { expectProblem, ok } from '../support/expect-response.ts';

describe('the audit trail', () => {
  let t: TestApp;
  let adminKeyId: string;
  let created: { id: string; key: string };

  const trail = async (query = '') => (await ok(t.request('GET', `/api/v1/audit${query}`))).items as any[];

  beforeAll(async () => {
    t = await startTestApp();
    adminKeyId = (await ok(t.request('GET', '/api/v1/api-keys'))).items.find((key: { role: string }) => key.role === 'admin').id;
    created = await ok(t.request('POST', '/api/v1/api-keys', { body: { name: 'checkout', role: 'validator' } }), 201);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('records a key created over the API: who, when, which key, and never its secret or hash', async () => {
    const [entry] = await trail();
    expect(entry).toEqual({
      id: expect.any(String),
      at: expect.any(String),
      action: 'key.create',
      actor: { keyId: adminKeyId, keyName: expect.any(String), role: 'admin' },
      target: created.id,
      after: { id: created.id, name: 'checkout', role: 'validator', createdAt: expect.any(String), revokedAt: null },
      // The id the service's log lines about that request carry.
      requestId: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
    });
    expect(Math.abs(Date.parse(entry.at) - Date.now())).toBeLessThan(60_000);
    const text = JSON.stringify(await trail());
    expect(text).not.toContain(created.key);
    expect(text).not.toContain(createHash('sha256').update(created.key).digest('hex'));
  });

  it('records a revocation with the key before and after, and nothing for a refused one', async () => {
    await ok(t.request('DELETE', `/api/v1/api-keys/${created.id}`), 204);
    const [revoked] = await trail();
    expect(revoked).toMatchObject({ action: 'key.revoke', target: created.id, before: { revokedAt: null }, after: { revokedAt: expect.any(String) } });
    // Revoking again changes nothing, and the last admin key cannot be revoked: no entries.
    const count = (await trail()).length;
    await ok(t.request('DELETE', `/api/v1/api-keys/${created.id}`), 204);
    await expectProblem(t.request('DELETE', `/api/v1/api-keys/${adminKeyId}`), 409, 'CONFLICT');
    expect((await trail()).length).toBe(count);
  });

  it('records rate-limit changes from the API and from the CLI, with the budget before and after', async () => {
    await ok(t.request('PUT', '/api/v1/tenant/rate-limit', { body: { max: 300, windowMs: 60000 } }));
    await runCommand({ kind: 'rate-limit-set', tenantId: t.tenantId, limit: null }, t.storage, t.config);
    const [fromCli, fromApi] = await trail('?action=tenant.rate-limit');
    expect(fromApi).toMatchObject({ actor: { keyId: adminKeyId, role: 'admin' }, before: { rateLimit: null }, after: { rateLimit: { max: 300, windowMs: 60000 } } });
    expect(fromCli).toMatchObject({ actor: { cli: true }, before: { rateLimit: { max: 300, windowMs: 60000 } }, after: { rateLimit: null } });
    expect(fromCli.requestId).toBeUndefined();
  });

  it('records stored tests replaced and a recompile, under their context', async () => {
    await ok(t.request('POST', '/api/v1/rules', { body: { context: 'orders', code: 'LIMIT', name: 'Limit', expression: 'true' } }), 201);
    await ok(t.request('POST', '/api/v1/contexts/orders/publish'));
    const test = { name: 'empty', payload: {}, expect: { isValid: true } };
    await ok(t.request('PUT', '/api/v1/contexts/orders/tests', { body: { tests: [test] } }));
    await ok(t.request('POST', '/api/v1/contexts/orders/recompile'));
    const [recompiled, tests] = await trail('?context=orders');
    expect(tests).toMatchObject({ action: 'context.tests', context: 'orders', before: { tests: [] }, after: { tests: [test] } });
    expect(recompiled).toMatchObject({ action: 'context.recompile', context: 'orders', after: { rulesetVersion: 1 } });
    // A refused store leaves no entry.
    const count = (await trail('?context=orders')).length;
    await expectProblem(t.request('PUT', '/api/v1/contexts/orders/tests', { body: { tests: [test, test] } }), 400, 'INVALID_BODY');
    expect((await trail('?context=orders')).length).toBe(count);
  });

  it('records each step of a rule\'s life: create, edit, patch, publish, archive, restore, context publish and rollback', async () => {
    const ctx = '?context=lifecycle&limit=500';
    const rule = await ok(t.request('POST', '/api/v1/rules', { body: { context: 'lifecycle', code: 'MAX', name: 'Max', expression: 'amount <= 10' } }), 201);
    const edited = await ok(t.request('PUT', `/api/v1/rules/${rule.id}`, { body: { ...rule, expression: 'amount <= 20' } }));
    // A PUT that changes nothing is no change, and leaves no entry.
    await ok(t.request('PUT', `/api/v1/rules/${rule.id}`, { body: edited }));
    const patched = await ok(t.request('PATCH', `/api/v1/rules/${rule.id}`, {
      rawBody: JSON.stringify({ version: edited.version, priority: 5 }), contentType: 'application/merge-patch+json',
    }));
    await ok(t.request('POST', `/api/v1/rules/${rule.id}/publish`, { body: { note: 'first limit' } }));
    await ok(t.request('DELETE', `/api/v1/rules/${rule.id}`), 204);
    await ok(t.request('POST', `/api/v1/rules/${rule.id}/restore`));
    await ok(t.request('POST', '/api/v1/contexts/lifecycle/publish', { body: { note: 'back again' } }));
    await ok(t.request('POST', '/api/v1/contexts/lifecycle/rollback', { body: { rulesetVersion: 1, note: 'undo' } }));
    const entries = (await trail(ctx)).reverse();
    expect(entries.map((entry) => entry.action)).toEqual([
      'rule.create', 'rule.update', 'rule.patch', 'rule.publish', 'rule.archive', 'rule.restore', 'context.publish', 'context.rollback',
    ]);
    for (const entry of entries) expect(entry.actor).toEqual({ keyId: adminKeyId, keyName: expect.any(String), role: 'admin' });
    const [created, update, patch, publish, archive, restore, contextPublish, rollback] = entries;
    expect(created).toMatchObject({ target: rule.id, after: { id: rule.id, code: 'MAX', expression: 'amount <= 10', status: 'draft' } });
    expect(update).toMatchObject({ before: { expression: 'amount <= 10' }, after: { expression: 'amount <= 20', version: edited.version } });
    expect(patch).toMatchObject({ before: { priority: 0 }, after: { priority: 5, version: patched.version } });
    expect(publish).toMatchObject({ target: rule.id, note: 'first limit', before: { rulesetVersion: null }, after: { rulesetVersion: 1, changes: { added: ['MAX'] } } });
    expect(archive).toMatchObject({ before: { status: 'published' }, after: { status: 'archived', rulesetVersion: 2 } });
    expect(restore).toMatchObject({ before: { status: 'archived' }, after: { status: 'draft' } });
    expect(contextPublish).toMatchObject({ note: 'back again', before: { rulesetVersion: 2 }, after: { rulesetVersion: 3 } });
    expect(rollback).toMatchObject({ note: 'undo', before: { rulesetVersion: 3 }, after: { rulesetVersion: 4, rolledBackTo: 1 } });
  });

  it('leaves no entry for a publish that was refused', async () => {
    await ok(t.request('POST', '/api/v1/rules', { body: { context: 'refused', code: 'A', name: 'A', expression: 'amount > 1' } }), 201);
    await ok(t.request('PUT', '/api/v1/contexts/refused/tests', { body: { tests: [{ name: 'zero', payload: { amount: 0 }, expect: { isValid: true } }] } }));
    const before = (await trail('?context=refused')).length;
    await expectProblem(t.request('POST', '/api/v1/contexts/refused/publish'), 409, 'TESTS_FAILED');
    expect((await trail('?context=refused')).length).toBe(before);
  });

  it('pages newest first without overlap, and filters by time', async () => {
    const all = await trail('?limit=500');
    expect(all.map((entry) => Number(entry.id))).toEqual([...all.map((entry) => Number(entry.id))].sort((a, b) => b - a));
    const first = await ok(t.request('GET', '/api/v1/audit?limit=2'));
    expect(first.items).toEqual(all.slice(0, 2));
    const second = await ok(t.request('GET', `/api/v1/audit?limit=2&cursor=${first.nextCursor}`));
    expect(second.items).toEqual(all.slice(2, 4));
    const last = await ok(t.request('GET', `/api/v1/audit?limit=500&cursor=${first.nextCursor}`));
    expect(last.nextCursor).toBeNull();
    expect(await trail(`?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual([]);
    expect((await trail(`?since=${encodeURIComponent(all[all.length - 1].at)}`)).length).toBe(all.length);
  });

  it.each([
    ['a cursor it did not give', '?cursor=bm90LWEtY3Vyc29y', 'cursor'],
    ['a limit of 0', '?limit=0', 'limit'],
    ['an unknown action', '?action=rule.delete', 'action'],
    ['a time that is not one', '?since=yesterday', 'since'],
  ])('refuses %s with 400 naming the parameter', async (_name, query, path) => {
    const problem = await expectProblem(t.request('GET', `/api/v1/audit${query}`), 400, 'INVALID_BODY');
    expect(problem.errors.map((error: { path: string }) => error.path)).toContain(path);
  });

  it('has no route that changes or deletes an entry', async () => {
    const [entry] = await trail();
    for (const method of ['PUT', 'PATCH', 'DELETE', 'POST']) {
      expect((await t.request(method, `/api/v1/audit/${entry.id}`, { body: {} })).status, method).toBe(404);
      expect([404, 405], method).toContain((await t.request(method, '/api/v1/audit', { body: {} })).status);
    }
    expect((await trail())[0]).toEqual(entry);
  });

  it('refuses a validator key, and shows each tenant only its own trail', async () => {
    const validatorKey = (await ok(t.request('POST', '/api/v1/api-keys', { body: { name: 'v', role: 'validator' } }), 201)).key;
    await expectProblem(t.request('GET', '/api/v1/audit', { key: validatorKey }), 403, 'FORBIDDEN');
    expect((await ok(t.request('GET', '/api/v1/audit', { tenant: t.otherTenantId, key: t.otherAdminKey }))).items).toEqual([]);
  });
});
