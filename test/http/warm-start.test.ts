/**
 * The warm start, on real server processes: a process started on a
 * database whose contexts were published and used compiles their
 * validators before /health/ready answers, so the first request to each
 * compiles nothing (the compile counter of /metrics does not move). The
 * used contexts of every tenant come first, then the never used by newest
 * publish, up to VALIDATOR_CACHE_SIZE; WARM_START_MS=0 starts cold.
 * On PostgreSQL also: each worker of WORKERS=2, and a second instance
 * started beside a running one, which reads the uses the first recorded.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TUNING } from '../../src/tuning.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { startInstance, type Instance, type InstanceOptions } from '../support/instances.ts';
import { sampleOf } from '../support/metrics.ts';

const VALIDATE = '/api/v1/validation/validate';
const COMPILES = 'rules_validator_compiles_total{result="ok"}';
const MISSES = 'rules_validator_cache_misses_total';
const ENTRIES = 'rules_validator_cache_entries';

const keyOf = (tenantId: string) => `${tenantId}_${randomBytes(18).toString('base64url')}`;

interface Tenant {
  id: string;
  key: string;
}

function tenants(...ids: string[]): Tenant[] {
  return ids.map((id) => ({ id, key: keyOf(id) }));
}

function bootstrapEnv(all: Tenant[]): Record<string, string> {
  return { RULES_BOOTSTRAP_TENANTS: all.map((t) => `${t.id}:${t.key}`).join(',') };
}

function start(database: FreshDatabase, env: Record<string, string>, more: Partial<InstanceOptions> = {}): Promise<Instance> {
  return startInstance({ databaseUrl: database.databaseUrl ?? '', dataDir: database.dataDir, env, ...more });
}

/** The /metrics figures the tests read; a series not written yet counts as 0. */
async function figures(instance: Instance): Promise<{ compiles: number; misses: number; entries: number }> {
  const response = await instance.request('GET', '/metrics');
  expect(response.status).toBe(200);
  const text = response.body as string;
  return {
    compiles: sampleOf(text, COMPILES) ?? 0,
    misses: sampleOf(text, MISSES) ?? 0,
    entries: sampleOf(text, ENTRIES) ?? 0,
  };
}

