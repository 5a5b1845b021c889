/**
 * The rate limit never fails open: when Redis is slow, down or not there
 * at the start, and when the event loop stalls while a count is on its way,
 * every request is still counted (in the process, approximately across
 * instances), every answer carries its RateLimit headers, and a tenant over
 * its budget gets 429. The fallback and the recovery are logged once each,
 * /metrics says which mode is in force, and once Redis answers again (several
 * probes in a row in time, not merely a reconnect) the counting is shared
 * again, including the hits counted meanwhile.
 *
 * Redis is reached through a TCP proxy the test can stall (blackhole), cut
 * (reset) and restore, so the Redis server other test files share is never
 * paused. Every run has its own key prefix.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { TUNING } from '../../src/tuning.ts';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.ts';
import { metricSample } from '../support/metrics.ts';
import { startTcpProxy, type TcpProxy } from '../support/proxy.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const VALIDATE = '/api/v1/validation/validate';
const FALLBACK_LOG = 'rate-limit counting falls back to this process';
const RECOVERY_LOG = 'rate-limit counting is shared in Redis again';
const prefix = `test-fallback-${randomBytes(6).toString('hex')}:`;

interface Instance {
  t: TestApp;
  lines: string[];
}

interface Budget {
  status: number;
  limit: string | null;
  remaining: string | null;
  retryAfter: string | null;
}

const started: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  for (const item of started.splice(0).reverse()) await item.close();
});

afterAll(async () => {
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

async function proxyToRedis(onClientData?: (chunk: Buffer) => void): Promise<TcpProxy> {
  const target = new URL(REDIS_URL);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) }, { onClientData });
  started.push(proxy);
  return proxy;
}

async function startInstance(redisUrl: string, keyPrefix: string, max: number): Promise<Instance> {
  const lines: string[] = [];
  const t = await startTestApp({
    env: { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `${prefix}${keyPrefix}:`, RATE_LIMIT_MAX: String(max), LOG_LEVEL: 'info' },
    logStream: { write: (line) => lines.push(line) },
  });
  started.push(t);
  return { t, lines };
}

function budgetOf(response: TestResponse): Budget {
  return {
    status: response.status,
    limit: response.headers.get('ratelimit-limit'),
    remaining: response.headers.get('ratelimit-remaining'),
    retryAfter: response.headers.get('retry-after'),
  };
}

async function listRules(instance: Instance, tenant: 'acme' | 'globex' = 'acme'): Promise<Budget> {
  const { t } = instance;
  const key = tenant === 'acme' ? t.adminKey : t.otherAdminKey;
  return budgetOf(await t.request('GET', '/api/v1/rules', { key, tenant }));
}

/** A validation (answered by the fast lane once the key is known); the context need not exist to be counted. */
async function validate(instance: Instance): Promise<Budget> {
  return budgetOf(await instance.t.request('POST', VALIDATE, { body: { context: 'loan', payload: { amount: 1 } } }));
}

function refused(limit: number): Budget {
  return { status: 429, limit: String(limit), remaining: '0', retryAfter: expect.stringMatching(/^[1-9]\d*$/) };
}

function admitted(limit: number, remaining: number): Budget {
  return { status: 200, limit: String(limit), remaining: String(remaining), retryAfter: null };
}

async function storeMode(instance: Instance): Promise<{ shared: number; local: number; fallbacks: number }> {
  return {
    shared: await metricSample(instance.t, 'rules_rate_limit_store_mode{mode="shared"}'),
    local: await metricSample(instance.t, 'rules_rate_limit_store_mode{mode="local"}'),
    fallbacks: await metricSample(instance.t, 'rules_rate_limit_store_fallbacks_total'),
  };
}

interface LogLine {
  level: number;
  err?: { message: string };
  hitsAdded?: number;
}

