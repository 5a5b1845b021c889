/**
 * The impact report across two real server processes on one PostgreSQL
 * database: with sampling on at rate 1, validations through both
 * instances are recorded into the one samples table, and one impact report
 * (asked of either instance) replays the samples of both; the sample route
 * of each answers the payloads the other recorded.
 *
 * PostgreSQL only: PGlite belongs to one process. Set DATABASE_URL to run it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TUNING } from '../../src/tuning.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { startTwoInstances, type Instance } from '../support/instances.ts';

const TENANT = 'acme';
const VALIDATE = '/api/v1/validation/validate';
/** docs/api.md: other instances follow a sampling change within one second. */
const FOLLOW_BOUND_MS = 1000;
const PER_INSTANCE = 10;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe.skipIf(!process.env.DATABASE_URL)('impact report on several instances (needs DATABASE_URL)', () => {
  let database: FreshDatabase;
  let a: Instance;
  let b: Instance;
  const key = `sync_${randomBytes(18).toString('base64url')}`;

  const call = (instance: Instance, method: string, path: string, body?: unknown) => instance.request(method, path, { body, key, tenant: TENANT });

  beforeAll(async () => {
    database = await freshDatabase();
    [a, b] = await startTwoInstances(database, { RULES_BOOTSTRAP_TENANTS: `${TENANT}:${key}` });
    const rule = { context: 'orders', code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100' };
    const created = await call(a, 'POST', '/api/v1/rules', rule);
    expect(created.status).toBe(201);
    expect((await call(a, 'POST', '/api/v1/contexts/orders/publish')).status).toBe(200);
    expect((await call(a, 'PUT', '/api/v1/tenant/sampling', { rate: 1 })).status).toBe(200);
    await sleep(FOLLOW_BOUND_MS + 200);
    for (const [instance, name] of [[a, 'a'], [b, 'b']] as const) {
      for (let i = 0; i < PER_INSTANCE; i++) {
        const answer = await call(instance, 'POST', VALIDATE, { context: 'orders', payload: { amount: 500, name, i } });
        expect(answer.body.isValid).toBe(false);
      }
    }
    // Both writers flush, then the draft raises the limit: every sample would pass.
    await sleep(TUNING.samplingFlushMs.value * 2 + 200);
    const raised = await call(a, 'PUT', `/api/v1/rules/${created.body.id}`, { ...rule, expression: 'amount <= 1000', version: 1 });
    expect(raised.status).toBe(200);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await database?.drop();
  });

  it('replays the samples both instances recorded, in one report on either', async () => {
    for (const instance of [a, b]) {
      const report = await call(instance, 'POST', '/api/v1/contexts/orders/impact');
      expect(report.status).toBe(200);
      expect(report.body).toMatchObject({
        samples: 2 * PER_INSTANCE, unchanged: 0, becameInvalid: 0, becameValid: 2 * PER_INSTANCE, failuresChanged: 0,
        byRule: [{ ruleCode: 'LIMIT', newFailures: 0, resolvedFailures: 2 * PER_INSTANCE }],
      });
    }
    const { examples } = (await call(a, 'POST', '/api/v1/contexts/orders/impact')).body as { examples: Array<{ sampleId: string }> };
    const payloads = [];
    for (const [index, example] of examples.entries()) {
      // Read back through either instance.
      const sample = await call(index % 2 === 0 ? a : b, 'GET', `/api/v1/contexts/orders/samples/${example.sampleId}`);
      expect(sample.status).toBe(200);
      payloads.push(sample.body.payload as { name: string; i: number });
    }
    expect(payloads.map((p) => `${p.name}${p.i}`).sort()).toEqual(
      ['a', 'b'].flatMap((name) => Array.from({ length: PER_INSTANCE }, (_, i) => `${name}${i}`)).sort(),
    );
  });
});
