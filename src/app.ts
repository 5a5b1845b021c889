/**
 * buildApp: the whole HTTP service as a Fastify instance, built from a
 * configuration and an open storage. It does not listen; `server.ts` does,
 * and tests listen on port 0.
 *
 * Order matters: timing first (so its clock covers everything), then the
 * error handlers and body parser, then overload shedding (a management
 * request refused for overload costs no key lookup and no budget), then
 * authentication, then the rate limit (it needs the tenant), then metrics and the OpenAPI collector (both learn
 * routes from onRoute, so they come before any route), then the routes.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyHttpOptions, type RawServerDefault, type RouteOptions } from 'fastify';
import type { Registry } from 'prom-client';
import type { AppDeps } from './app-deps.ts';
import { CompileLane } from './pool/compile-lane.ts';
import { ManagementPool } from './pool/management-pool.ts';
import { registerAuth } from './auth/auth-hook.ts';
import { KeyCache } from './auth/key-cache.ts';
import { createKeyService } from './auth/key-service.ts';
import { LastUsedTracker } from './auth/last-used-tracker.ts';
import type { InstanceMetrics } from './cluster/cluster-metrics.ts';
import type { Config } from './config.ts';
import { clientErrorHandler, frameworkErrorHandler, registerErrorHandlers } from './http/error-handler.ts';
import { consoleRoutes, defaultConsoleDir } from './console/console-routes.ts';
import { registerConnectionDrain, type ConnectionDrain } from './http/connection-drain.ts';
import { registerJsonBodyParser } from './http/json-body-parser.ts';
import { nextRequestId } from './http/request-id.ts';
import { deferredChildLogger } from './http/request-logger.ts';
import { registerRequestTiming } from './http/request-timing.ts';
import { watchRouteHooks } from './http/route-hooks.ts';
import { refuseUnstorableText } from './http/storable-text.ts';
import { metricsRoutes } from './metrics/metrics-routes.ts';
import { registerMetrics } from './metrics/register-metrics.ts';
import { ServiceMetrics } from './metrics/service-metrics.ts';
import { registerOpenApi } from './openapi/register-openapi.ts';
import { OverloadMonitor } from './overload/overload-monitor.ts';
import { registerOverloadShedding } from './overload/shed-management.ts';
import { trustProxySetting } from './rate-limit/client-address.ts';
import { registerRateLimit } from './rate-limit/register-rate-limit.ts';
import { apiKeysRoutes } from './routes/api-keys.ts';
import { contextHistoryRoutes } from './routes/context-history.ts';
import { contextFilesRoutes } from './routes/context-files.ts';
import { contextsRoutes } from './routes/contexts.ts';
import { healthRoutes } from './routes/health.ts';
import { payloadSchemaRoutes } from './routes/payload-schemas.ts';
import { ruleCheckRoutes } from './routes/rule-check.ts';
import { ruleTestRoutes } from './routes/rule-test.ts';
import { rulePatchRoutes } from './routes/rule-patch.ts';
import { ruleTableCsvRoutes } from './routes/rule-table-csv.ts';
import { rulesRoutes } from './routes/rules.ts';
import { registerSharedSchemas } from './routes/schemas/shared-schemas.ts';
import { PayloadSchemas } from './rules/payload-schemas.ts';
import { validationRoutes } from './validation/validation-routes.ts';
import { FAST_LANE_URL, installValidationFastLane, type FastLaneStats } from './validation/fast-lane.ts';
import { SampleRecorder, type SampleRecorderOptions } from './sampling/sample-recorder.ts';
import { AuditRetention, type AuditRetentionOptions } from './storage/audit-retention.ts';
import type { Storage } from './storage/types.ts';
import { auditRoutes } from './routes/audit.ts';
import { contextTestsRoutes } from './routes/context-tests.ts';
import { impactRoutes } from './routes/impact.ts';
import { tenantRoutes } from './routes/tenant.ts';
import { registerCacheSync, type CacheSyncHandle } from './sync/register-cache-sync.ts';
import { createLocalEvaluation } from './local-evaluation/local-evaluation.ts';
import { afterInstalls } from './validators/after-installs.ts';
import { localEvaluationRoutes } from './routes/local-evaluation.ts';
import { loadModuleSigner } from './signing/module-signer.ts';
import type { SiblingChannel } from './sync/sibling-channel.ts';
import { TUNING } from './tuning.ts';
import { installValidator } from './validators/compile-validator.ts';
import { ContextUsageRecorder, notingUses } from './validators/usage-recorder.ts';
import { ValidatorCache } from './validators/validator-cache.ts';

export interface BuildAppOptions {
  config: Config;
  /** Open and migrated; the caller closes it after `app.close()`. */
  storage: Storage;
  /** A pino logger to use instead of one built from config.logLevel. */
  logger?: FastifyBaseLogger;
  /** Where the logger built from config.logLevel writes (default stdout); tests capture lines with it. */
  logStream?: { write(line: string): void };
  /**
   * Called once every part of the service is registered, before the app is
   * ready: the last moment hooks and plugins can be added (tests add hooks
   * of their own here).
   */
  beforeReady?: (app: FastifyInstance) => void | Promise<void>;
  /** Called for every route as it is added (tests check that the OpenAPI document covers them all). */
  onRoute?: (route: RouteOptions) => void;
  /** The sibling worker processes to keep in step (cluster workers; set by server.ts). */
  siblings?: SiblingChannel;
  /**
   * The instance's metrics, given this app's registries, when this process
   * is one of several workers (set by server.ts); /metrics serves them.
   */
  instanceMetrics?: (registries: Registry[]) => InstanceMetrics;
  /** Tests shrink the sample queue or change the writer's intervals. */
  sampling?: Pick<SampleRecorderOptions, 'maxQueued' | 'maxQueuedSize' | 'flushIntervalMs' | 'pruneIntervalMs'>;
  /** Tests change the audit retention sweep's interval. */
  auditRetention?: Pick<AuditRetentionOptions, 'sweepIntervalMs'>;
}