function logged(instance: Instance, text: string): LogLine[] {
  return instance.lines.filter((line) => line.includes(text)).map((line) => JSON.parse(line) as LogLine);
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  for (let attempt = 0; attempt < 150; attempt++) {
    const value = await probe();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gave up waiting: ${what}`);
}

/** Spends the tenant's whole budget and one more, which is refused. */
async function spendBudget(instance: Instance, max: number): Promise<void> {
  for (let i = 1; i <= max; i++) expect(await listRules(instance)).toEqual(admitted(max, max - i));
  expect(await listRules(instance)).toEqual(refused(max));
}

describe('when Redis stops answering', () => {
  it('refuses a tenant over its budget with 429 and headers, counts in the process, and shares counting again once it answers', async () => {
    const proxy = await proxyToRedis();
    const instance = await startInstance(proxy.url(REDIS_URL), 'stalled', 3);
    await spendBudget(instance, 3);

    proxy.cut('blackhole');
    // Sent while Redis is silent: each waits for its count, then is counted in the process.
    const during = await Promise.all([listRules(instance), validate(instance), validate(instance), listRules(instance)]);
    for (const budget of during) expect(budget).toEqual(refused(3));
    expect(await storeMode(instance)).toEqual({ shared: 0, local: 1, fallbacks: 1 });
    // A tenant this process had not counted starts from zero here.
    expect(await listRules(instance, 'globex')).toEqual(admitted(3, 2));
    const warnings = logged(instance, FALLBACK_LOG);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, err: { message: expect.stringContaining('did not answer') } });
    expect(logged(instance, RECOVERY_LOG)).toEqual([]);

    proxy.restore();
    await until(() => storeMode(instance), (mode) => mode.shared === 1, 'counting to be shared again');
    expect(await storeMode(instance)).toEqual({ shared: 1, local: 0, fallbacks: 1 });
    expect(logged(instance, RECOVERY_LOG)).toEqual([expect.objectContaining({ level: 30 })]);
    // Shared again: acme's count in Redis refuses it; globex's hit counted in the process was added there.
    expect(await listRules(instance)).toEqual(refused(3));
    expect(await listRules(instance, 'globex')).toEqual(admitted(3, 1));
  });
});

describe('when Redis is down', () => {
  it('counts in the process from the last shared count, and adds those hits to the shared count once it is back', async () => {
    const proxy = await proxyToRedis();
    // Two instances of one deployment: a reaches Redis through the proxy, b directly.
    const a = await startInstance(proxy.url(REDIS_URL), 'down', 4);
    const b = await startInstance(REDIS_URL, 'down', 4);
    expect(await listRules(a)).toEqual(admitted(4, 3));
    expect(await listRules(b)).toEqual(admitted(4, 2));

    proxy.cut('reset');
    // a goes on from the count it last saw (1): b's hit meanwhile is not seen, the documented approximation.
    for (const remaining of [2, 1, 0]) expect(await listRules(a)).toEqual(admitted(4, remaining));
    expect(await listRules(a)).toEqual(refused(4));
    expect(await validate(a)).toEqual(refused(4));
    expect(await storeMode(a)).toEqual({ shared: 0, local: 1, fallbacks: 1 });
    expect(await storeMode(b)).toEqual({ shared: 1, local: 0, fallbacks: 0 });
    const warnings = logged(a, FALLBACK_LOG);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, err: { message: expect.any(String) } });
    // b still counts in Redis, without a's hits.
    expect(await listRules(b)).toEqual(admitted(4, 1));

    proxy.restore();
    await until(() => storeMode(a), (mode) => mode.shared === 1, 'counting to be shared again');
    expect(logged(a, RECOVERY_LOG)).toEqual([expect.objectContaining({ level: 30, hitsAdded: 5 })]);
    // The five hits a counted alone are now in the shared count: b refuses the tenant too.
    expect(await listRules(b)).toEqual(refused(4));
    expect(await listRules(a)).toEqual(refused(4));
    expect(logged(a, FALLBACK_LOG)).toHaveLength(1);
  });

  it('starts anyway and counts in the process', async () => {
    const proxy = await proxyToRedis();
    proxy.cut('reset');
    const instance = await startInstance(proxy.url(REDIS_URL), 'never', 2);
    expect(await listRules(instance)).toEqual(admitted(2, 1));
    expect(await listRules(instance)).toEqual(admitted(2, 0));
    expect(await listRules(instance)).toEqual(refused(2));
    expect(await storeMode(instance)).toEqual({ shared: 0, local: 1, fallbacks: 1 });
    expect(logged(instance, FALLBACK_LOG)).toHaveLength(1);
  });
});

describe('when the event loop stalls while a count is on its way', () => {
  it('still counts every request in Redis: a stall is not taken for a Redis failure', async () => {
    let stallNextCount = false;
    const proxy = await proxyToRedis((chunk) => {
      if (!stallNextCount || !chunk.includes('rl:t:')) return;
      stallNextCount = false;
      // The count has just gone to Redis; its answer arrives while this process is busy.
      const end = Date.now() + 1000;
      while (Date.now() < end) {
        // A synchronous task holding the event loop, as a heavy request does.
      }
    });
    const instance = await startInstance(proxy.url(REDIS_URL), 'stall', 3);
    await spendBudget(instance, 3);
    expect(await listRules(instance, 'globex')).toEqual(admitted(3, 2));

    stallNextCount = true;
    const [first, second, third, other] = await Promise.all([
      listRules(instance), validate(instance), listRules(instance), listRules(instance, 'globex'),
    ]);
    expect(stallNextCount).toBe(false);
    for (const budget of [first, second, third]) expect(budget).toEqual(refused(3));
    expect(other).toEqual(admitted(3, 1));
    expect(await storeMode(instance)).toEqual({ shared: 1, local: 0, fallbacks: 0 });
    expect(logged(instance, FALLBACK_LOG)).toEqual([]);
  });
});

describe('when Redis comes back', () => {
  it('shares counting again only after several probes in a row were answered in time; a reconnect that fails again is no second fallback', async () => {
    // Each probe is a PING; the test sees it on its way, as RESP (`*1 $4 ping`).
    let pingsSeen = 0;
    let cutAtNextPing = false;
    const proxy: TcpProxy = await proxyToRedis((chunk) => {
      if (!/\$4\r\nping\r\n/i.test(chunk.toString('latin1'))) return;
      pingsSeen++;
      if (!cutAtNextPing) return;
      cutAtNextPing = false;
      // Redis flaps: reachable just long enough for a reconnect, gone again before the probe's answer.
      proxy.cut('reset');
    });
    const instance = await startInstance(proxy.url(REDIS_URL), 'back', 5);
    expect(await listRules(instance)).toEqual(admitted(5, 4));

    proxy.cut('reset');
    expect(await listRules(instance)).toEqual(admitted(5, 3));
    expect(await storeMode(instance)).toEqual({ shared: 0, local: 1, fallbacks: 1 });

    // The connection is made again, but the first probe over it fails: counting stays in the process.
    cutAtNextPing = true;
    proxy.restore();
    await until(() => Promise.resolve(cutAtNextPing), (waiting) => !waiting, 'a probe over the new connection');
    expect(await storeMode(instance)).toEqual({ shared: 0, local: 1, fallbacks: 1 });
    expect(await listRules(instance)).toEqual(admitted(5, 2));
    expect(logged(instance, RECOVERY_LOG)).toEqual([]);

    pingsSeen = 0;
    proxy.restore();
    await until(() => storeMode(instance), (mode) => mode.shared === 1, 'counting to be shared again');
    expect(pingsSeen).toBeGreaterThanOrEqual(TUNING.redisRecoveryProbes.value);
    expect(await storeMode(instance)).toEqual({ shared: 1, local: 0, fallbacks: 1 });
    // Logged once each, however often the connection came and went; the two hits counted here were added to Redis.
    expect(logged(instance, FALLBACK_LOG)).toHaveLength(1);
    expect(logged(instance, RECOVERY_LOG)).toEqual([expect.objectContaining({ level: 30, hitsAdded: 2 })]);
    expect(await listRules(instance)).toEqual(admitted(5, 1));
  });
});
