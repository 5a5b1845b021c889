/**
 * Tenant settings routes (docs/api.md): read the tenant's settings, set or
 * reset its rate-limit budget. The same change as the CLI's `tenant
 * rate-limit`, over HTTP: storage sends a change notice with it, so every
 * instance reads the new budget within about a second, and this process
 * reads it before answering. Admin keys only.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import { operation } from '../openapi/operation.ts';
import type { TenantSettingsFollower } from '../sync/cache-sync.ts';
import { originOf, tenantOf } from './schemas/route-helpers.ts';
import { sharedRef } from './schemas/shared-schemas.ts';
import { setRateLimitBodySchema } from './schemas/tenant-schemas.ts';

const adminOnly = { role: 'admin' } as const;

interface SetRateLimitBody {
  max?: number;
  windowMs?: number;
  default?: true;
}

export interface TenantRoutesOptions {
  deps: AppDeps;
  /** The rate limiter's policies, read again after a change here. */
  policies: TenantSettingsFollower;
}

/**
 * Registers /tenant and /tenant/rate-limit. Mounted by buildApp under /api/v1.
 *
 * @example
 * await app.register(tenantRoutes, { prefix: '/api/v1', deps, policies: rateLimiter.policies });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const tenantRoutes: FastifyPluginAsync<TenantRoutesOptions> = async (app, { deps, policies }) => {
  const { storage, config } = deps;

  const tenantView = async (tenantId: string) => {
    const own = await storage.tenants.getRateLimit(tenantId);
    const limit = own ?? { max: config.rateLimitMax, windowMs: config.rateLimitWindowMs };
    return { id: tenantId, rateLimit: { ...limit, default: own === null }, sampling: { rate: 0 } };
  };

  app.get('/tenant', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'getTenant',
        tag: 'Tenant',
        summary: 'Read the tenant\'s settings',
        description: 'The tenant of the calling key: its rate-limit budget (its own or the default) and traffic sampling.',
        answers: { 200: 'The tenant and its settings.' },
      }),
      response: { 200: sharedRef('Tenant') },
    },
  }, async (request) => tenantView(tenantOf(request)));

  app.put<{ Body: SetRateLimitBody }>('/tenant/rate-limit', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'setTenantRateLimit',
        tag: 'Tenant',
        summary: 'Set the tenant\'s rate-limit budget',
        description: 'Gives the tenant a budget of its own (`max` requests per `windowMs` per client address), or puts it back on the '
          + 'service\'s default with `{ "default": true }`. Every instance applies it within about a second; this one before answering.',
        answers: { 200: 'The budget now in force.' },
      }),
      body: setRateLimitBodySchema,
      response: { 200: sharedRef('TenantRateLimit') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const { max, windowMs } = request.body;
    const reset = request.body.default === true;
    if (reset && (max !== undefined || windowMs !== undefined)) {
      throw new ProblemError(PROBLEMS.invalidBody([{ path: 'default', message: 'cannot be given with max or windowMs' }]));
    }
    if (!reset && (max === undefined || windowMs === undefined)) {
      const missing = max === undefined ? 'max' : 'windowMs';
      throw new ProblemError(PROBLEMS.invalidBody([{ path: missing, message: 'is required, with the other of max and windowMs, unless default is true' }]));
    }
    await storage.tenants.setRateLimit(tenantId, reset ? null : { max: max!, windowMs: windowMs! }, originOf(request));
    await policies.refresh(tenantId);
    return (await tenantView(tenantId)).rateLimit;
  });
};
