/**
 * Shared rate-limit counters (REDIS_URL): two instances spend one tenant's
 * budget and one client address's budget together. What happens when
 * Redis is slow or away is rate-limit-redis-fallback.test.ts's. Every run
 * uses its own key prefix, so runs never share counters.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.ts';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const BAD_KEY = 'rk_not_a_key_of_anyone_0123456789abcdef';

function remaining(response: TestResponse): string | null {
  return response.headers.get('ratelimit-remaining');
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
