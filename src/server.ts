/**
 * The process entry point (`npm start`): configuration, database and
 * migrations, bootstrap, first-run demo, then listen. Nothing here is
 * needed by tests of the HTTP API, which use buildApp directly.
 */
import { buildApp } from './app.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createStorage } from './storage/create-storage.ts';
import type { StorageLogger } from './storage/open-database.ts';
import type { Storage } from './storage/types.ts';
import { bootstrapTenants } from './startup/bootstrap.ts';
import { validateCurlCommand } from './startup/curl-command.ts';
import { DEMO_CONTEXT, DEMO_PAYLOAD, DEMO_TENANT, seedDemo } from './startup/demo-seed.ts';
import { installShutdown } from './startup/shutdown.ts';

interface EarlyLogEntry {
  level: 'info' | 'error';
  o: object;
  msg?: string;
}

function readConfig(): Config {
  try {
    return loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

async function main(): Promise<void> {
  const config = readConfig();

  // The app's logger exists only once storage is open; what storage logs
  // while migrating is held and replayed into it.
  const early: EarlyLogEntry[] = [];
  const earlyLogger: StorageLogger = {
    info: (o, msg) => early.push({ level: 'info', o, msg }),
    error: (o, msg) => early.push({ level: 'error', o, msg }),
  };
  const storage = await createStorage({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, logger: earlyLogger });
  try {
    await start(config, storage, early);
  } catch (error) {
    await storage.close().catch(() => {});
    throw error;
  }
}

async function start(config: Config, storage: Storage, early: EarlyLogEntry[]): Promise<void> {
  const app = await buildApp({ config, storage });
  for (const entry of early) app.log[entry.level](entry.o, entry.msg);

  if (config.workers > 1) {
    app.log.warn({ workers: config.workers }, 'WORKERS above 1 is not implemented yet; running one process');
  }

  if (config.bootstrapTenants !== undefined) {
    await bootstrapTenants(storage, config.bootstrapTenants);
    app.log.info({ tenants: config.bootstrapTenants.map((t) => t.tenantId) }, 'bootstrap tenants ensured');
  } else {
    const demoKey = await seedDemo({ ...app.deps, maxRulesPerContext: config.maxRulesPerContext });
    if (demoKey !== undefined) {
      app.log.info({ tenant: DEMO_TENANT, context: DEMO_CONTEXT }, 'demo tenant created; try the command printed below');
      // Plain text on stdout whatever LOG_LEVEL is, on a line of its own.
      const command = validateCurlCommand({
        port: config.port,
        apiKey: demoKey,
        tenantId: DEMO_TENANT,
        body: { context: DEMO_CONTEXT, payload: DEMO_PAYLOAD },
      });
      process.stdout.write(`\n${command}\n\n`);
    }
  }

  installShutdown({ app, storage, timeoutMs: config.shutdownTimeoutMs });
  await app.listen({ host: config.host, port: config.port });
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`Failed to start: ${message}\n`);
  process.exit(1);
});
