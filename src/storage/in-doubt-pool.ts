/**
 * A pg Pool, as kysely's PostgresDialect takes it, that never hands out a
 * connection whose state is in doubt.
 *
 * node-postgres gives up on a query after `query_timeout` but keeps the
 * connection: the query stays sent, and whatever was queued behind it
 * (kysely's ROLLBACK of the failed transaction) is dropped unsent. Back in
 * the pool, such a connection is still inside the transaction once a
 * network partition heals (test/reliability/database-outage.test.ts
 * found sessions left "idle in transaction", and "(aborted)"), and the
 * next borrower's statements run in it: reads from an old snapshot, writes
 * that are answered but not committed, or "current transaction is
 * aborted" for every query. So a connection on which a query failed for any reason other
 * than an error the server reported (which leaves the protocol in step) is
 * released with an error, and pg-pool destroys it instead of reusing it.
 */
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import pg from 'pg';

/**
 * Wraps `pool` for PostgresDialect.
 *
 * @example
 * new PostgresDialect({ pool: discardingConnectionsInDoubt(new pg.Pool(config)) })
 */
export function discardingConnectionsInDoubt(pool: pg.Pool): PostgresPool {
  return {
    async connect(): Promise<PostgresPoolClient> {
      return borrowed(await pool.connect());
    },
    end: () => pool.end(),
  };
}

function borrowed(client: pg.PoolClient): PostgresPoolClient {
  let inDoubt: unknown;
  const query = async (sql: string, parameters: ReadonlyArray<unknown>) => {
    try {
      return await client.query(sql, parameters as unknown[]);
    } catch (error) {
      if (!(error instanceof pg.DatabaseError)) inDoubt ??= error;
      throw error;
    }
  };
  return {
    // Only the (sql, parameters) form: kysely uses the cursor form only
    // when the dialect is given a cursor class, and ours is not.
    query: query as unknown as PostgresPoolClient['query'],
    // With an error, pg-pool ends the client instead of keeping it, and
    // ending a client with a query still out destroys its socket.
    release: () => client.release(inDoubt === undefined ? undefined : asError(inDoubt)),
  };
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