/** Creates a rule in the context and publishes it. */
async function publish(instance: Instance, tenant: Tenant, context: string): Promise<void> {
  const auth = { key: tenant.key, tenant: tenant.id };
  const created = await instance.request('POST', '/api/v1/rules', {
    ...auth,
    body: { context, code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 10' },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const published = await instance.request('POST', `/api/v1/contexts/${context}/publish`, auth);
  expect(published.status, JSON.stringify(published.body)).toBe(200);
}

/** A validation on a connection of its own (with WORKERS > 1, node:cluster hands connections round the workers). */
function validate(instance: Instance, tenant: Tenant, context: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${instance.baseUrl}${VALIDATE}`,
      { method: 'POST', agent: false, headers: { 'x-api-key': tenant.key, 'x-tenant-id': tenant.id, 'content-type': 'application/json' } },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (data += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(data) }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ context, payload: { amount: 11 } }));
  });
}

async function validateOk(instance: Instance, tenant: Tenant, context: string): Promise<void> {
  const response = await validate(instance, tenant, context);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(response.body.isValid).toBe(false);
}

/** Sends `times` first requests to each context and checks that none compiled or missed the cache. */
async function expectServedWithoutCompile(instance: Instance, contexts: Array<[Tenant, string]>, times = 1): Promise<void> {
  const before = await figures(instance);
  for (const [tenant, context] of contexts) {
    for (let i = 0; i < times; i++) await validateOk(instance, tenant, context);
  }
  const after = await figures(instance);
  expect(after.compiles, 'validator compiles').toBe(before.compiles);
  expect(after.misses, 'validator cache misses').toBe(before.misses);
}

async function expectStoppedCleanly(instance: Instance): Promise<void> {
  expect(await instance.stop()).toEqual({ code: 0, signal: null });
}

describe('a process restarted on the same database', () => {
  const [acme, globex] = tenants('acme', 'globex');
  const env = bootstrapEnv([acme, globex]);
  let database: FreshDatabase;
  let running: Instance | undefined;

  beforeAll(async () => {
    database = await freshDatabase();
    const first = await start(database, env);
    // Published in this order; then old (acme) and other (globex) are used.
    for (const context of ['old', 'mid', 'new']) await publish(first, acme, context);
    await publish(first, globex, 'other');
    await validateOk(first, acme, 'old');
    await validateOk(first, globex, 'other');
    // Stopping writes the uses not written yet.
    await expectStoppedCleanly(first);
  });

  afterAll(async () => {
    await running?.stop();
    await database?.drop();
  });

  it('compiles the used contexts of every tenant before it is ready, then the newest published, up to VALIDATOR_CACHE_SIZE', async () => {
    running = await start(database, { ...env, VALIDATOR_CACHE_SIZE: '3' });
    expect((await figures(running)).entries).toBe(3);
    await expectServedWithoutCompile(running, [[acme, 'old'], [globex, 'other'], [acme, 'new']]);

    // The one that did not fit compiles on its first request, as without a warm start.
    const before = await figures(running);
    await validateOk(running, acme, 'mid');
    expect((await figures(running)).compiles).toBe(before.compiles + 1);
    await expectStoppedCleanly(running);
  });

  it('compiles every published context when they all fit', async () => {
    running = await start(database, env);
    expect((await figures(running)).entries).toBe(4);
    await expectServedWithoutCompile(running, [[acme, 'old'], [acme, 'mid'], [acme, 'new'], [globex, 'other']]);
    await expectStoppedCleanly(running);
  });

  it('with WARM_START_MS=0 starts cold: the first request compiles', async () => {
    running = await start(database, { ...env, WARM_START_MS: '0' });
    const before = await figures(running);
    expect(before.entries).toBe(0);
    await validateOk(running, acme, 'old');
    expect((await figures(running)).compiles).toBe(before.compiles + 1);
    await expectStoppedCleanly(running);
  });
});

describe('a published ruleset the restarted process refuses (lower limits)', () => {
  const [acme] = tenants('acme');
  const env = bootstrapEnv([acme]);
  let database: FreshDatabase;
  let running: Instance | undefined;

  afterAll(async () => {
    await running?.stop();
    await database?.drop();
  });

  it('is skipped, the next context is still compiled, and a request gets the refusal', async () => {
    database = await freshDatabase();
    const first = await start(database, env);
    const auth = { key: acme.key, tenant: acme.id };
    const long = await first.request('POST', '/api/v1/rules', {
      ...auth,
      body: { context: 'long', code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 1000000000000' },
    });
    expect(long.status, JSON.stringify(long.body)).toBe(201);
    expect((await first.request('POST', '/api/v1/contexts/long/publish', auth)).status).toBe(200);
    await publish(first, acme, 'short');
    // Used, so it is the first the next process tries.
    expect((await validate(first, acme, 'long')).status).toBe(200);
    await expectStoppedCleanly(first);

    // Its expression is longer than this process allows: its ruleset no longer compiles.
    running = await start(database, { ...env, MAX_EXPRESSION_LENGTH: '16' });
    expect((await figures(running)).entries).toBe(1);
    await expectServedWithoutCompile(running, [[acme, 'short']]);
    const refused = await validate(running, acme, 'long');
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body).toMatchObject({ code: 'INVALID_BODY', detail: 'The ruleset of context "long" does not compile.' });
    await expectStoppedCleanly(running);
    running = undefined;
  });
});

describe.skipIf(!process.env.DATABASE_URL)('on PostgreSQL (needs DATABASE_URL)', () => {
  const [acme] = tenants('acme');
  const env = bootstrapEnv([acme]);
  let database: FreshDatabase;
  const started: Instance[] = [];
  const launch = async (extra: Record<string, string> = {}, more: Partial<InstanceOptions> = {}): Promise<Instance> => {
    const instance = await start(database, { ...env, ...extra }, more);
    started.push(instance);
    return instance;
  };

  beforeAll(async () => {
    database = await freshDatabase();
  });

  afterAll(async () => {
    for (const instance of started) await instance.stop();
    await database?.drop();
  });

  it('with WORKERS=2, each worker compiles before it serves', async () => {
    const first = await launch();
    for (const context of ['w-used', 'w-other']) await publish(first, acme, context);
    await validateOk(first, acme, 'w-used');
    await expectStoppedCleanly(first);

    const workers = await launch({ WORKERS: '2' }, { readyWhen: /all workers are listening/ });
    // The gauge of the instance adds up its workers' caches.
    expect((await figures(workers)).entries).toBe(4);
    // Each request on a new connection: node:cluster deals them out to both workers.
    await expectServedWithoutCompile(workers, [[acme, 'w-used'], [acme, 'w-other']], 4);
    await expectStoppedCleanly(workers);
  });

  it('a second instance started beside a running one compiles what the first one used', async () => {
    const first = await launch();
    for (const context of ['j-used', 'j-newer', 'j-newest']) await publish(first, acme, context);
    await validateOk(first, acme, 'j-used');

    // The first instance writes its uses in the background: wait until it has.
    const admin = new pg.Client({ connectionString: database.databaseUrl });
    await admin.connect();
    try {
      const deadline = Date.now() + 3 * TUNING.contextUsageFlushMs.value;
      for (;;) {
        const { rows } = await admin.query("select 1 from context_usage where tenant_id = 'acme' and context = 'j-used'");
        if (rows.length > 0) break;
        if (Date.now() > deadline) throw new Error('the running instance never recorded its use of j-used');
        await new Promise((done) => setTimeout(done, 200));
      }
    } finally {
      await admin.end();
    }

    // Room for one validator: the used context, not the newest published.
    const second = await launch({ VALIDATOR_CACHE_SIZE: '1' });
    expect((await figures(second)).entries).toBe(1);
    await expectServedWithoutCompile(second, [[acme, 'j-used']]);
    await expectStoppedCleanly(second);
    await expectStoppedCleanly(first);
  });
});
