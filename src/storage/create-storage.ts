/**
 * The storage factory: open the database, migrate it, hand out the stores.
 */
import { SqlApiKeyStore } from './api-key-store.ts';
import { SqlAuditStore } from './audit-log.ts';
import { SqlContextTestStore } from './context-test-store.ts';
import { SqlSampleStore } from './sample-store.ts';
import { SqlContextHistoryStore } from './context-history-store.ts';
import { SqlContextUsageStore } from './context-usage-store.ts';
import { guard } from './database-errors.ts';
import { runMigrations } from './migrate-to-latest.ts';
import { SqlPayloadSchemaStore } from './payload-schema-store.ts';
import { openDatabase, type DatabaseOptions } from './open-database.ts';
import { SqlRuleStore } from './rule-store.ts';
import { SqlTenantStore } from './tenant-store.ts';
import { SqlContextSettingsStore } from './context-settings-store.ts';
import { SqlSigningKeyStore } from './signing-key-store.ts';
import { sql } from 'kysely';
import { TUNING } from '../tuning.ts';
import type { Storage } from './types.ts';

/**
 * Opens the database (PGlite in dataDir when databaseUrl is undefined, else
 * pg Pool), runs migrations under an advisory lock (concurrent starts
 * serialize), and returns the Storage of src/storage/types.ts.
 *
 * @example
 * const storage = await createStorage({ dataDir: './data' });
 * await storage.tenants.ensureTenant('acme');
 */
export async function createStorage(options: DatabaseOptions): Promise<Storage> {
  const database = await openDatabase(options);
  try {
    const applied = await guard(() =>
      runMigrations(database.db, { kind: database.kind, databaseUrl: options.databaseUrl }),
    );
    if (applied.length > 0) options.logger?.info({ migrations: applied }, 'database migrated');
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }

  const { db } = database;
  let closed: Promise<void> | undefined;
  return {
    kind: database.kind,
    tenants: new SqlTenantStore(db),
    apiKeys: new SqlApiKeyStore(db),
    rules: new SqlRuleStore(db),
    history: new SqlContextHistoryStore(db),
    usage: new SqlContextUsageStore(db),
    tests: new SqlContextTestStore(db),
    audit: new SqlAuditStore(db),
    payloadSchemas: new SqlPayloadSchemaStore(db),
    samples: new SqlSampleStore(db),
    contextSettings: new SqlContextSettingsStore(db),
    signingKeys: new SqlSigningKeyStore(db),
    async ping() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), TUNING.readinessPingTimeoutMs.value);
      });
      const answer = sql`select 1`.execute(db).then(
        () => true,
        () => false,
      );
      try {
        return await Promise.race([answer, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    close() {
      closed ??= database.close();
      return closed;
    },
  };
}
