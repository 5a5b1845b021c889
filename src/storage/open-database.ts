/**
 * Opens the kysely instance the stores share: an embedded PGlite in a data
 * folder, or a pg Pool on a PostgreSQL server. Both speak the same SQL, so
 * everything above this module is dialect-free.
 */
import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { TUNING } from '../tuning.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { discardingConnectionsInDoubt } from './in-doubt-pool.ts';
import type { DatabaseSchema } from './schema.ts';

/** Where the data lives; databaseUrl wins when set. */
export interface DatabaseOptions {
  databaseUrl?: string;
  dataDir: string;
  logger?: StorageLogger;
}

/** The slice of a pino logger storage uses. */
export interface StorageLogger {
  info(o: object, msg?: string): void;
  error(o: object, msg?: string): void;
}

/** An open database and how to close it. */
export interface OpenDatabase {
  readonly kind: 'pglite' | 'postgres';
  readonly db: Kysely<DatabaseSchema>;
  close(): Promise<void>;
}

/**
 * Opens PGlite in `dataDir` (created if missing) or a pg Pool on
 * `databaseUrl`. Runs no migrations.
 *
 * @example
 * const { db, close } = await openDatabase({ dataDir: './data' });
 */
export async function openDatabase(options: DatabaseOptions): Promise<OpenDatabase> {
  if (options.databaseUrl === undefined || options.databaseUrl === '') {
    await mkdir(options.dataDir, { recursive: true });
    // Before PGlite touches the folder: another process in it means corruption.
    const release = await lockDataDir(options.dataDir);
    let pglite: PGlite;
    try {
      pglite = await PGlite.create(options.dataDir);
    } catch (error) {
      await release();
      throw error;
    }
    const db = new Kysely<DatabaseSchema>({ dialect: new PGliteDialect(pglite) });
    // Destroying the kysely instance closes PGlite through the dialect.
    return { kind: 'pglite', db, close: () => db.destroy().finally(release) };
  }

  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: TUNING.databasePoolSize.value,
    // Fail fast while the server is down; the Pool opens fresh connections
    // once it is back, so recovery needs nothing.
    connectionTimeoutMillis: TUNING.databaseConnectTimeoutMs.value,
    // A server that stops answering without closing the connection (a
    // network partition) would otherwise leave queries waiting forever.
    query_timeout: TUNING.databaseQueryTimeoutMs.value,
    keepAlive: true,
  });
  // An idle client whose server went away emits 'error' on the pool;
  // unhandled, that would crash the process. The pool drops the client by
  // itself, so logging is all that is left to do.
  pool.on('error', (error) => {
    options.logger?.error({ err: error }, 'idle database connection failed');
  });
  // The pool listens only to idle clients. A checked-out client whose
  // connection drops between two queries (say, while a transaction awaits
  // beforeCommit) would emit 'error' to nobody and crash the process. With
  // this listener its next query fails instead ("not queryable", mapped to
  // UnavailableError) and the pool discards it on release.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  // A connection whose query timed out is destroyed, not reused (in-doubt-pool.ts).
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool: discardingConnectionsInDoubt(pool) }) });
  return { kind: 'postgres', db, close: () => db.destroy() };
}
