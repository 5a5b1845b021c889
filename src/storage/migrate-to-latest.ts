/**
 * Brings the schema to the latest migration. On PostgreSQL, instances that
 * start together serialize on a session advisory lock held by a dedicated
 * connection, so exactly one runs each migration and the others find it
 * done. PGlite belongs to one process, so it needs no lock.
 */
import { Migrator, type Kysely, type Migration } from 'kysely';
import pg from 'pg';
import { migrations } from '../../migrations/index.ts';
import { openDatabase, type DatabaseOptions } from './open-database.ts';
import { TUNING } from '../tuning.ts';

// Any constant distinct from kysely's own migration lock id.
const MIGRATION_LOCK_KEY = '7203118455104372001';

/** Thrown when a migration fails; names it. */
export class MigrationError extends Error {
  readonly code = 'MIGRATION_FAILED';
}

/**
 * Runs the pending migrations on an open kysely instance and returns the
 * names of those it ran. Fails loudly: a migration error is thrown as
 * MigrationError, never just logged. `migrations` defaults to the
 * project's (tests pass their own).
 */
export async function runMigrations(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run on a database of any schema version
  db: Kysely<any>,
  options: { kind: 'pglite' | 'postgres'; databaseUrl?: string; migrations?: Record<string, Migration> },
): Promise<string[]> {
  const set = options.migrations ?? migrations;
  if (options.kind === 'pglite' || options.databaseUrl === undefined) return migrate(db, set);

  const lockClient = new pg.Client({ connectionString: options.databaseUrl, connectionTimeoutMillis: TUNING.migrationLockConnectTimeoutMs.value });
  // A lock connection dying mid-migration must not crash the process; the
  // migration's own queries will fail and report it.
  lockClient.on('error', () => {});
  await lockClient.connect();
  try {
    await lockClient.query('select pg_advisory_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
    return await migrate(db, set);
  } finally {
    // Ending the session releases the lock even if the unlock fails.
    await lockClient.query('select pg_advisory_unlock($1::bigint)', [MIGRATION_LOCK_KEY]).catch(() => {});
    await lockClient.end().catch(() => {});
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations run on a database of any schema version
async function migrate(db: Kysely<any>, set: Record<string, Migration>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: () => Promise.resolve(set) } });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error !== undefined) {
    const name = failed?.migrationName ?? 'migrations';
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a migration may throw a non-Error; its string form is all there is
    throw new MigrationError(`migration ${name} failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Opens the database, migrates it to the latest schema and closes it; for
 * the CLI. Returns the names of the migrations it ran.
 *
 * @example
 * await migrateToLatest({ databaseUrl: process.env.DATABASE_URL, dataDir: './data' });
 */
export async function migrateToLatest(options: DatabaseOptions): Promise<string[]> {
  const database = await openDatabase(options);
  try {
    const applied = await runMigrations(database.db, { kind: database.kind, databaseUrl: options.databaseUrl });
    if (applied.length > 0) options.logger?.info({ migrations: applied }, 'database migrated');
    return applied;
  } finally {
    await database.close();
  }
}
