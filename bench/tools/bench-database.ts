/**
 * The database a benchmark runs on: the embedded one in a temporary folder,
 * or, when DATABASE_URL (or the `serverUrl` given) is set, a fresh
 * PostgreSQL database created on that server for the run. `drop` removes
 * whichever it was.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

export interface BenchDatabase {
  /** The embedded database's folder (used when `databaseUrl` is undefined). */
  readonly dataDir: string;
  /** The fresh PostgreSQL database; undefined on the embedded one. */
  readonly databaseUrl: string | undefined;
  drop(): Promise<void>;
}

/**
 * @example
 * const db = await benchDatabase('bench-impact');
 * const storage = await createStorage({ databaseUrl: db.databaseUrl, dataDir: db.dataDir });
 * // ... then storage.close() and db.drop()
 */
export async function benchDatabase(prefix: string, serverUrl = process.env.DATABASE_URL): Promise<BenchDatabase> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `${prefix}-`));
  if (serverUrl === undefined || serverUrl === '') {
    return { dataDir, databaseUrl: undefined, drop: () => rm(dataDir, { recursive: true, force: true }) };
  }
  const name = `bench_${randomBytes(6).toString('hex')}`;
  await onServer(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    dataDir,
    databaseUrl: url.toString(),
    drop: async () => {
      await rm(dataDir, { recursive: true, force: true });
      await onServer(serverUrl, `DROP DATABASE ${name}`);
    },
  };
}

async function onServer(serverUrl: string, statement: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(statement);
  } finally {
    await admin.end();
  }
}
