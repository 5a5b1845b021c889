/**
 * The database goes away while a tenant samples its traffic: validations
 * keep being answered, promptly, at rate 1; the samples of the outage are
 * dropped (never retried, never kept growing in memory) and counted in
 * /metrics; once the database is back, new samples are stored again. (A
 * write caught by a partition is in doubt: counted as dropped, it may still
 * land when the partition heals.)
 *
 * The app reaches PostgreSQL through a TCP proxy (test/support/proxy.ts);
 * the test reads the table directly, past the proxy. PGlite runs inside
 * the process and cannot go away by itself.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleOf } from '../support/metrics.ts';
import type { CutMode } from '../support/proxy.ts';
import { startService, type Service } from './support/service.ts';

const VALIDATE = '/api/v1/validation/validate';

describe.skipIf(!process.env.DATABASE_URL).each<[CutMode]>([['reset'], ['blackhole']])(
  'PostgreSQL outage while validations are sampled: %s',
  (mode) => {
    let s: Service;
    let admin: pg.Client;

    const validate = (payload: object) => s.request('POST', VALIDATE, { body: { context: 'orders', payload } });
    const storedPayloads = async (): Promise<unknown[]> => {
      const { rows } = await admin.query<{ payload: unknown }>(
        'select payload from samples where tenant_id = $1 order by recorded_at', [s.tenantId],
      );
      return rows.map((row) => row.payload);
    };
    const metric = async (series: string): Promise<number | undefined> => sampleOf((await s.request('GET', '/metrics')).text, series);

    beforeAll(async () => {
      s = await startService({ proxied: true });
      admin = new pg.Client({ connectionString: s.database.databaseUrl });
      await admin.connect();
      const created = await s.request('POST', '/api/v1/rules', {
        body: { context: 'orders', code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 10' },
      });
      expect(created.status, created.text).toBe(201);
      expect((await s.request('POST', '/api/v1/contexts/orders/publish')).status).toBe(200);
      expect((await s.request('PUT', '/api/v1/tenant/sampling', { body: { rate: 1 } })).status).toBe(200);
    });

    afterAll(async () => {
      await admin?.end();
      await s?.close();
    });

    it('answers every validation during the outage, drops and counts its samples, and stores again once it is back', async () => {
      expect((await validate({ amount: 1, when: 'before' })).status).toBe(200);
      await s.app.internals.samples.flush();
      expect(await storedPayloads()).toEqual([{ amount: 1, when: 'before' }]);

      s.proxy!.cut(mode);
      for (let i = 0; i < 20; i++) {
        const started = Date.now();
        const response = await validate({ amount: 11, when: 'during', i });
        expect(response.status, response.text).toBe(200);
        expect(response.body.isValid).toBe(false);
        // Never held up by the sample writer's failing write.
        expect(Date.now() - started).toBeLessThan(500);
      }
      await s.app.internals.samples.flush();
      expect(s.app.internals.samples.stats).toMatchObject({ written: 1, droppedWriteFailed: 20, droppedRejected: 0, queued: 0 });
      expect(await metric('rules_samples_dropped_total{reason="write_failed"}')).toBe(20);
      // An outage is not a refused row: nothing is split and retried, nothing counted rejected.
      expect(await metric('rules_samples_dropped_total{reason="rejected"}')).toBe(0);

      s.proxy!.restore();
      expect((await validate({ amount: 2, when: 'after' })).status).toBe(200);
      await s.app.internals.samples.flush();
      const stored = await storedPayloads();
      expect(stored).toEqual(expect.arrayContaining([{ amount: 1, when: 'before' }, { amount: 2, when: 'after' }]));
      // A reset refuses the write. Through a partition, the write was sent and its answer never came: it is
      // counted as dropped, but the held bytes reach the server when the partition heals, so it may land.
      if (mode === 'reset') expect(stored).toHaveLength(2);
      else expect([2, 22]).toContain(stored.length);
      expect(await metric('rules_samples_written_total')).toBe(2);
    });
  },
);
