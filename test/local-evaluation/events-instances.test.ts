/**
 * The change feed across two real server processes on one PostgreSQL
 * database: a feed held by one instance delivers, within a second, the
 * publish made on the other (the change notice reaches it through
 * LISTEN/NOTIFY), with the ETag the other instance serves the module with;
 * and ends with a `closed` event when local validation is turned off, or
 * the feed's key is revoked, on the other.
 *
 * PostgreSQL only: PGlite belongs to one process. Set DATABASE_URL to run it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { openFeed } from '../support/event-feed.ts';
import { startTwoInstances, type Instance } from '../support/instances.ts';

const TENANT = 'acme';
/** docs/api.md: a change reaches every subscriber, on any instance, within a second. */
const DELIVERY_BOUND_MS = 1000;

describe.skipIf(!process.env.DATABASE_URL)('the change feed on several instances (needs DATABASE_URL)', () => {
  let database: FreshDatabase;
  let a: Instance;
  let b: Instance;
  const key = `sync_${randomBytes(18).toString('base64url')}`;
  let ruleId: string;

  const call = (instance: Instance, method: string, path: string, body?: unknown) => instance.request(method, path, { body, key, tenant: TENANT });

  beforeAll(async () => {
    database = await freshDatabase();
    [a, b] = await startTwoInstances(database, { RULES_BOOTSTRAP_TENANTS: `${TENANT}:${key}` });
    const created = await call(a, 'POST', '/api/v1/rules', { context: 'orders', code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100' });
    expect(created.status).toBe(201);
    ruleId = created.body.id;
    expect((await call(a, 'POST', '/api/v1/contexts/orders/publish')).status).toBe(200);
    expect((await call(a, 'PUT', '/api/v1/contexts/orders/settings', { localValidation: true })).status).toBe(200);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await database?.drop();
  });

  it('delivers a publish made on the other instance within a second', async () => {
    const feed = await openFeed(`${b.baseUrl}/api/v1/contexts/orders/validator/events`, { 'x-api-key': key, 'x-tenant-id': TENANT });
    try {
      expect(feed.status).toBe(200);
      expect((await feed.next((m) => m.event === 'published')).id).toBe('1');
      const edited = await call(a, 'PUT', `/api/v1/rules/${ruleId}`, { name: 'Limit', fieldPath: 'amount', expression: 'amount <= 200', version: 1 });
      expect(edited.status).toBe(200);
      expect((await call(a, 'POST', '/api/v1/contexts/orders/publish')).status).toBe(200);
      const event = await feed.next((m) => m.event === 'published', DELIVERY_BOUND_MS);
      expect(event.id).toBe('2');
      const module = await call(a, 'GET', '/api/v1/contexts/orders/validator?format=module');
      expect(JSON.parse(event.data!)).toEqual({ context: 'orders', version: 2, etag: module.headers.get('etag') });
    } finally {
      feed.close();
    }
  });

  it('ends a feed held by one instance with a closed event when its key is revoked on the other', async () => {
    const created = await call(a, 'POST', '/api/v1/api-keys', { name: 'to revoke', role: 'client' });
    expect(created.status).toBe(201);
    const feed = await openFeed(`${b.baseUrl}/api/v1/contexts/orders/validator/events`, { 'x-api-key': created.body.key, 'x-tenant-id': TENANT });
    try {
      expect(feed.status).toBe(200);
      await feed.next((m) => m.event === 'published');
      expect((await call(a, 'DELETE', `/api/v1/api-keys/${created.body.id}`)).status).toBe(204);
      const closed = await feed.next((m) => m.event === 'closed', DELIVERY_BOUND_MS);
      expect(JSON.parse(closed.data!)).toMatchObject({ context: 'orders', reason: 'KEY_CHANGED' });
      await feed.ended;
    } finally {
      feed.close();
    }
  });

  it('ends a feed held by one instance with a closed event when local validation is turned off on the other', async () => {
    const feed = await openFeed(`${b.baseUrl}/api/v1/contexts/orders/validator/events`, { 'x-api-key': key, 'x-tenant-id': TENANT });
    try {
      expect(feed.status).toBe(200);
      await feed.next((m) => m.event === 'published');
      expect((await call(a, 'PUT', '/api/v1/contexts/orders/settings', { localValidation: false })).status).toBe(200);
      const closed = await feed.next((m) => m.event === 'closed', DELIVERY_BOUND_MS);
      expect(JSON.parse(closed.data!)).toMatchObject({ context: 'orders', reason: 'LOCAL_VALIDATION_OFF' });
      await feed.ended;
    } finally {
      feed.close();
    }
  });
});
