/**
 * Which pooled PostgreSQL connections are kept after a failed query
 * (src/storage/in-doubt-pool.ts): one whose error the server reported is
 * in step and goes back to the pool; one whose query timed out on the
 * client is closed. The partition case, end to end, is in
 * test/reliability/database-outage.test.ts.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discardingConnectionsInDoubt } from '../../src/storage/in-doubt-pool.ts';
import { freshDatabase, type FreshDatabase } from '../support/database.ts';

describe.skipIf(!process.env.DATABASE_URL)('a pool that discards connections in doubt (PostgreSQL)', () => {
  let database: FreshDatabase;
  let pool: pg.Pool;

  beforeAll(async () => {
    database = await freshDatabase();
    pool = new pg.Pool({ connectionString: database.databaseUrl, max: 2, query_timeout: 300 });
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  const backendPid = async (client: { query: (sql: string, parameters: ReadonlyArray<unknown>) => Promise<{ rows: any[] }> }) =>
    (await client.query('select pg_backend_pid() as pid', [])).rows[0].pid as number;

  it('keeps a connection whose query failed with an error the server reported', async () => {
    const wrapped = discardingConnectionsInDoubt(pool);
    const client = await wrapped.connect();
    const pid = await backendPid(client);
    await expect(client.query('select 1 / 0', [])).rejects.toThrow('division by zero');
    client.release();
    const again = await wrapped.connect();
    expect(await backendPid(again)).toBe(pid);
    again.release();
    expect(pool.totalCount).toBe(1);
  });

  it('closes a connection whose query timed out, and the server ends its session (no transaction left open)', async () => {
    const wrapped = discardingConnectionsInDoubt(pool);
    const client = await wrapped.connect();
    const pid = await backendPid(client);
    await client.query('begin', []);
    await expect(client.query('select pg_sleep(2)', [])).rejects.toThrow('Query read timeout');
    client.release();
    const next = await wrapped.connect();
    expect(await backendPid(next)).not.toBe(pid);
    // The old session is gone from the server, not waiting idle in its transaction.
    const deadline = Date.now() + 5000;
    let sessions: Array<{ state: string }>;
    for (;;) {
      sessions = (await next.query('select state from pg_stat_activity where pid = $1', [pid])).rows as Array<{ state: string }>;
      if (sessions.length === 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    next.release();
    expect(sessions).toEqual([]);
  });
});

describe.skipIf(!!process.env.DATABASE_URL)('a pool that discards connections in doubt (PGlite)', () => {
  it.skip('needs PostgreSQL (set DATABASE_URL): PGlite runs in the process and has no pool', () => {});
});
