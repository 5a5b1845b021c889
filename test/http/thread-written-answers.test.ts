/**
 * Answers a management thread writes as JSON itself (a stored-test run,
 * with or without explain, a diff, an impact report, an import's dry run,
 * a real import's warnings), on the real server
 * and database: the main thread sends those bytes as they are, and they are
 * byte for byte the answers Fastify's serializer wrote from the route's
 * schema before (the snapshots below were taken from that code), with the
 * same Content-Type.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.ts';
import { ok } from '../support/expect-response.ts';

describe('answers written on the management threads', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
    const rule = (code: string, expression: string, extra: object = {}) =>
      ok(t.request('POST', '/api/v1/rules', { body: { context: 'loans', code, name: code.toLowerCase(), fieldPath: 'amount', expression, ...extra } }), 201);
    await rule('LIMIT', 'amount <= 100', { priority: 2 });
    await rule('POSITIVE', 'amount > 0');
    await ok(t.request('POST', '/api/v1/contexts/loans/publish'));
    await ok(t.request('PUT', '/api/v1/contexts/loans/tests', {
      body: {
        tests: [
          { name: 'small', payload: { amount: 50 }, expect: { isValid: true } },
          { name: 'large', payload: { amount: 500 }, expect: { isValid: true } },
          { name: 'negative', payload: { amount: -1 }, expect: { isValid: false, failures: ['POSITIVE'] } },
        ],
      },
    }));
    const limit = (await ok(t.request('GET', '/api/v1/rules?context=loans'))) as { items: { id: string; code: string; version: number }[] };
    const first = limit.items.find((item) => item.code === 'LIMIT')!;
    await ok(t.request('PUT', `/api/v1/rules/${first.id}`, {
      body: { context: 'loans', code: 'LIMIT', name: 'limit', fieldPath: 'amount', expression: 'amount <= 1000', priority: 2, version: first.version },
    }));
    await t.storage.samples.insertMany([{
      tenantId: t.tenantId, context: 'loans', recordedAt: new Date('2026-01-02T03:04:05Z'), rulesetVersion: 1, isValid: false,
      failures: ['LIMIT'], payload: { amount: 500 },
    }]);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** The answer's bytes, once its Content-Type is Fastify's for JSON. */
  const jsonText = (response: TestResponse): string => {
    expect(response.status, response.text).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(response.text));
    return response.text;
  };

  it('answers a stored-test run as before, byte for byte', async () => {
    expect(jsonText(await t.request('POST', '/api/v1/contexts/loans/tests/run', { body: { target: 'live' } }))).toMatchSnapshot();
    expect(jsonText(await t.request('POST', '/api/v1/contexts/loans/tests/run', { body: { target: 'draft', explain: true } }))).toMatchSnapshot();
  });

  it('answers a diff as before, byte for byte', async () => {
    expect(jsonText(await t.request('GET', '/api/v1/contexts/loans/diff'))).toMatchSnapshot();
  });

  it('answers an impact report as before, byte for byte', async () => {
    // The sample's id is the one thing that differs from run to run.
    const text = jsonText(await t.request('POST', '/api/v1/contexts/loans/impact'));
    expect(text.replace(/"sampleId":"[0-9a-f-]{36}"/, '"sampleId":"<id>"')).toMatchSnapshot();
  });

  it('answers an import dry run as before, byte for byte: created, updated, unchanged, archived and warned', async () => {
    const file = {
      format: 'rules/v1',
      rules: [
        { code: 'POSITIVE', name: 'positive', fieldPath: 'amount', expression: 'amount > 0' },
        { code: 'LIMIT', name: 'limit', fieldPath: 'amount', expression: 'amount <= 5000', priority: 2 },
        { code: 'ALWAYS', name: 'always', fieldPath: 'amount', expression: '1 > 0' },
      ],
    };
    const kept = await t.request('POST', '/api/v1/contexts/loans/import?dryRun=true', { body: file });
    expect(jsonText(kept)).toMatchSnapshot();
    const pruned = await t.request('POST', '/api/v1/contexts/loans/import?dryRun=true&prune=true', { body: { format: 'rules/v1', rules: file.rules.slice(2) } });
    expect(jsonText(pruned)).toMatchSnapshot();
  });

  it('answers a real import as its dry run, byte for byte, but for dryRun: its warnings written on the thread', async () => {
    const file = {
      format: 'rules/v1',
      rules: [
        { code: 'ALWAYS', name: 'always', fieldPath: 'amount', expression: '1 > 0' },
        { code: 'NEVER', name: 'never \u00e9 "quoted"', fieldPath: 'amount', expression: '1 < 0', message: 'a <b> & \u2028 line' },
        { code: 'POSITIVE', name: 'positive', fieldPath: 'amount', expression: 'amount > 0' },
      ],
    };
    const dry = jsonText(await t.request('POST', '/api/v1/contexts/copied/import?dryRun=true', { body: file }));
    const real = jsonText(await t.request('POST', '/api/v1/contexts/copied/import', { body: file }));
    expect(dry).toContain('"warnings":[{"code":"CONSTANT"');
    expect(real).toBe(dry.replace('{"dryRun":true,', '{"dryRun":false,'));
  });
});
