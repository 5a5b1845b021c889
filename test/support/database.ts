/**
 * Test databases. Each test file gets its own, so files run in parallel
 * without seeing each other's rows: a PGlite folder by default, or a new
 * database on the PostgreSQL server named by DATABASE_URL.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

export interface FreshDatabase {
  /** Set when the tests run against a PostgreSQL server. */
  databaseUrl?: string;
  /** A new, empty temp folder: the PGlite data folder, or scratch space. */
  dataDir: string;
  /** Removes the database (and the folder). Safe to call twice. */
  drop(): Promise<void>;
}

/**
 * A fresh, empty database for one test file: PGlite in a temp dir, or, when process.env.DATABASE_URL is set,
 * a new database `t_<random>` created on that PostgreSQL server (and dropped by drop()).
 */
export async function freshDatabase(): Promise<FreshDatabase> {
  const dataDir = await mkdtemp(join(tmpdir(), 'rules-db-'));
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl === undefined || serverUrl === '') {
    await cp(await pgliteTemplate(), dataDir, { recursive: true });
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

/**
 * A freshly initialized, empty PGlite data folder shared by all test files
 * of this machine. initdb takes seconds; copying its result takes a
 * fraction of that. Built in a private folder and renamed into place, so a
 * reader never sees a half-written template; concurrent builders race
 * harmlessly and the loser discards its copy. Keyed by PGlite's version.
 */
async function pgliteTemplate(): Promise<string> {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const manifest = join(dirname(entry), '..', 'package.json');
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  const template = join(tmpdir(), `rules-pglite-template-${version}`);
  if (await exists(template)) return template;

  const building = await mkdtemp(join(tmpdir(), 'rules-pglite-building-'));
  const pglite = await PGlite.create(building);
  await pglite.close();
  try {
    await rename(building, template);
  } catch {
    // Another test file finished first; its template is as good as ours.
    await rm(building, { recursive: true, force: true });
  }
  return template;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