/** The parts of the running service that operators' tools and tests reach into. */
export interface AppInternals {
  readonly validators: ValidatorCache;
  readonly keyCache: KeyCache;
  readonly lastUsed: LastUsedTracker;
  /** Which contexts were used, for the next process's warm start. */
  readonly contextUsage: ContextUsageRecorder;
  /** Sampled validations waiting to be written, and their writer. */
  readonly samples: SampleRecorder;
  /** The periodic deletion of audit entries past AUDIT_RETENTION_DAYS. */
  readonly auditRetention: AuditRetention;
  readonly cacheSync: CacheSyncHandle;
  /** Whether the process sheds management requests; `watch` adds a pressure source (a work queue). */
  readonly overload: OverloadMonitor;
  /** Undefined when the fast lane is off (request logging on, or a hook it does not account for: the log says which). */
  readonly fastLane: FastLaneStats | undefined;
  /** Begun by the shutdown at SIGTERM (src/startup/shutdown.ts). */
  readonly drain: ConnectionDrain;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The collaborators handed to every route plugin. */
    deps: AppDeps;
    internals: AppInternals;
  }
}

/**
 * How often Node looks for requests past their timeout: a quarter of the
 * timeout, at most Node's own 30 s. With the default it is the request
 * timeout's own scale, so a slow client is cut off within 1.25 of it
 * rather than up to 30 s later.
 */
function connectionsCheckingInterval(requestTimeoutMs: number): number {
  return Math.min(TUNING.maxConnectionsCheckMs.value, Math.max(TUNING.minConnectionsCheckMs.value, Math.round(requestTimeoutMs / 4)));
}

/**
 * `make(options)`, called with no frame of this bundle on the stack: from a
 * microtask, the function itself the callback. The logger Fastify builds
 * is pino's, and pino names its caller's files with `util.getCallSites()`,
 * which under `--enable-source-maps` (npm start) maps every frame of the
 * bundle on the stack, and the bundle's map, once parsed, is 12 MB of small
 * objects that stay on the main thread for good, marked by every full
 * collection validations wait for. Stack traces of errors are still
 * mapped: the map is parsed the first time one is printed.
 */
function outsideOurStack<O, T>(make: (options: O) => T, options: O): Promise<T> {
  return Promise.resolve(options).then(make);
}

/** Where pino must never print a secret. */
const REDACTED_PATHS = ['req.headers["x-api-key"]', 'headers["x-api-key"]', 'req.headers.authorization'];

/**
 * Builds the service. Resolves once every plugin is registered (`ready`).
 *
 * @example
 * const app = await buildApp({ config: loadConfig(), storage });
 * await app.listen({ port: 3000 });
 */
