/**
 * Test databases. Each test file gets its own, so files run in parallel
 * without seeing each other's rows: a PGlite folder by default, or a new
 * database on the PostgreSQL server named by DATABASE_URL.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface FreshDatabase {
  /** Set when the tests run against a PostgreSQL server. */
  databaseUrl?: string;
  /** A new, empty temp folder: the PGlite data folder, or scratch space. */
  dataDir: string;
  /** Removes the database (and the folder). Safe to call twice. */
  drop(): Promise<void>;
}

/** A fresh, empty database for one test file: PGlite in a temp dir, or, when process.env.DATABASE_URL is set, a new database `t_<random>` created on that PostgreSQL server (and dropped by drop()). */
export async function freshDatabase(): Promise<FreshDatabase> {
  const dataDir = await mkdtemp(join(tmpdir(), 'rules-db-'));
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl === undefined || serverUrl === '') {
    return { dataDir, drop: () => rm(dataDir, { recursive: true, force: true }) };
  }

  // The name is generated here, never taken from input, so it is safe to
  // splice into DDL (CREATE DATABASE takes no bind parameters).
  const name = `t_${randomBytes(8).toString('hex')}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let dropped = false;
  return {
    databaseUrl: url.toString(),
    dataDir,
    async drop() {
      if (dropped) return;
      dropped = true;
      // WITH (FORCE) ends sessions a test left open (PostgreSQL 13+).
      await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function adminQuery(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
