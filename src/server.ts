/**
 * The process entry point (`npm start`): configuration, database and
 * migrations, bootstrap, first-run demo, then listen. Nothing here is
 * needed by tests of the HTTP API, which use buildApp directly.
 *
 * With WORKERS > 1 the same entry runs twice over: the cluster primary
 * migrates, bootstraps, seeds and prints the demo command once, then forks
 * the workers (src/cluster/cluster-primary.ts); each worker opens its own
 * storage and serves, sharing the port.
 *
 * Every process that serves first compiles the validators likely to be
 * asked for (src/validators/warm-start.ts), then listens: a worker that
 * has not listened yet is handed no connections.
 */
import cluster from 'node:cluster';
import type { AppDeps } from './app-deps.ts';
import { buildApp } from './app.ts';
import { KeyCache } from './auth/key-cache.ts';
import { createKeyService } from './auth/key-service.ts';
import { runClusterPrimary } from './cluster/cluster-primary.ts';
import { createPrimaryLogger } from './cluster/primary-logger.ts';
import { WorkerMetrics } from './cluster/cluster-metrics.ts';
import { WorkerChannel } from './cluster/worker-channel.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { createStorage } from './storage/create-storage.ts';
import type { StorageLogger } from './storage/open-database.ts';
import type { Storage } from './storage/types.ts';
import { bootstrapTenants, type BootstrapLog } from './startup/bootstrap.ts';
import { validateCurlCommand } from './startup/curl-command.ts';
import { DEMO_CONTEXT, DEMO_PAYLOAD, DEMO_TENANT, seedDemo } from './startup/demo-seed.ts';
import { installShutdown } from './startup/shutdown.ts';
import { ValidatorCache } from './validators/validator-cache.ts';
import { warmStart } from './validators/warm-start.ts';

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
    if (config.workers > 1 && cluster.isPrimary) await startPrimary(config, storage, early);
    else await start(config, storage, early);
  } catch (error) {
    await storage.close().catch(() => {});
    throw error;
  }
}

/** The cluster primary: prepare the database once, then hand over to the workers. */
async function startPrimary(config: Config, storage: Storage, early: EarlyLogEntry[]): Promise<void> {
  const log = createPrimaryLogger(config.logLevel);
  for (const entry of early) log[entry.level](entry.o, entry.msg);
  // Seeding publishes the demo ruleset through a throwaway cache; the
  // workers load it from the database.
  const validators = new ValidatorCache({
    rules: storage.rules,
    maxEntries: 1,
    limits: { maxExpressionLength: config.maxExpressionLength, maxTableRows: config.maxTableRows },
  });
  const keys = createKeyService(storage.apiKeys, new KeyCache({ find: (keyHash) => storage.apiKeys.findActiveByHash(keyHash) }));
  await prepareTenants(config, storage, { validators, keys }, log);
  await storage.close();
  // A worker's hard stop comes after its drain period and its shutdown timeout.
  runClusterPrimary({ workers: config.workers, shutdownTimeoutMs: config.shutdownDrainMs + config.shutdownTimeoutMs, log });
}

async function start(config: Config, storage: Storage, early: EarlyLogEntry[]): Promise<void> {
  // A cluster worker: the primary prepared the database; siblings share the port.
  const worker = cluster.isWorker;
  const app = await buildApp({
    config,
    storage,
    siblings: worker ? new WorkerChannel() : undefined,
    instanceMetrics: worker ? (registries) => new WorkerMetrics(registries) : undefined,
  });
  for (const entry of early) app.log[entry.level](entry.o, entry.msg);
  if (!worker) await prepareTenants(config, storage, app.deps, app.log);
  await warmStart({
    validators: app.internals.validators,
    usage: storage.usage,
    maxContexts: config.validatorCacheSize,
    budgetMs: config.warmStartMs,
    log: app.log,
  });
  installShutdown({ app, storage, drain: app.internals.drain, drainMs: config.shutdownDrainMs, timeoutMs: config.shutdownTimeoutMs });
  await app.listen({ host: config.host, port: config.port });
}

/** Bootstrap tenants, or on a first run the demo tenant and its printed command. */
async function prepareTenants(
  config: Config,
  storage: Storage,
  deps: Pick<AppDeps, 'validators' | 'keys'>,
  log: BootstrapLog,
): Promise<void> {
  if (config.bootstrapTenants !== undefined) {
    await bootstrapTenants(storage, config.bootstrapTenants, log);
  } else {
    const demoKey = await seedDemo({ storage, ...deps, maxRulesPerContext: config.maxRulesPerContext });
    if (demoKey !== undefined) {
      log.info({ tenant: DEMO_TENANT, context: DEMO_CONTEXT }, 'demo tenant created; try the command printed on a line of its own');
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
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`Failed to start: ${message}\n`);
  process.exit(1);
});
