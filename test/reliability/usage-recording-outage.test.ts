/**
 * The database goes away while the service writes which contexts were
 * used (for the next process's warm start): validations keep being
 * answered, the write fails without harm, and the uses, those of the
 * failed write and those since, are written once the database is back.
 *
 * The app reaches PostgreSQL through a TCP proxy (test/support/proxy.ts);
 * the test reads the table directly, past the proxy. PGlite runs inside
 * the process and cannot go away by itself.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CutMode } from '../support/proxy.ts';
import { startService, type Service } from './support/service.ts';

const VALIDATE = '/api/v1/validation/validate';

describe.skipIf(!process.env.DATABASE_URL).each<[CutMode]>([['reset'], ['blackhole']])(
  'PostgreSQL outage while context use is written: %s',
  (mode) => {
    let s: Service;
    let admin: pg.Client;

    const validate = (context: string) => s.request('POST', VALIDATE, { body: { context, payload: { amount: 11 } } });

    const recorded = async (): Promise<string[]> => {
      const { rows } = await admin.query<{ context: string }>(
        'select context from context_usage where tenant_id = $1 order by context',
        [s.tenantId],
      );
      return rows.map((row) => row.context);
    };

    beforeAll(async () => {
      s = await startService({ proxied: true });
      admin = new pg.Client({ connectionString: s.database.databaseUrl });
      await admin.connect();
      for (const context of ['before', 'during']) {
        const created = await s.request('POST', '/api/v1/rules', {
          body: { context, code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 10' },
        });
        expect(created.status, created.text).toBe(201);
        expect((await s.request('POST', `/api/v1/contexts/${context}/publish`)).status).toBe(200);
      }
    });

    afterAll(async () => {
      await admin?.end();
      await s?.close();
    });

    it('validations are answered while the write fails; the uses are written once the database is back', async () => {
      s.proxy!.cut(mode);
      // Published contexts are cached: validating them needs no database.
      const expectAnswered = async (context: string) => {
        const response = await validate(context);
        expect(response.status, response.text).toBe(200);
        expect(response.body.isValid).toBe(false);
      };
      await expectAnswered('before');
      const failingWrite = s.app.internals.contextUsage.flush();
      // 'before' is used only before the failed write: it must be kept for the next one.
      for (let i = 0; i < 10; i++) await expectAnswered('during');
      await failingWrite;
      expect(await recorded()).toEqual([]);

      s.proxy!.restore();
      await s.app.internals.contextUsage.flush();
      expect(await recorded()).toEqual(['before', 'during']);
    });
  },
);
