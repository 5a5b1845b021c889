/**
 * Tenant settings routes (docs/api.md): read the tenant's settings, set or
 * reset its rate-limit budget (the same change as the CLI's `tenant
 * rate-limit`), set its traffic sampling, delete its samples, set the browser
 * origins allowed on local evaluation's routes. Storage sends
 * a change notice with a settings change, so every instance reads the new
 * budget and sampling rate within about a second, and this process reads
 * them before answering. Admin keys only.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import { operation } from '../openapi/operation.ts';
import type { TenantSettingsFollower } from '../sync/cache-sync.ts';
import { originOf, tenantOf } from './schemas/route-helpers.ts';
import { sharedRef } from './schemas/shared-schemas.ts';
import { samplesDeletedSchema, setRateLimitBodySchema, setSamplingBodySchema } from './schemas/tenant-schemas.ts';
import { TUNING } from '../tuning.ts';
import { corsOriginsSchema } from './schemas/local-evaluation-schemas.ts';

const adminOnly = { role: 'admin' } as const;

interface SetRateLimitBody {
  max?: number;
  windowMs?: number;
  default?: true;
}

interface SetSamplingBody {
  rate: number;
  maxSamples?: number;
  retentionHours?: number;
}

export interface TenantRoutesOptions {
  deps: AppDeps;
  /** The rate limiter's policies (which carry the sampling rate), read again after a change here. */
  policies: TenantSettingsFollower;
}

/**
 * Registers /tenant, /tenant/rate-limit, /tenant/sampling and
 * /tenant/samples. Mounted by buildApp under /api/v1.
 *
 * @example
 * await app.register(tenantRoutes, { prefix: '/api/v1', deps, policies: rateLimiter.policies });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const tenantRoutes: FastifyPluginAsync<TenantRoutesOptions> = async (app, { deps, policies }) => {
  const { storage, config } = deps;

  const tenantView = async (tenantId: string) => {
    const [own, sampling, corsOrigins] = await Promise.all([
      storage.tenants.getRateLimit(tenantId), storage.tenants.getSampling(tenantId), storage.tenants.getCorsOrigins(tenantId),
    ]);
    const limit = own ?? { max: config.rateLimitMax, windowMs: config.rateLimitWindowMs };
    return { id: tenantId, rateLimit: { ...limit, default: own === null }, sampling, corsOrigins };
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

  app.put<{ Body: SetSamplingBody }>('/tenant/sampling', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'setTenantSampling',
        tag: 'Tenant',
        summary: 'Set the tenant\'s traffic sampling',
        description: 'Records that share (`rate`, 0 to 1) of the tenant\'s single validations and batch items, with their payload and '
          + 'verdict, for impact reports; keeps at most `maxSamples` per context for `retentionHours`, and at most the service\'s '
          + 'byte budget per tenant (oldest first); payloads over the service\'s size bound are not sampled. `{ "rate": 0 }` turns it off. '
          + 'Every instance applies it within about a second; this one before answering.',
        answers: { 200: 'The sampling settings now in force.' },
      }),
      body: setSamplingBodySchema,
      response: { 200: sharedRef('TenantSampling') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const { rate, maxSamples, retentionHours } = request.body;
    const settings = {
      rate,
      maxSamples: maxSamples ?? TUNING.samplingDefaultMaxSamples.value,
      retentionHours: retentionHours ?? TUNING.samplingDefaultRetentionHours.value,
    };
    await storage.tenants.setSampling(tenantId, settings, originOf(request));
    await policies.refresh(tenantId);
    return settings;
  });

  app.put<{ Body: { origins: string[] } }>('/tenant/cors', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'setTenantCorsOrigins',
        tag: 'Tenant',
        summary: 'Set the browser origins allowed on local evaluation\'s routes',
        description: 'Replaces the list of origins (`https://host[:port]`) whose pages may call the validator module, its change feed, the '
          + 'samples and the signing key across origins (CORS); no other route answers cross-origin requests. `{ "origins": [] }` allows none. '
          + 'Every instance applies it within about a second; this one before answering. Audited as `tenant.cors`.',
        answers: { 200: 'The origins now allowed.' },
      }),
      body: corsOriginsSchema,
      response: { 200: corsOriginsSchema },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    await storage.tenants.setCorsOrigins(tenantId, request.body.origins, originOf(request));
    await policies.refresh(tenantId);
    return { origins: request.body.origins };
  });

  app.delete('/tenant/samples', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'deleteTenantSamples',
        tag: 'Tenant',
        summary: 'Delete every sample of the tenant',
        description: 'Deletes the recorded samples of every context of the tenant now, and those recorded before now that any instance has '
          + 'not written yet: none of them is stored afterwards. Sampling stays as set: turn it off first to record nothing more. '
          + 'Only samples are deleted: stored tests keep their payloads, audit entries about stored tests keep the test lists (whole up '
          + `to ${TUNING.auditMaxValueBytes.value} bytes of JSON each, larger ones as size and SHA-256) for the audit retention, rules and payload schemas keep their `
          + 'values, and backups taken before keep the samples. Logs never hold payloads.',
        answers: { 200: 'How many samples were deleted.' },
      }),
      response: { 200: samplesDeletedSchema },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    // The store records the purge time: no sample recorded before it is stored afterwards by any instance, and
    // every instance drops what it queues of the tenant on the notice; this one before answering.
    const { deleted, purgedAt } = await storage.samples.deleteAll(tenantId, originOf(request));
    await deps.samples.purged(tenantId, purgedAt.getTime());
    return { deleted };
  });
};
