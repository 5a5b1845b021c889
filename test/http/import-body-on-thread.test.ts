/**
 * An import's body is kept as sent and read on a management thread
 * (docs/api.md, "Rules as files"), on the real server and database: every
 * body the event loop used to refuse is refused as before, with the same
 * status and problem (the snapshots below were taken from the code that
 * parsed and checked it on the event loop): not UTF-8, not JSON,
 * prototype-poisoning keys however spelled and wherever, text the database
 * cannot store, schema violations with their paths, the wrong media type,
 * an empty body; and a good file is imported.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';

const IMPORT = '/api/v1/contexts/loans/import?dryRun=true';

const BODIES: [string, string | Uint8Array][] = [
  ['__proto__ at the top', '{"format":"rules/v1","rules":[],"__proto__":{"admin":true}}'],
  ['__proto__ spelled with an escape', '{"format":"rules/v1","rules":[{"code":"A","name":"a","\\u005f_proto__":{}}]}'],
  ['constructor.prototype in a rule', '{"format":"rules/v1","rules":[{"code":"A","name":"a","constructor":{"prototype":{"x":1}}}]}'],
  ['constructor.prototype in a test payload', '{"format":"rules/v1","rules":[],"tests":[{"name":"t","payload":{"constructor":{"prototype":{}}},"expect":{"isValid":true}}]}'],
  ['JSON cut short', '{"format":"rules/v1","rules":['],
  ['bytes that are not UTF-8', new Uint8Array([0x7b, 0x22, 0xc0, 0xaf, 0x22, 0x3a, 0x31, 0x7d])],
  ['a NUL character', '{"format":"rules/v1","rules":[{"code":"A","name":"a\\u0000b"}]}'],
  ['a rule without its name', '{"format":"rules/v1","rules":[{"code":"X"}]}'],
  ['an unknown field and a wrong format', '{"format":"rules/v2","rules":[],"extra":1}'],
  ['an array', '[]'],
  ['an empty body', ''],
];

describe('an import\'s body read on a management thread', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(BODIES)('refuses %s as before', async (_name, rawBody) => {
    const response = await t.request('POST', IMPORT, { rawBody });
    const { requestId: _requestId, ...problem } = response.body as Record<string, unknown>;
    expect({ status: response.status, type: response.headers.get('content-type'), problem }).toMatchSnapshot();
  });

  it.each(BODIES)('refuses %s on a real import as on a dry run, changing nothing', async (_name, rawBody) => {
    const answer = async (url: string) => {
      const response = await t.request('POST', url, { rawBody });
      const { requestId: _requestId, ...problem } = response.body as Record<string, unknown>;
      return { status: response.status, problem };
    };
    const real = await answer('/api/v1/contexts/loans/import');
    expect(real.status).toBeGreaterThanOrEqual(400);
    expect(real).toEqual(await answer(IMPORT));
    expect((await t.request('GET', '/api/v1/contexts/loans/export?from=draft')).status).toBe(404);
  });

  it('refuses another media type with 415 before reading the body', async () => {
    const response = await t.request('POST', IMPORT, { rawBody: '{"format":"rules/v1","rules":[]}', contentType: 'text/plain' });
    expect(response.status).toBe(415);
  });

  it('imports a good file, with a byte order mark as any JSON body may have', async () => {
    const file = { format: 'rules/v1', rules: [{ code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100' }] };
    const response = await t.request('POST', IMPORT, { rawBody: `\ufeff${JSON.stringify(file)}` });
    expect(response.status, response.text).toBe(200);
    expect(response.body).toMatchObject({ dryRun: true, create: ['LIMIT'] });
  });
});
