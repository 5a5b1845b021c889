/**
 * What the audit trail keeps, on the real server (docs/api.md, "Audit
 * trail"; docs/operations.md, "Audit retention"): a before or after value
 * larger than the bound is kept as its size and sha256, so an entry about a
 * 330 KB stored test stays small; entry ids count the tenant's own entries,
 * whatever other tenants change meanwhile, and page newest first (a
 * cursor of the old shared ids is refused); entries
 * older than AUDIT_RETENTION_DAYS go at the next sweep (one runs at start),
 * younger ones stay, and ids are not reused after them.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/open-database.ts';
import { TUNING } from '../../src/tuning.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { expectProblem, ok } from '../support/expect-response.ts';

const TESTS = '/api/v1/contexts/loans/tests';
const RATE_LIMIT = '/api/v1/tenant/rate-limit';

describe('audit trail bounds', () => {
  let t: TestApp;
  const other = () => ({ tenant: t.otherTenantId, key: t.otherAdminKey });
  const trail = async (query = '', as = {}) => (await ok(t.request('GET', `/api/v1/audit${query}`, as))).items as any[];
  const setRateLimit = (max: number, as = {}) => ok(t.request('PUT', RATE_LIMIT, { ...as, body: { max, windowMs: 60_000 } }));

  beforeAll(async () => {
    t = await startTestApp({ env: { AUDIT_RETENTION_DAYS: '30' } });
    await ok(t.request('POST', '/api/v1/rules', { body: { context: 'loans', code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100' } }), 201);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('keeps a 330 KB stored test as its size and sha256, and the entry stays small', async () => {
    const tests = [{ name: 'large applicant file', payload: { amount: 50, file: 'é'.repeat(165_000) }, expect: { isValid: true } }];
    await ok(t.request('PUT', TESTS, { body: { tests } }));
    const [stored] = await trail('?action=context.tests');
    const text = JSON.stringify({ tests: (await ok(t.request('GET', TESTS))).tests });
    expect(Buffer.byteLength(text)).toBeGreaterThan(330_000);
    expect(stored.before).toEqual({ tests: [] });
    expect(stored.after).toEqual({
      elided: true,
      bytes: Buffer.byteLength(text),
      sha256: createHash('sha256').update(text).digest('hex'),
      limit: TUNING.auditMaxValueBytes.value,
    });
    // Replacing them again: the large list is elided on both sides.
    await ok(t.request('PUT', TESTS, { body: { tests: [] } }));
    const [replaced] = await trail('?action=context.tests');
    expect(replaced.before).toEqual(stored.after);
    expect(replaced.after).toEqual({ tests: [] });
    expect(JSON.stringify(await trail('?action=context.tests')).length).toBeLessThan(2_000);
  });

  it('numbers a tenant\'s entries by themselves: other tenants\' changes leave no gap', async () => {
    await setRateLimit(1100);
    const [first] = await trail();
    for (const max of [1001, 1002, 1003]) await setRateLimit(max, other());
    await setRateLimit(1101);
    const [second] = await trail();
    expect(Number(second.id)).toBe(Number(first.id) + 1);
    // The other tenant's count is its own too: 1, 2, 3.
    expect((await trail('', other())).map((entry) => entry.id)).toEqual(['3', '2', '1']);
    // Pages newest first, one entry a page, and the pages join up to the whole trail.
    const whole = (await trail()).map((entry) => entry.id);
    const paged: string[] = [];
    for (let cursor: string | null = ''; cursor !== null;) {
      const page: { items: Array<{ id: string }>; nextCursor: string | null } = await ok(t.request('GET', `/api/v1/audit?limit=1${cursor === '' ? '' : `&cursor=${cursor}`}`));
      paged.push(...page.items.map((entry) => entry.id));
      cursor = page.nextCursor;
    }
    expect(paged).toEqual(whole);
    expect(whole).toEqual([...whole].map(Number).sort((a, b) => b - a).map(String));
    // A cursor of the ids shared by all tenants (before this numbering) is refused, not read as a number of the new count.
    const shared = Buffer.from('a:2').toString('base64url');
    const problem = await expectProblem(t.request('GET', `/api/v1/audit?cursor=${shared}`), 400, 'INVALID_BODY');
    expect(problem.errors.map((error: { path: string }) => error.path)).toContain('cursor');
  });

  it('deletes entries older than AUDIT_RETENTION_DAYS and keeps younger ones; ids are not reused', async () => {
    await setRateLimit(1200);
    await setRateLimit(1201);
    await setRateLimit(1202, other());
    const [young, old] = await trail();
    const [otherOld] = await trail('', other());
    await t.restart(async () => {
      const opened = await openDatabase({ databaseUrl: t.database.databaseUrl, dataDir: t.database.dataDir });
      try {
        await sql`update audit_log set at = now() - interval '40 days' where (tenant_id = ${t.tenantId} and seq <= ${old.id}) or tenant_id = ${t.otherTenantId}`.execute(opened.db);
        await sql`update audit_log set at = now() - interval '20 days' where tenant_id = ${t.tenantId} and seq = ${young.id}`.execute(opened.db);
      } finally {
        await opened.close();
      }
    });
    // The sweep that ran at start, awaited.
    await t.app.internals.auditRetention.sweep();
    expect((await trail()).map((entry) => entry.id)).toEqual([young.id]);
    expect(await trail('', other())).toEqual([]);
    await setRateLimit(1203);
    await setRateLimit(1204, other());
    expect((await trail()).map((entry) => entry.id)).toEqual([String(Number(young.id) + 1), young.id]);
    expect((await trail('', other()))[0].id).toBe(String(Number(otherOld.id) + 1));
  });
});
