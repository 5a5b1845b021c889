/**
 * SIGTERM on a real server process (the bundle `npm start` runs) that holds
 * change feeds (docs/operations.md, "Shutdown"): every feed ends, a local
 * validator following one keeps the version it runs and stops for good
 * when closed, and a connection on which the client never sent a byte (a
 * browser's speculative connection, or the spare one undici's pool opens
 * when held streams are aborted and a request follows at once) does not
 * hold the close: the process exits 0 within SHUTDOWN_TIMEOUT_MS. Before,
 * such a connection kept the close waiting for Fastify's 72 s keep-alive
 * timeout, and a SIGTERM ended in exit 1.
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRulesClient } from '../../clients/typescript/src/index.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';
import { openFeed, type Feed } from '../support/event-feed.ts';
import { startInstance, type Instance } from '../support/instances.ts';

const TENANT = 'acme';
const CONTEXT = 'orders';

describe('SIGTERM while change feeds are held', () => {
  let database: FreshDatabase;
  let instance: Instance;
  const key = `feeds_${randomBytes(18).toString('base64url')}`;

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await instance.request(method, path, { body, key, tenant: TENANT });
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
    return response.body;
  };

  beforeAll(async () => {
    database = await freshDatabase();
    instance = await startInstance({
      databaseUrl: database.databaseUrl ?? '',
      dataDir: database.dataDir,
      // A short timeout: a close held by a connection fails fast, with exit 1.
      env: { RULES_BOOTSTRAP_TENANTS: `${TENANT}:${key}`, LOG_LEVEL: 'silent', SHUTDOWN_TIMEOUT_MS: '5000' },
    });
    await call('POST', '/api/v1/rules', { context: CONTEXT, code: 'LIMIT', name: 'Limit', fieldPath: 'amount', expression: 'amount <= 100' });
    await call('POST', `/api/v1/contexts/${CONTEXT}/publish`);
    await call('PUT', `/api/v1/contexts/${CONTEXT}/settings`, { localValidation: true });
  });

  afterAll(async () => {
    await instance?.stop();
    await database?.drop();
  });

  it('ends every feed, closes connections nothing was sent on, and exits 0', async () => {
    const headers = { 'x-api-key': key, 'x-tenant-id': TENANT };
    const feeds: Feed[] = [];
    for (let i = 0; i < 3; i++) {
      const feed = await openFeed(`${instance.baseUrl}/api/v1/contexts/${CONTEXT}/validator/events`, headers);
      expect(feed.status).toBe(200);
      await feed.next((m) => m.event === 'published');
      feeds.push(feed);
    }
    let requests = 0;
    const counting: typeof fetch = (input, init) => {
      requests++;
      return fetch(input, init);
    };
    const client = createRulesClient({ baseUrl: instance.baseUrl, tenantId: TENANT, apiKey: key, retry: { maxRetries: 0 }, fetch: counting });
    const validator = client.localValidator(CONTEXT, { trustServerKey: true, maxReconnectDelayMs: 100 });
    await validator.ready;
    await expect.poll(() => validator.lastEventId, { timeout: 10_000 }).toBe('1');

    // Connected, and never a byte sent.
    const unused: Socket = connect(instance.port, '127.0.0.1');
    unused.on('error', () => undefined);
    await new Promise<void>((done) => unused.once('connect', () => done()));
    const unusedClosed = new Promise<void>((done) => unused.once('close', () => done()));

    const exit = await instance.stop(30_000);
    expect(exit).toEqual({ code: 0, signal: null });
    for (const feed of feeds) await feed.ended;
    await unusedClosed;
    // The validator keeps the version it runs while the service is away, trying to reconnect, and stops trying once closed.
    expect(validator.version).toBe(1);
    expect((await validator.validate({ amount: 500 })).failures.map((failure) => failure.ruleCode)).toEqual(['LIMIT']);
    const before = requests;
    await expect.poll(() => requests, { timeout: 10_000 }).toBeGreaterThan(before);
    await validator.close();
    const atClose = requests;
    await new Promise((done) => setTimeout(done, 1000));
    expect(requests).toBe(atClose);
  });
});