export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { config, storage } = options;
  const verbose = config.logLevel === 'debug' || config.logLevel === 'trace';
  const app = await outsideOurStack(Fastify as (options: FastifyHttpOptions<RawServerDefault>) => FastifyInstance, {
    ...(options.logger !== undefined
      ? { loggerInstance: options.logger }
      : {
        logger: {
          level: config.logLevel,
          redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
          ...(options.logStream === undefined ? {} : { stream: options.logStream }),
        },
      }),
    // Per-request log lines cost more than validating; they are for debugging.
    logController: new LogController({ disableRequestLogging: !verbose, requestIdLogLabel: 'requestId' }),
    // Request loggers are made when a request first logs, not for every request.
    childLoggerFactory: deferredChildLogger,
    bodyLimit: config.maxBodyBytes,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Behind a load balancer, the client address (per-address rate limit) comes from X-Forwarded-For.
    trustProxy: trustProxySetting(config.trustProxy),
    requestIdHeader: false,
    genReqId: nextRequestId,
    // A request that takes longer than this to arrive in full is dropped
    // (Fastify's default 0 means never: a slow client could hold a socket forever).
    requestTimeout: config.requestTimeoutMs,
    // Node's own options for its server: given the timeout too, its headers timeout is no longer than it.
    http: { requestTimeout: config.requestTimeoutMs, connectionsCheckingInterval: connectionsCheckingInterval(config.requestTimeoutMs) },
    // An over-long path segment (a 120-character rule id) would otherwise be a bare 400 from the
    // router, before authentication; any segment that fits Node's header size limit reaches the route,
    // which answers 401 or 404 like for any other unknown id. No route has a regex parameter to bound.
    routerOptions: { maxParamLength: TUNING.maxPathSegmentLength.value },
    return503OnClosing: false,
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: false, allErrors: true, useDefaults: false },
    },
  });

  if (options.onRoute !== undefined) app.addHook('onRoute', options.onRoute);

  const keyCache = new KeyCache({ find: (keyHash) => storage.apiKeys.findActiveByHash(keyHash) });
  const lastUsed = new LastUsedTracker(storage.apiKeys, app.log);
  const metrics = new ServiceMetrics({ tenantLabels: config.metricsTenantLabels });
  const contextUsage = new ContextUsageRecorder({ store: storage.usage, log: app.log });
  // Live validators compile on threads of their own; this thread installs what they send.
  const compileLane = new CompileLane({ threads: config.compileThreads, workerMemoryMb: config.poolWorkerMemoryMb, observer: metrics.pool });
  const validators = new ValidatorCache({
    rules: storage.rules,
    maxEntries: config.validatorCacheSize,
    maxBytes: config.validatorCacheMb * 1024 * 1024,
    limits: { maxExpressionLength: config.maxExpressionLength, maxTableRows: config.maxTableRows },
    observer: notingUses(metrics.validatorCache, contextUsage),
    compiler: async (ruleset, limits, priority) => installValidator(ruleset, await compileLane.compile(ruleset, limits, priority), metrics.installs),
  });
  metrics.watchValidatorCache(() => validators.size, () => validators.bytes);
  const samples = new SampleRecorder({
    samples: storage.samples, tenants: storage.tenants, log: app.log,
    maxBytesPerTenant: config.samplesMaxBytesPerTenant, maxPayloadBytes: config.sampleMaxPayloadBytes, ...options.sampling,
  });
  metrics.watchSampler(() => samples.stats);
  const overload = new OverloadMonitor({ maxEventLoopDelayMs: config.maxEventLoopDelayMs, log: app.log });
  metrics.watchOverload(() => overload.stats);
  const auditRetention = new AuditRetention({
    audit: storage.audit, retentionDays: config.auditRetentionDays, log: app.log, ...options.auditRetention,
  });
  // Before the timing hooks: a publish's wait for sibling workers counts in Server-Timing.
  const cacheSync = registerCacheSync(app, { storage, validators, keyCache, databaseUrl: config.databaseUrl, siblings: options.siblings });
  const payloadSchemas = new PayloadSchemas({ store: storage.payloadSchemas, limits: { maxExpressionLength: config.maxExpressionLength } });
  const pool = new ManagementPool({
    threads: config.poolThreads,
    workerMemoryMb: config.poolWorkerMemoryMb,
    operationsPerTenant: config.operationsPerTenant,
    timeBudgetMs: config.operationTimeBudgetMs,
    observer: metrics.pool,
  });
  metrics.watchPool(() => ({ queued: pool.queued, running: pool.running, threads: pool.startedThreads }));
  // The threads end with the app; a task still running is stopped.
  app.addHook('onClose', async () => {
    await Promise.all([pool.close(), compileLane.close()]);
  });
  const observed = cacheSync.observe({
    config, storage, validators, keys: createKeyService(storage.apiKeys, keyCache), payloadSchemas, samples, pool,
  });
  // Local evaluation: the module signer, signed modules and the change feed, told of installs here and of notices from elsewhere.
  const signer = await loadModuleSigner(config.signingPrivateKeyFile, storage.signingKeys);
  const local = createLocalEvaluation({ config, storage, signer, log: app.log });
  cacheSync.sync.followRulesets(local.events);
  cacheSync.sync.followContextSettings(local.events);
  keyCache.onEviction((keyId) => local.events.keyChanged(keyId));
  const deps: AppDeps = { ...observed, validators: afterInstalls(observed.validators, (validator) => {
    local.events.changed(validator.tenantId, validator.context, validator.rulesetVersion);
  }) };
  // Held change feeds end first at close, so the server's close never waits on them.
  app.addHook('preClose', (done) => {
    local.events.close();
    done();
  });
  app.decorate('deps', deps);

  registerRequestTiming(app);
  const drain = registerConnectionDrain(app);
  registerErrorHandlers(app);
  registerJsonBodyParser(app);
  registerOverloadShedding(app, overload);
  registerAuth(app, { cache: keyCache, lastUsed });
  const rateLimiter = registerRateLimit(app, { config, tenants: storage.tenants, observer: metrics.rateLimit });
  cacheSync.sync.followTenantSettings(rateLimiter.policies);
  cacheSync.sync.followSamplesPurges(samples);
  registerMetrics(app, metrics);
  registerSharedSchemas(app);
  await registerOpenApi(app);
  // Before the route is added: at ready, every hook of the single validation must be one the fast lane accounts for.
  const validationHooks = watchRouteHooks(app, 'POST', FAST_LANE_URL);

  await app.register(healthRoutes, { deps, overload, drain });
  const instanceMetrics = options.instanceMetrics?.(metrics.registries);
  // eslint-disable-next-line @typescript-eslint/require-await -- Fastify runs a hook without a done parameter only when it returns a promise
  if (instanceMetrics !== undefined) app.addHook('onClose', async () => instanceMetrics.close());
  await app.register(metricsRoutes, { metrics, instance: instanceMetrics });
  // POST /rules/test screens its rule for text the database cannot store itself: its payload is never stored.
  // POST /rules/check answers such text as one of the rule's errors, not as a 400.
  // The impact report and the sample route store nothing they are sent.
  for (const routes of [validationRoutes, ruleTestRoutes, ruleCheckRoutes, impactRoutes]) await app.register(routes, { prefix: '/api/v1', deps });
  // Local evaluation stores only what the sample writer keeps as sent (a json column), and a boolean.
  await app.register(localEvaluationRoutes, { prefix: '/api/v1', deps, local, policyOf: (tenantId) => rateLimiter.policies.get(tenantId) });
  // Routes that store what they are sent: text PostgreSQL cannot keep is a 400 naming it, not a 500.
  await app.register(async (management) => {
    management.addHook('preValidation', refuseUnstorableText);
    const stored = [
      rulesRoutes, rulePatchRoutes, ruleTableCsvRoutes, contextsRoutes, contextTestsRoutes, contextHistoryRoutes,
      contextFilesRoutes, payloadSchemaRoutes, apiKeysRoutes,
    ];
    for (const routes of stored) {
      await management.register(routes, { prefix: '/api/v1', deps });
    }
    await management.register(tenantRoutes, { prefix: '/api/v1', deps, policies: rateLimiter.policies });
    await management.register(auditRoutes, { prefix: '/api/v1', deps });
  });
  // The web console: static files and headers of its own, in its own scope (no /api/v1 route sees its hook).
  await app.register(consoleRoutes, { dir: config.consoleDir ?? defaultConsoleDir() });

  const internals: { -readonly [K in keyof AppInternals]: AppInternals[K] } = {
    validators, keyCache, lastUsed, contextUsage, samples, auditRetention, cacheSync, overload, fastLane: undefined, drain,
  };
  app.decorate('internals', internals);

  lastUsed.start();
  contextUsage.start();
  samples.start();
  auditRetention.start();
  // From the moment it serves: building the app and the warm start hold the loop, and no request waits for them.
  app.addHook('onListen', (done) => {
    overload.start();
    done();
  });
  app.addHook('onClose', async () => {
    overload.stop();
    // Best effort: what is queued is written if the database answers.
    await Promise.all([lastUsed.stop(), contextUsage.stop(), samples.stop(), auditRetention.stop()]);
  });
  await options.beforeReady?.(app);
  await app.ready();

  // Once ready, the hooks are final. With request logging on (debug, trace), every request goes through
  // Fastify, which logs it; a hook the fast lane does not account for would not run for the requests it answers.
  const fastLaneOff = verbose ? `request logging is on (LOG_LEVEL=${config.logLevel})` : validationHooks.unaccountedHook();
  if (fastLaneOff === undefined) {
    internals.fastLane = installValidationFastLane(app, {
      keyCache, lastUsed, rateLimiter, metrics, drain, bodyLimit: config.maxBodyBytes,
      core: { validators: deps.validators, maxPayloadDepth: config.maxPayloadDepth, maxAnswerBytes: config.maxAnswerBytes, samples },
    });
  } else {
    app.log.info(`validation fast lane off: ${fastLaneOff}`);
  }
  return app;
}
