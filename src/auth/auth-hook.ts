/**
 * Authentication and the role check for everything under /api/v1.
 *
 * The tenant comes from the key; X-Tenant-Id is only an assertion that must
 * match it. Every way of failing gets the byte-identical 401, so a caller
 * learns nothing about which part was wrong (docs/api.md). The common case,
 * a key already in memory, completes synchronously.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { TENANT_ID_PATTERN } from '../config.ts';
import { PROBLEMS } from '../errors.ts';
import { sendProblem } from '../http/error-handler.ts';
import { accountedForByFastLane } from '../http/route-hooks.ts';
import { isWellFormedApiKey } from './api-key.ts';
import type { CachedKey, KeyCache } from './key-cache.ts';
import type { LastUsedTracker } from './last-used-tracker.ts';

/** Paths under this prefix need a key. */
export const AUTHENTICATED_PREFIX = '/api/v1';

export interface AuthOptions {
  cache: KeyCache;
  lastUsed: LastUsedTracker;
}

const UNAUTHORIZED = PROBLEMS.unauthorized();
const FORBIDDEN = PROBLEMS.roleForbidden();
const CLIENT_FORBIDDEN = PROBLEMS.clientRoleForbidden();

/** Registers `request.auth` and the onRequest hook that sets it. */
export function registerAuth(app: FastifyInstance, options: AuthOptions): void {
  const { cache, lastUsed } = options;
  app.decorateRequest('auth', null);

  const admit = (
    request: FastifyRequest,
    reply: FastifyReply,
    done: HookHandlerDoneFunction,
    key: CachedKey | null,
    tenantId: string,
    keyHash: string,
  ): void => {
    if (key === null) {
      sendProblem(request, reply, UNAUTHORIZED);
      return;
    }
    if (key.tenantId !== tenantId) {
      // A real key with the wrong tenant costs what an invented key costs.
      const pending = cache.mismatch(keyHash, tenantId);
      if (pending === null) sendProblem(request, reply, UNAUTHORIZED);
      else pending.then(() => sendProblem(request, reply, UNAUTHORIZED), (error: unknown) => done(error as Error));
      return;
    }
    authorize(request, done, key, reply);
  };

  /** The key is real and belongs to the tenant named: record it. */
  const authorize = (request: FastifyRequest, done: HookHandlerDoneFunction, key: CachedKey, reply: FastifyReply): void => {
    // A client key may call local evaluation's routes only; only its requests look up the route's options.
    if (key.role === 'client' && !admitsClients(request)) {
      sendProblem(request, reply, CLIENT_FORBIDDEN);
      return;
    }
    // The cached key itself is the request's identity (read-only): no copy per request.
    request.auth = key;
    lastUsed.record(key.keyId);
    done();
  };

  // The role check is a hook of each admin-only route, added when the route
  // is, so a validation request does not look up its route's options (a
  // new object per call) to learn that it needs no check. Route hooks run
  // after the app's: authentication and the tenant's rate limit come first.
  // Unknown routes have no role: an authenticated caller gets the 404.
  // Client keys are refused by the app's hook below wherever the route is not local evaluation's.
  app.addHook('onRoute', (route) => {
    const role = (route.config as { role?: string } | undefined)?.role ?? 'admin';
    if (!isAuthenticatedPath(route.url)) return;
    const check = role === 'admin' ? requireAdmin : role === 'client' ? requireAdminOrClient : undefined;
    if (check === undefined) return;
    const existing = route.onRequest;
    route.onRequest = existing === undefined ? [check] : Array.isArray(existing) ? [...existing, check] : [existing, check];
  });

  // The fast lane takes only what this hook's fast path admits (a recalled key of the tenant named) and records the use too.
  app.addHook('onRequest', accountedForByFastLane((request, reply, done) => {
    // A CORS preflight carries no key (browsers never send one): only local evaluation's routes answer them.
    if (!isAuthenticatedPath(request.url) || (request.method === 'OPTIONS' && request.routeOptions.config?.preflight === true)) {
      done();
      return;
    }
    const apiKey = request.headers['x-api-key'];
    const tenantId = request.headers['x-tenant-id'];
    // Fast path: this exact key was presented before, is known, and the
    // tenant named is its own, so every check below would pass. Any other
    // case, every refusal included, takes the full path and its timing.
    if (typeof apiKey === 'string') {
      const recalled = cache.recall(apiKey);
      if (recalled !== undefined && recalled.tenantId === tenantId) {
        authorize(request, done, recalled, reply);
        return;
      }
    }
    if (
      typeof apiKey !== 'string' ||
      typeof tenantId !== 'string' ||
      !TENANT_ID_PATTERN.test(tenantId) ||
      !isWellFormedApiKey(apiKey)
    ) {
      sendProblem(request, reply, UNAUTHORIZED);
      return;
    }
    const keyHash = cache.keyHashOf(apiKey);
    const found = cache.lookup(keyHash);
    if (found === null || !(found instanceof Promise)) {
      admit(request, reply, done, found, tenantId, keyHash);
      return;
    }
    found.then(
      (key) => admit(request, reply, done, key, tenantId, keyHash),
      (error: unknown) => done(error as Error),
    );
  }));
}

/** The onRequest hook of admin-only routes: a validator key gets 403. */
function requireAdmin(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (request.auth !== null && request.auth.role !== 'admin') {
    sendProblem(request, reply, FORBIDDEN);
    return;
  }
  done();
}

/** The onRequest hook of local evaluation's routes (role `client`): a validator key gets 403. */
function requireAdminOrClient(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (request.auth !== null && request.auth.role === 'validator') {
    sendProblem(request, reply, FORBIDDEN);
    return;
  }
  done();
}

/** Routes a client key may call: local evaluation's (`client`), those open to every key (`any`), and unknown ones (their 404). */
function admitsClients(request: FastifyRequest): boolean {
  if (request.is404) return true;
  const role = request.routeOptions.config?.role;
  return role === 'client' || role === 'any';
}

/** True for `/api/v1` and everything below it, whatever the query string. */
export function isAuthenticatedPath(url: string): boolean {
  if (!url.startsWith(AUTHENTICATED_PREFIX)) return false;
  const next = url.charCodeAt(AUTHENTICATED_PREFIX.length);
  // End of string (NaN), '/', '?' or '#'.
  return Number.isNaN(next) || next === 47 || next === 63 || next === 35;
}
