/**
 * Sampling across two real server processes on one PostgreSQL database:
 * sampling turned on with PUT /tenant/sampling on instance A applies on B
 * within one second, both record into the one samples table (each
 * sample with its own payload and verdict), and turning it off on A stops
 * B within one second too. DELETE /tenant/samples on A while B samples
 * the tenant's traffic: no sample recorded before the purge is stored
 * afterwards, not even those B still queued, and B keeps sampling after it.
 *
 * PostgreSQL only: PGlite belongs to one process. Set DATABASE_URL to run it.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TUNING } from '../../src/tuning.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { startTwoInstances, type Instance } from '../support/instances.ts';

const TENANT = 'acme';
const VALIDATE = '/api/v1/validation/validate';
/** docs/api.md: other instances follow within one second. */
const FOLLOW_BOUND_MS = 1000;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe.skipIf(!process.env.DATABASE_URL)('sampling on several instances (needs DATABASE_URL)', () => {
  let database: FreshDatabase;
  let admin: pg.Client;
  let a: Instance;
  let b: Instance;
  const key = `sync_${randomBytes(18).toString('base64url')}`;

  const call = (instance: Instance, method: string, path: string, body?: unknown) => instance.request(method, path, { body, key, tenant: TENANT });

  /** Validates on `instance` every 25 ms for `forMs`, each payload naming the instance, the phase and when it was sent after `since`. */
  const validateFor = async (instance: Instance, name: string, phase: string, since: number, forMs: number): Promise<number[]> => {
    const sent: number[] = [];
    for (let i = 0; Date.now() - since < forMs; i++) {
      const sentAfterMs = Date.now() - since;
      const response = await call(instance, 'POST', VALIDATE, { context: 'orders', payload: { amount: i % 2 === 0 ? 1 : 500, name, phase, sentAfterMs } });
      expect(response.status).toBe(200);
      sent.push(sentAfterMs);
      await sleep(25);
    }
    return sent;
  };

  /** The samples stored for one instance's validations of one phase, once both writers had time to flush. */
  const storedOf = async (name: string, phase: string) => {
    await sleep(TUNING.samplingFlushMs.value * 2 + 200);
    const { rows } = await admin.query<{ payload: { amount: number; sentAfterMs: number }; is_valid: boolean; failures: string[] }>(
      'select payload, is_valid, failures from samples where tenant_id = $1 and payload->>\'name\' = $2 and payload->>\'phase\' = $3',
      [TENANT, name, phase],
    );
    return rows;
  };

  beforeAll(async () => {
    database = await freshDatabase();
    admin = new pg.Client({ connectionString: database.databaseUrl });
    await admin.connect();
    [a, b] = await startTwoInstances(database, { RULES_BOOTSTRAP_TENANTS: `${TENANT}:${key}` });
    const rule = { context: 'orders', code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100' };
    expect((await call(a, 'POST', '/api/v1/rules', rule)).status).toBe(201);
    expect((await call(a, 'POST', '/api/v1/contexts/orders/publish')).status).toBe(200);
    // B has served the tenant (its policy cached, sampling off) before the change.
    expect((await call(b, 'POST', VALIDATE, { context: 'orders', payload: { amount: 1 } })).status).toBe(200);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await admin?.end();
    await database?.drop();
  });

  it('turns sampling on in B within one second of the PUT on A; both record into one table', async () => {
    const since = Date.now();
    expect((await call(a, 'PUT', '/api/v1/tenant/sampling', { rate: 1 })).status).toBe(200);
    const [sentToA, sentToB] = await Promise.all([
      validateFor(a, 'a', 'on', since, FOLLOW_BOUND_MS + 500), validateFor(b, 'b', 'on', since, FOLLOW_BOUND_MS + 500),
    ]);

    const fromA = await storedOf('a', 'on');
    const fromB = await storedOf('b', 'on');
    // A applied it before answering the PUT: every validation sent to A after it was recorded.
    expect(fromA.map((row) => row.payload.sentAfterMs).sort((x, y) => x - y)).toEqual(sentToA);
    // B within the bound: every validation sent to B a second after the PUT was recorded.
    const lateOnB = sentToB.filter((ms) => ms >= FOLLOW_BOUND_MS);
    expect(lateOnB.length).toBeGreaterThan(0);
    const storedOnB = new Set(fromB.map((row) => row.payload.sentAfterMs));
    expect(lateOnB.filter((ms) => !storedOnB.has(ms))).toEqual([]);
    for (const row of [...fromA, ...fromB]) {
      expect(row.is_valid).toBe(row.payload.amount <= 100);
      expect(row.failures).toEqual(row.is_valid ? [] : ['LIMIT']);
    }
  });

  it('turns it off in B within one second of the PUT on A', async () => {
    const since = Date.now();
    expect((await call(a, 'PUT', '/api/v1/tenant/sampling', { rate: 0 })).status).toBe(200);
    await validateFor(b, 'b', 'off', since, FOLLOW_BOUND_MS + 500);
    const late = (await storedOf('b', 'off')).filter((row) => row.payload.sentAfterMs >= FOLLOW_BOUND_MS);
    expect(late).toEqual([]);
  });

  it('DELETE /tenant/samples on A drops the samples B recorded before it and had not written yet; later ones are kept', async () => {
    expect((await call(a, 'PUT', '/api/v1/tenant/sampling', { rate: 1 })).status).toBe(200);
    await sleep(FOLLOW_BOUND_MS + 200);
    const sentToB: number[] = [];
    let deleteSentAt = 0;
    let deleteAnsweredAt = 0;
    const since = Date.now();
    // B validates every few ms for 2.5 s (its writer stores its queue every second); A purges 1.2 s in, mid-stream.
    const traffic = (async () => {
      for (let i = 0; Date.now() - since < 2500; i++) {
        const sentAt = Date.now();
        const response = await call(b, 'POST', VALIDATE, { context: 'orders', payload: { amount: 1, name: 'b', phase: 'purge', sentAfterMs: sentAt - since, i } });
        expect(response.status).toBe(200);
        sentToB.push(sentAt - since);
        await sleep(5);
      }
    })();
    await sleep(1200);
    deleteSentAt = Date.now() - since;
    const purge = await call(a, 'DELETE', '/api/v1/tenant/samples');
    deleteAnsweredAt = Date.now() - since;
    expect(purge.status).toBe(200);
    await traffic;

    const stored = (await storedOf('b', 'purge')).map((row) => row.payload.sentAfterMs);
    // Not vacuous: B was sampling in the second before the purge, which its writer had not all written yet.
    expect(sentToB.filter((ms) => ms < deleteSentAt && ms >= deleteSentAt - TUNING.samplingFlushMs.value).length).toBeGreaterThan(10);
    // Nothing sent to B before the DELETE was sent survives it.
    expect(stored.filter((ms) => ms < deleteSentAt)).toEqual([]);
    // Everything sent to B after A answered the DELETE is stored.
    const after = sentToB.filter((ms) => ms > deleteAnsweredAt);
    expect(after.length).toBeGreaterThan(10);
    expect(after.filter((ms) => !stored.includes(ms))).toEqual([]);
    expect((await call(a, 'PUT', '/api/v1/tenant/sampling', { rate: 0 })).status).toBe(200);
  });
});
