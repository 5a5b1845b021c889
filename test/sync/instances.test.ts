/**
 * Several real server processes on one PostgreSQL database (docs/api.md
 * and 9): a publish, an archive of a live rule, a rollback and a key
 * revocation on instance A are seen by instance B within one second; with
 * B's listener connection cut, the safety net still brings the change and
 * the listener comes back; with WORKERS=2, the primary seeds the demo and
 * prints its command once, every response after a publish returned shows
 * the new version whichever worker answers, a worker that dies is
 * replaced, and SIGTERM stops everything with exit status 0.
 *
 * PostgreSQL only: PGlite belongs to one process, so there is nothing to
 * share. Set DATABASE_URL to run these.
 */
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TUNING } from '../../src/tuning.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { startInstance, startTwoInstances, type Instance } from '../support/instances.ts';
import { sampleOf } from '../support/metrics.ts';

const TENANT = 'acme';
const VALIDATE = '/api/v1/validation/validate';
/** docs/api.md: other instances follow within one second. */
const FOLLOW_BOUND_MS = 1000;
/** The safety net's period, plus a reconnect and a reload. */
const SAFETY_NET_BOUND_MS = TUNING.reconcileIntervalMs.value + 2000;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Polls until probe returns a value; fails naming `what` once boundMs passed. */
async function within<T>(what: string, boundMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${boundMs} ms`);
    await sleep(20);
  }
}

async function ok(response: Promise<{ status: number; body: any }>, status = 200): Promise<any> {
  const resolved = await response;
  expect(resolved.status, JSON.stringify(resolved.body)).toBe(status);
  return resolved.body;
}

const limitRule = (code: string, expression: string) => ({ context: 'orders', code, name: code, fieldPath: 'amount', expression, message: `${code} failed` });

describe.skipIf(!process.env.DATABASE_URL)('several instances on one PostgreSQL database (needs DATABASE_URL; PGlite cannot be shared)', () => {
  let database: FreshDatabase;
  let admin: pg.Client;
  let a: Instance;
  let b: Instance;
  const key = `sync_${randomBytes(18).toString('base64url')}`;
  let limitId: string;

  const on = (instance: Instance) => ({
    call: (method: string, path: string, body?: unknown, withKey = key) =>
      instance.request(method, path, { body, key: withKey, tenant: TENANT }),
    validate: (context: string, amount: number, withKey = key) =>
      instance.request('POST', VALIDATE, { body: { context, payload: { amount } }, key: withKey, tenant: TENANT }),
  });

  /** Resolves once `instance` says payload {amount} is `valid` in `context`. */
  const seesValidity = (instance: Instance, context: string, amount: number, valid: boolean, boundMs = FOLLOW_BOUND_MS) =>
    within(`${context}: amount ${amount} ${valid ? 'valid' : 'invalid'} on ${instance.pid}`, boundMs, async () => {
      const response = await on(instance).validate(context, amount);
      return response.status === 200 && response.body.isValid === valid ? true : undefined;
    });

  /** Edits the LIMIT rule on A and publishes it there. */
  const republishLimit = async (expression: string): Promise<void> => {
    const rule = await ok(on(a).call('GET', `/api/v1/rules/${limitId}`));
    await ok(on(a).call('PUT', `/api/v1/rules/${limitId}`, { ...rule, expression }));
    await ok(on(a).call('POST', `/api/v1/rules/${limitId}/publish`));
  };

  /** Backend pids of the change listeners of one process (application_name `rules-listener <pid>`). */
  const listenerBackends = async (processId: number): Promise<number[]> => {
    const { rows } = await admin.query<{ pid: number }>(
      'select pid from pg_stat_activity where datname = current_database() and application_name = $1',
      [`rules-listener ${processId}`],
    );
    return rows.map((row) => row.pid);
  };

  beforeAll(async () => {
    database = await freshDatabase();
    admin = new pg.Client({ connectionString: database.databaseUrl });
    await admin.connect();
    [a, b] = await startTwoInstances(database, { RULES_BOOTSTRAP_TENANTS: `${TENANT}:${key}` });
    limitId = (await ok(on(a).call('POST', '/api/v1/rules', limitRule('LIMIT', 'amount <= 100')), 201)).id;
    await ok(on(a).call('POST', '/api/v1/contexts/orders/publish'));
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await admin?.end();
    await database?.drop();
  });

  it('sees a publish on A on B within one second', async () => {
    expect((await ok(on(b).validate('orders', 150))).isValid).toBe(false);
    await republishLimit('amount <= 200');
    await seesValidity(b, 'orders', 150, true);
  });

  it('sees an archive of a live rule on A on B within one second', async () => {
    const minimum = await ok(on(a).call('POST', '/api/v1/rules', limitRule('MINIMUM', 'amount >= 10')), 201);
    await ok(on(a).call('POST', '/api/v1/contexts/orders/publish'));
    await seesValidity(b, 'orders', 5, false);
    expect((await a.request('DELETE', `/api/v1/rules/${minimum.id}`, { key, tenant: TENANT })).status).toBe(204);
    await seesValidity(b, 'orders', 5, true);
  });

  it('sees a rollback on A on B within one second', async () => {
    await ok(on(a).call('POST', '/api/v1/contexts/orders/rollback', { rulesetVersion: 1 }));
    await seesValidity(b, 'orders', 150, false);
  });

  it('refuses a key revoked on A on B within one second', async () => {
    const created = await ok(on(a).call('POST', '/api/v1/api-keys', { name: 'short-lived', role: 'validator' }), 201);
    expect((await on(b).validate('orders', 1, created.key)).status).toBe(200);
    expect((await on(a).call('DELETE', `/api/v1/api-keys/${created.id}`)).status).toBe(204);
    await within('key refused on B', FOLLOW_BOUND_MS, async () =>
      (await on(b).validate('orders', 1, created.key)).status === 401 ? true : undefined,
    );
  });

  it('applies a rate-limit budget set on A on B within one second, and its reset', async () => {
    const limitOn = async (instance: Instance) => Number((await instance.request('POST', VALIDATE, {
      body: { context: 'orders', payload: { amount: 1 } }, key, tenant: TENANT,
    })).headers.get('ratelimit-limit'));
    const before = await limitOn(b);
    expect(await ok(on(a).call('PUT', '/api/v1/tenant/rate-limit', { max: 1234, windowMs: 60000 }))).toEqual({ max: 1234, windowMs: 60000, default: false });
    await within('budget 1234 on B', FOLLOW_BOUND_MS, async () => (await limitOn(b)) === 1234 ? true : undefined);
    await ok(on(a).call('PUT', '/api/v1/tenant/rate-limit', { default: true }));
    await within(`budget back to ${before} on B`, FOLLOW_BOUND_MS, async () => (await limitOn(b)) === before ? true : undefined);
  });

  it('catches up when its listener connection is cut, and listens again', async () => {
    const [before] = await listenerBackends(b.pid);
    expect(before).toBeDefined();
    await seesValidity(b, 'orders', 150, false);

    const { rows } = await admin.query('select pg_terminate_backend($1) as terminated', [before]);
    expect(rows[0].terminated).toBe(true);
    await republishLimit('amount <= 300');
    await seesValidity(b, 'orders', 150, true, SAFETY_NET_BOUND_MS);

    const after = await within('listener back', SAFETY_NET_BOUND_MS, async () => {
      const backends = await listenerBackends(b.pid);
      return backends.length === 1 && backends[0] !== before ? backends[0] : undefined;
    });
    expect(after).not.toBe(before);
    expect(b.output()).toContain('change listener connection lost');
    // Notifications flow again: the next publish needs no safety net.
    await republishLimit('amount <= 400');
    await seesValidity(b, 'orders', 350, true);
  });
});

describe.skipIf(!process.env.DATABASE_URL)('WORKERS=2 on a first run (needs DATABASE_URL)', () => {
  let database: FreshDatabase;
  let admin: pg.Client;
  let instance: Instance;
  // The first run seeds the demo tenant; its key is in the printed command.
  const tenant = 'demo';
  let key: string;

  /** One request on a connection of its own, so the cluster hands requests to the workers in turn. */
  const fresh = (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> =>
    new Promise((resolve, reject) => {
      const text = body === undefined ? undefined : JSON.stringify(body);
      const req = httpRequest(
        `${instance.baseUrl}${path}`,
        {
          method,
          agent: false,
          headers: {
            'x-api-key': key,
            'x-tenant-id': tenant,
            ...(text === undefined ? {} : { 'content-type': 'application/json' }),
          },
        },
        (res) => {
          let data = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => (data += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, body: data.length > 0 ? JSON.parse(data) : data }));
        },
      );
      req.on('error', reject);
      req.end(text);
    });

  const workerPids = async (): Promise<number[]> => {
    const { rows } = await admin.query<{ name: string }>(
      "select application_name as name from pg_stat_activity where datname = current_database() and application_name like 'rules-listener %'",
    );
    return rows.map((row) => Number(row.name.split(' ')[1])).sort();
  };

  /** The limits the workers apply, as seen by `count` requests on fresh connections. */
  const limitsSeen = async (count: number): Promise<Set<boolean>> => {
    const seen = new Set<boolean>();
    for (let i = 0; i < count; i++) {
      const response = await fresh('POST', VALIDATE, { context: 'cluster', payload: { amount: 150 } });
      expect(response.status).toBe(200);
      seen.add(response.body.isValid);
    }
    return seen;
  };

  beforeAll(async () => {
    database = await freshDatabase();
    admin = new pg.Client({ connectionString: database.databaseUrl });
    await admin.connect();
    instance = await startInstance({
      databaseUrl: database.databaseUrl!,
      dataDir: database.dataDir,
      env: { WORKERS: '2' },
      readyWhen: /all workers are listening/,
    });
    key = /X-Api-Key: (rk_[A-Za-z0-9_-]+)/.exec(instance.output())?.[1] ?? '';
  });
  afterAll(async () => {
    await instance?.stop();
    await admin?.end();
    await database?.drop();
  });

  it('seeds the demo and prints its command once, from the primary', async () => {
    const lines = instance.output().split('\n').filter((line) => line.includes('curl'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`http://127.0.0.1:${instance.port}/api/v1/validation/validate`);
    const response = await fresh('POST', VALIDATE, { context: 'loan-application', payload: { amount: 1000 } });
    expect(response.status).toBe(200);
  });

  it('runs two workers, each with its own listener', async () => {
    const pids = await within('two listeners', SAFETY_NET_BOUND_MS, async () => {
      const found = await workerPids();
      return found.length === 2 ? found : undefined;
    });
    expect(pids).not.toContain(instance.pid);
  });

  it('answers with the new version on every worker once a publish returned', async () => {
    const rule = await fresh('POST', '/api/v1/rules', {
      context: 'cluster', code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100',
    });
    expect(rule.status).toBe(201);
    expect((await fresh('POST', '/api/v1/contexts/cluster/publish')).status).toBe(200);
    // Both workers now hold version 1 (connections alternate between them).
    expect(await limitsSeen(10)).toEqual(new Set([false]));

    for (const [expression, valid] of [['amount <= 200', true], ['amount <= 120', false], ['amount <= 500', true]] as const) {
      const current = (await fresh('GET', `/api/v1/rules/${rule.body.id}`)).body;
      expect((await fresh('PUT', `/api/v1/rules/${rule.body.id}`, { ...current, expression })).status).toBe(200);
      expect((await fresh('POST', `/api/v1/rules/${rule.body.id}/publish`)).status).toBe(200);
      expect(await limitsSeen(10)).toEqual(new Set([valid]));
    }
  });

  it('refuses a revoked key on every worker once the revocation returned', async () => {
    const created = (await fresh('POST', '/api/v1/api-keys', { name: 'v', role: 'validator' })).body;
    const withKey = (apiKey: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${instance.baseUrl}${VALIDATE}`, {
          method: 'POST',
          agent: false,
          headers: { 'x-api-key': apiKey, 'x-tenant-id': tenant, 'content-type': 'application/json' },
        }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        });
        req.on('error', reject);
        req.end(JSON.stringify({ context: 'cluster', payload: {} }));
      });
    for (let i = 0; i < 4; i++) expect(await withKey(created.key)).toBe(200);
    expect((await fresh('DELETE', `/api/v1/api-keys/${created.id}`)).status).toBe(204);
    for (let i = 0; i < 6; i++) expect(await withKey(created.key)).toBe(401);
  });

  it("serves the instance's metrics on every worker: each worker's figures added up", async () => {
    const scrape = () =>
      new Promise<string>((resolve, reject) => {
        const req = httpRequest(`${instance.baseUrl}/metrics`, { agent: false }, (res) => {
          let data = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => (data += chunk));
          res.on('end', () => (res.statusCode === 200 ? resolve(data) : reject(new Error(`/metrics answered ${res.statusCode}: ${data}`))));
        });
        req.on('error', reject);
        req.end();
      });
    const singles = (text: string): number =>
      ['valid', 'invalid'].reduce((total, result) => total + (sampleOf(text, `rules_validations_total{operation="single",result="${result}"}`) ?? 0), 0);

    // Fresh connections alternate between the workers, and every scrape tells the same story.
    const before = await Promise.all([scrape(), scrape(), scrape(), scrape()].map(async (text) => singles(await text)));
    expect(new Set(before).size, `scrapes disagree: ${before.join(' ')}`).toBe(1);
    for (let i = 0; i < 6; i++) {
      expect((await fresh('POST', VALIDATE, { context: 'cluster', payload: { amount: 1 } })).status).toBe(200);
    }
    for (let i = 0; i < 4; i++) {
      const text = await scrape();
      expect(singles(text)).toBe(before[0] + 6);
      expect(text.match(/^# TYPE rules_validations_total counter$/gm)).toHaveLength(1);
      // Per-process figures the aggregation leaves out or takes once.
      expect(sampleOf(text, 'process_start_time_seconds')).toBeUndefined();
      expect(text.match(/^nodejs_version_info\{/gm)).toHaveLength(1);
    }
  });

  it('answers /metrics 503 with Retry-After while a worker cannot give its figures, and 200 once it can', async () => {
    const scrape = () =>
      new Promise<{ status: number; retryAfter: string | undefined; type: string | undefined; body: string }>((resolve, reject) => {
        const req = httpRequest(`${instance.baseUrl}/metrics`, { agent: false }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => (body += chunk));
          res.on('end', () => resolve({
            status: res.statusCode!, retryAfter: res.headers['retry-after'], type: res.headers['content-type'], body,
          }));
        });
        req.on('error', reject);
        req.end();
      });
    const [stopped] = await workerPids();
    // A stopped worker neither answers the primary's request for its figures nor takes connections.
    process.kill(stopped, 'SIGSTOP');
    let pending: Promise<unknown>[];
    try {
      // The cluster hands each new connection to a worker that is free; the stopped one keeps
      // whatever it was handed until it runs again, so two scrapes reach the running worker.
      pending = [scrape(), scrape(), scrape()];
      const first = (await Promise.race(pending)) as Awaited<ReturnType<typeof scrape>>;
      expect(first.status, first.body.slice(0, 300)).toBe(503);
      expect(first.retryAfter).toBe('5');
      expect(first.type).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(first.body)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', detail: "The workers' metrics could not be collected; retry shortly." });
      // The primary reports the worker that did not answer, the worker the scrape it refused (its log line may come a little later).
      expect(instance.output()).toContain("could not collect the workers' metrics");
      await within("the worker's warning", 5000, () => Promise.resolve(instance.output().includes("metrics: could not collect every worker's figures") ? true : undefined));
    } finally {
      process.kill(stopped, 'SIGCONT');
    }
    await Promise.allSettled(pending);
    const after = await within('a whole scrape again', 30_000, async () => {
      const response = await scrape();
      return response.status === 200 ? response : undefined;
    });
    expect(after.body).toMatch(/^# TYPE rules_validations_total counter$/m);
  });

  it('replaces a worker that dies', async () => {
    const [victim] = await workerPids();
    process.kill(victim, 'SIGKILL');
    const replaced = await within('a new worker', 30_000, async () => {
      const pids = await workerPids();
      return pids.length === 2 && !pids.includes(victim) ? pids : undefined;
    });
    expect(replaced).toHaveLength(2);
    expect(instance.output()).toContain('a worker died unexpectedly; restarting it');
    expect(await limitsSeen(6)).toEqual(new Set([true]));
  });

  it('exits 0 on SIGTERM once its workers are done', async () => {
    const pids = await workerPids();
    expect(await instance.stop()).toEqual({ code: 0, signal: null });
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
  });
});
