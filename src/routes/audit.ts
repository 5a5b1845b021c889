/**
 * GET /audit (docs/api.md): the tenant's audit trail, newest first, with
 * filters and cursor paging. Entries are written by the stores in the
 * transactions of their changes; no route changes or deletes one. Admin
 * keys only.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import { operation } from '../openapi/operation.ts';
import type { AuditAction } from '../storage/types.ts';
import { auditQuerySchema } from './schemas/audit-schemas.ts';
import { pageSizeOf, tenantOf } from './schemas/route-helpers.ts';
import { sharedRef } from './schemas/shared-schemas.ts';

interface AuditQuerystring {
  context?: string;
  action?: AuditAction;
  since?: string;
  limit?: string;
  cursor?: string;
}

/**
 * Registers GET /audit. Mounted by buildApp under /api/v1 with `{ deps }`.
 *
 * @example
 * await app.register(auditRoutes, { prefix: '/api/v1', deps });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const auditRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  app.get<{ Querystring: AuditQuerystring }>('/audit', {
    config: { role: 'admin' },
    schema: {
      ...operation({
        id: 'listAudit',
        tag: 'Tenant',
        summary: 'Read the audit trail',
        description: 'Every change made to the tenant through the API or the CLI, newest first: who made it, when, and the changed '
          + 'resource before and after. Filter by `context`, `action` and `since`; page with `limit` and `cursor`.',
        answers: { 200: 'A page of entries.' },
      }),
      querystring: auditQuerySchema,
      response: { 200: sharedRef('AuditPage') },
    },
  }, async (request) => {
    const { context, action, since, cursor } = request.query;
    const limit = pageSizeOf(request.query.limit);
    return deps.storage.audit.list(tenantOf(request), {
      context, action, limit, cursor, since: since === undefined ? undefined : new Date(since),
    });
  });
};
