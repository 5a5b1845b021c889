/**
 * Keeps this process's caches consistent with every other process on the
 * same database (docs/api.md):
 *
 * - PostgreSQL: a ChangeListener applies notices as they arrive, and every
 *   TUNING.reconcileIntervalMs a consistency check pings the listener connection
 *   and compares the caches with the database (CacheSync.reconcile), so a
 *   lost notice leaves a cache stale for at most about that long. The same
 *   check runs after every (re)connection of the listener.
 * - PGlite: one process owns the database, so there is nothing to follow.
 * - Worker processes (WORKERS > 1): installs and revocations are also sent
 *   to the sibling workers, and the response to the request that made them
 *   waits (at most about a second) until the siblings have applied them.
 */
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import type { AppDeps, KeyService, ValidatorService } from '../app-deps.ts';
import type { KeyCache } from '../auth/key-cache.ts';
import { accountedForByFastLane } from '../http/route-hooks.ts';
import { afterInstalls } from '../validators/after-installs.ts';
import type { Storage } from '../storage/types.ts';
import { TUNING } from '../tuning.ts';
import type { ValidatorCache } from '../validators/validator-cache.ts';
import { CacheSync } from './cache-sync.ts';
import { ChangeListener } from './change-listener.ts';
import type { ChangeNotice } from './change-notice.ts';
import type { SiblingChannel } from './sibling-channel.ts';

export interface CacheSyncPluginOptions {
  storage: Storage;
  validators: ValidatorCache;
  keyCache: KeyCache;
  /** Listen for changes on this PostgreSQL server; undefined on PGlite. */
  databaseUrl: string | undefined;
  /** The sibling workers of this instance, in cluster mode. */
  siblings?: SiblingChannel;
  reconcileIntervalMs?: number;
}

/** What buildApp keeps of the cache sync. */
export interface CacheSyncHandle {
  readonly sync: CacheSync;
  /** Undefined on PGlite. */
  readonly listener: ChangeListener | undefined;
  /**
   * The deps with installs and key revocations also sent to the sibling
   * workers (the deps unchanged outside cluster mode).
   */
  observe(deps: AppDeps): AppDeps;
}

/**
 * Registers the listener, the periodic consistency check and, in cluster
 * mode, the wait for sibling workers. Call before the routes are registered
 * and before request timing, so the wait counts in Server-Timing.
 *
 * @example
 * const cacheSync = registerCacheSync(app, { storage, validators, keyCache, databaseUrl: config.databaseUrl });
 * const deps = cacheSync.observe({ config, storage, validators, keys });
 */
export function registerCacheSync(app: FastifyInstance, options: CacheSyncPluginOptions): CacheSyncHandle {
  const { storage, siblings } = options;
  const log = app.log.child({ component: 'cache-sync' });
  const sync = new CacheSync({
    rules: storage.rules,
    apiKeys: storage.apiKeys,
    validators: options.validators,
    keyCache: options.keyCache,
    log,
  });

  let checking: Promise<void> | undefined;
  const check = (): Promise<void> => {
    checking ??= sync
      .reconcile()
      .then(
        () => {},
        (err: unknown) => log.warn({ err }, 'consistency check failed; retrying at the next one'),
      )
      .finally(() => {
        checking = undefined;
      });
    return checking;
  };

  const listener = options.databaseUrl === undefined
    ? undefined
    : new ChangeListener({
      connectionString: options.databaseUrl,
      onNotice: (notice) => void sync.apply(notice),
      onConnected: () => void check(),
      log,
    });

  if (listener !== undefined) {
    let timer: NodeJS.Timeout | undefined;
    app.addHook('onReady', async () => {
      let wait: NodeJS.Timeout | undefined;
      await Promise.race([
        listener.start(),
        new Promise((resolve) => {
          wait = setTimeout(resolve, TUNING.firstListenWaitMs.value);
        }),
      ]);
      clearTimeout(wait);
      timer = setInterval(() => {
        void listener.check();
        void check();
      }, options.reconcileIntervalMs ?? TUNING.reconcileIntervalMs.value);
      timer.unref();
    });
    app.addHook('onClose', async () => {
      clearInterval(timer);
      await listener.stop();
      await checking;
    });
  }

  const pending = new Set<Promise<void>>();
  const announce = (notice: ChangeNotice): Promise<void> => {
    if (siblings === undefined) return Promise.resolve();
    const sent = siblings.broadcast(notice);
    pending.add(sent);
    void sent.finally(() => pending.delete(sent));
    return sent;
  };

  if (siblings !== undefined) {
    siblings.onNotice((notice) => sync.apply(notice));
    // Installs happen inside route handlers, which return before knowing the
    // siblings' answer; the response waits here instead. Validation routes
    // never change anything, so they never wait.
    // Accounted for by the validation fast lane: it answers only a validator-role route, which never waits.
    app.addHook('onSend', accountedForByFastLane<onSendHookHandler>((request, _reply, payload, done) => {
      if (pending.size === 0 || request.routeOptions.config?.role === 'validator') {
        done(null, payload);
        return;
      }
      void Promise.all(pending).then(() => done(null, payload));
    }));
    // eslint-disable-next-line @typescript-eslint/require-await -- Fastify runs a hook without a done parameter only when it returns a promise
    app.addHook('onClose', async () => {
      siblings.close();
    });
  }

  return {
    sync,
    listener,
    observe(deps) {
      if (siblings === undefined) return deps;
      return { ...deps, validators: announceInstalls(deps.validators, announce), keys: announceRevocations(deps.keys, announce) };
    },
  };
}

function announceInstalls(inner: ValidatorService, announce: (notice: ChangeNotice) => Promise<void>): ValidatorService {
  return afterInstalls(inner, (validator) => {
    void announce({ kind: 'ruleset', tenantId: validator.tenantId, context: validator.context, rulesetVersion: validator.rulesetVersion });
  });
}

function announceRevocations(inner: KeyService, announce: (notice: ChangeNotice) => Promise<void>): KeyService {
  return {
    create: inner.create.bind(inner),
    async revoke(tenantId, keyId, origin) {
      const record = await inner.revoke(tenantId, keyId, origin);
      await announce({ kind: 'key', tenantId, keyId });
      return record;
    },
  };
}
