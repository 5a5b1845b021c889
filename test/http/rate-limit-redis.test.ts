/**
 * Shared rate-limit counters (REDIS_URL): two instances spend one tenant's
 * budget and one client address's budget together; when Redis goes away
 * requests pass (fail open) with a logged warning, and counting resumes by
 * itself when it returns. Redis is reached through a small TCP relay the
 * test can cut and restore. Every run uses its own key prefix, so runs
 * never share counters.
 */
import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { bootstrapTenants } from '../../src/startup/bootstrap.ts';
import { createStorage } from '../../src/storage/create-storage.ts';
import { freshDatabase } from '../support/database.ts';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const BAD_KEY = 'rk_not_a_key_of_anyone_0123456789abcdef';

function remaining(response: TestResponse): string | null {
  return response.headers.get('ratelimit-remaining');
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  for (let attempt = 0; attempt < 150; attempt++) {
    const value = await probe();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gave up waiting: ${what}`);
}

/** A TCP relay to Redis that the test can cut (closing every connection) and restore on the same port. */
class RedisRelay {
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  port = 0;

  async start(): Promise<void> {
    const target = new URL(REDIS_URL);
    const server = createServer((client) => {
      const upstream = connect(Number(target.port || 6379), target.hostname);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    if (server !== undefined) await new Promise((resolve) => server.close(resolve));
  }
}

const prefix = `test-${randomBytes(6).toString('hex')}:`;

afterAll(async () => {
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

describe('two instances sharing Redis', () => {
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    // Two services with their own databases; the same tenant id in both
    // stands for one tenant served by two instances.
    const env = { REDIS_URL, REDIS_KEY_PREFIX: `${prefix}shared:`, RATE_LIMIT_MAX: '4' };
    [first, second] = await Promise.all([startTestApp({ env }), startTestApp({ env })]);
  });
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
  });

  it('spend one tenant budget together', async () => {
    const seen: Array<string | null> = [];
    for (const app of [first, second, first, second]) {
      const response = await app.request('GET', '/api/v1/rules');
      expect(response.status).toBe(200);
      seen.push(remaining(response));
    }
    expect(seen).toEqual(['3', '2', '1', '0']);
    for (const app of [first, second]) {
      const refused = await app.request('GET', '/api/v1/rules');
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('RATE_LIMITED');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    // The other tenant is untouched on both.
    const other = await second.request('GET', '/api/v1/rules', { key: second.otherAdminKey, tenant: second.otherTenantId });
    expect(remaining(other)).toBe('3');
  });

  it('spend one client address budget together for refused requests', async () => {
    const statuses: number[] = [];
    for (const app of [first, second, first, second, first]) {
      statuses.push((await app.request('GET', '/api/v1/rules', { key: BAD_KEY, tenant: 'acme' })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 429]);
  });
});

describe('when Redis is unreachable', () => {
  it('starts anyway and lets requests pass without counting', async () => {
    const relay = new RedisRelay();
    await relay.start();
    await relay.stop();
    const t = await startTestApp({ env: { REDIS_URL: `redis://127.0.0.1:${relay.port}`, REDIS_KEY_PREFIX: `${prefix}down:`, RATE_LIMIT_MAX: '1' } });
    try {
      for (let i = 0; i < 3; i++) {
        const response = await t.request('GET', '/api/v1/rules');
        expect(response.status).toBe(200);
        expect(response.headers.get('ratelimit-limit')).toBeNull();
      }
    } finally {
      await t.close();
    }
  });

  it('fails open with one warning while it is gone and counts again once it is back', async () => {
    const relay = new RedisRelay();
    await relay.start();
    const database = await freshDatabase();
    const key = `test_${randomBytes(24).toString('base64url')}`;
    const config = loadConfig({
      DATABASE_URL: database.databaseUrl ?? '',
      RULES_DATA_DIR: database.dataDir,
      RULES_BOOTSTRAP_TENANTS: `acme:${key}`,
      REDIS_URL: `redis://127.0.0.1:${relay.port}`,
      REDIS_KEY_PREFIX: `${prefix}flap:`,
      RATE_LIMIT_MAX: '2',
      LOG_LEVEL: 'info',
    });
    const lines: string[] = [];
    const storage = await createStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    await bootstrapTenants(storage, config.bootstrapTenants ?? []);
    const app = await buildApp({ config, storage, logStream: { write: (line) => lines.push(line) } });
    const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
    const get = async (): Promise<{ status: number; remaining: string | null }> => {
      const response = await fetch(`${baseUrl}/api/v1/rules`, { headers: { 'x-api-key': key, 'x-tenant-id': 'acme' } });
      await response.arrayBuffer();
      return { status: response.status, remaining: response.headers.get('ratelimit-remaining') };
    };
    const warnings = (): string[] => lines.filter((line) => line.includes('rate-limit counters unavailable'));
    try {
      expect(await get()).toEqual({ status: 200, remaining: '1' });
      expect(await get()).toEqual({ status: 200, remaining: '0' });
      expect((await get()).status).toBe(429);

      await relay.stop();
      const open = await until(get, (answer) => answer.status === 200, 'requests to pass while Redis is gone');
      expect(open.remaining).toBeNull();
      for (let i = 0; i < 5; i++) expect((await get()).status).toBe(200);
      // One warning per outage: a second one only after counting resumed in
      // between (on a loaded machine the relay's reconnects can flap).
      const resumes = (): string[] => lines.filter((line) => line.includes('rate-limit counters available again'));
      expect(warnings().length).toBeGreaterThanOrEqual(1);
      expect(warnings().length).toBe(resumes().length + 1);
      for (const warning of warnings()) expect(JSON.parse(warning)).toMatchObject({ level: 40 });

      await relay.start();
      // The window's count survived in Redis, so counting again means 429.
      const back = await until(get, (answer) => answer.status === 429, 'counting to resume once Redis is back');
      expect(back.remaining).toBe('0');
      expect(lines.some((line) => line.includes('rate-limit counters available again'))).toBe(true);
    } finally {
      await app.close();
      await storage.close();
      await relay.stop();
      await database.drop();
    }
  });
});
