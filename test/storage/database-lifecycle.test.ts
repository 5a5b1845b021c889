/**
 * Opening, migrating, reopening and losing the database.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrations } from '../../migrations/index.ts';
import { createStorage } from '../../src/storage/create-storage.ts';
import { isConnectionError } from '../../src/storage/database-errors.ts';
import { sql } from 'kysely';
import { MigrationError, migrateToLatest, runMigrations } from '../../src/storage/migrate-to-latest.ts';
import { openDatabase } from '../../src/storage/open-database.ts';
import { UnavailableError } from '../../src/storage/types.ts';
import { freshDatabase } from '../support/database.ts';
import { accept, content, NO_LIMIT } from './storage-fixture.ts';

const onPostgres = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== '';

describe('persistence', () => {
  it('keeps everything across close and reopen, and migrating again does nothing', async () => {
    const database = await freshDatabase();
    const options = { databaseUrl: database.databaseUrl, dataDir: database.dataDir };
    try {
      const before = await createStorage(options);
      await before.tenants.ensureTenant('acme');
      const key = await before.apiKeys.create('acme', 'admin', 'admin', 'hash-persist');
      const rule = await before.rules.create('acme', 'kept', 'R', content(), NO_LIMIT);
      await before.rules.publishRule('acme', rule.id, accept);
      await before.close();
      await before.close(); // idempotent

      expect(await migrateToLatest(options)).toEqual([]);

      const after = await createStorage(options);
      try {
        expect(await after.tenants.isEmpty()).toBe(false);
        expect(await after.apiKeys.findActiveByHash('hash-persist')).toEqual(key);
        expect(await after.rules.get('acme', rule.id)).toMatchObject({ status: 'published', version: 1 });
        expect(await after.rules.liveRuleset('acme', 'kept')).toMatchObject({ rulesetVersion: 1, rules: [{ code: 'R' }] });
      } finally {
        await after.close();
      }
    } finally {
      await database.drop();
    }
  });

  it('answers ping while open and reports closed storage as unavailable', async () => {
    const database = await freshDatabase();
    try {
      const storage = await createStorage({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
      expect(storage.kind).toBe(onPostgres ? 'postgres' : 'pglite');
      expect(await storage.ping()).toBe(true);
      await storage.close();
      expect(await storage.ping()).toBe(false);
      await expect(storage.tenants.exists('acme')).rejects.toBeInstanceOf(UnavailableError);
    } finally {
      await database.drop();
    }
  });
});

describe('a failing migration', () => {
  it('stops with MigrationError naming it, and its transaction leaves nothing behind', async () => {
    const database = await freshDatabase();
    const opened = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
    try {
      const broken = {
        '2099-01-01-creates-then-fails': {
          async up(db: Parameters<typeof runMigrations>[0]) {
            await db.schema.createTable('half_done').addColumn('id', 'integer').execute();
            await sql`select * from no_such_table`.execute(db);
          },
        },
      };
      const attempt = runMigrations(opened.db, { kind: opened.kind, databaseUrl: database.databaseUrl, migrations: broken });
      await expect(attempt).rejects.toBeInstanceOf(MigrationError);
      await expect(attempt).rejects.toThrow(/2099-01-01-creates-then-fails/);
      const { rows } = await sql<{ name: string | null }>`select to_regclass('half_done')::text as name`.execute(opened.db);
      expect(rows[0]?.name).toBeNull();
    } finally {
      await opened.close();
      await database.drop();
    }
  });
});

describe.runIf(onPostgres)('migrations on PostgreSQL', () => {
  it('run once when several instances start together', async () => {
    const database = await freshDatabase();
    const options = { databaseUrl: database.databaseUrl, dataDir: database.dataDir };
    try {
      const storages = await Promise.all([createStorage(options), createStorage(options), createStorage(options)]);
      await storages[0].tenants.ensureTenant('acme');
      for (const s of storages) expect(await s.tenants.exists('acme')).toBe(true);
      await Promise.all(storages.map((s) => s.close()));

      const client = new pg.Client({ connectionString: database.databaseUrl });
      await client.connect();
      try {
        const { rows } = await client.query('select name from kysely_migration order by name');
        // Every registered migration, each once.
        expect(rows.map((r) => r.name)).toEqual(Object.keys(migrations).sort());
        expect(Object.keys(migrations)).toEqual(expect.arrayContaining(['2025-06-01-initial-schema', '2026-11-27-context-usage', '2026-11-28-payload-schemas']));
      } finally {
        await client.end();
      }
    } finally {
      await database.drop();
    }
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('database outages', () => {
  it('a server that cannot be reached fails the start with UnavailableError', async () => {
    const port = await freePort();
    await expect(createStorage({ databaseUrl: `postgres://postgres@127.0.0.1:${port}/none`, dataDir: '/nonexistent' })).rejects.toBeInstanceOf(
      UnavailableError,
    );
  });

  it.each([
    [{ code: 'ECONNREFUSED' }, true],
    [{ code: '57P01', message: 'terminating connection due to administrator command' }, true],
    [{ code: '08006' }, true],
    [new Error('Connection terminated unexpectedly'), true],
    [new Error('timeout exceeded when trying to connect'), true],
    [new Error('PGlite is closed'), true],
    [new Error('migration failed', { cause: { code: 'ECONNRESET' } }), true],
    [{ code: '23505' }, false],
    [{ code: '42601', message: 'syntax error' }, false],
    [new Error('does not compile'), false],
    [Object.assign(new Error('context "connection terminated" does not compile'), { code: 'INVALID_BODY' }), false],
  ])('classifies %o as a connection error: %s', (error, expected) => {
    expect(isConnectionError(error)).toBe(expected);
  });

  /** A TCP proxy to the PostgreSQL server that can be cut and restored, standing in for an outage. */
  async function outageProxy(target: URL) {
    const sockets = new Set<Socket>();
    let server: Server | undefined;
    const port = await freePort();
    const start = async () => {
      server = createServer((client) => {
        const upstream = connect(Number(target.port || 5432), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
        }
        client.pipe(upstream).pipe(client);
      });
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    };
    const stop = async () => {
      const closed = new Promise((resolve) => server?.close(resolve));
      for (const s of sockets) s.destroy();
      await closed;
    };
    await start();
    return { port, start, stop };
  }

  it.runIf(onPostgres)('maps a lost server to UnavailableError and recovers on its own when it returns', async () => {
    const database = await freshDatabase();
    const target = new URL(database.databaseUrl!);
    const proxy = await outageProxy(target);
    const viaProxy = new URL(target);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    const storage = await createStorage({ databaseUrl: viaProxy.toString(), dataDir: database.dataDir });
    try {
      await storage.tenants.ensureTenant('acme');
      const rule = await storage.rules.create('acme', 'outage', 'R', content(), NO_LIMIT);

      // The connection drops while the transaction waits for beforeCommit:
      // the commit fails, nothing goes live, and the process lives on.
      await expect(storage.rules.publishRule('acme', rule.id, () => proxy.stop())).rejects.toBeInstanceOf(UnavailableError);
      await expect(storage.rules.get('acme', rule.id)).rejects.toBeInstanceOf(UnavailableError);
      await expect(storage.rules.publishRule('acme', rule.id, accept)).rejects.toBeInstanceOf(UnavailableError);
      expect(await storage.ping()).toBe(false);

      await proxy.start();
      let recovered = false;
      for (let attempt = 0; attempt < 50 && !recovered; attempt++) {
        recovered = await storage.ping();
        if (!recovered) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(recovered).toBe(true);
      expect(await storage.rules.get('acme', rule.id)).toMatchObject({ code: 'R', status: 'draft' });
      expect(await storage.rules.liveRuleset('acme', 'outage')).toBeNull();
    } finally {
      await storage.close();
      await proxy.stop();
      await database.drop();
    }
  });
});
