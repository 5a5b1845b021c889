/**
 * Small helpers shared by the management routes: who the tenant is, and how
 * ids that cannot exist are answered.
 */
import type { FastifyRequest } from 'fastify';
import { PROBLEMS, ProblemError } from '../../errors.ts';
import type { ChangeOrigin } from '../../storage/types.ts';
import { TUNING } from '../../tuning.ts';
import { CONTEXT_REGEX } from './rule-schemas.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * `:id` of the rule and API-key routes. Any string passes the schema: an id
 * that cannot exist is unknown (404, checked in the handler), not a bad
 * request (400).
 */
export const idParamsSchema = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', description: 'The id the server assigned; an id that is not the tenant\'s is 404.', examples: ['0f8d6c3e-8a47-4b8e-9a55-3b1c2d4e5f60'] } },
} as const;

/**
 * The tenant of the request, taken from the authenticated key and never
 * from the body or the URL (SECURITY-NOTES 4, API1).
 *
 * @example
 * const tenantId = tenantOf(request);
 */
export function tenantOf(request: FastifyRequest): string {
  if (request.auth === null || request.auth === undefined) {
    // The auth hook runs before every /api/v1 route; reaching here means the
    // plugin was registered outside it, which must never answer with data.
    throw new ProblemError(PROBLEMS.notAuthenticated());
  }
  return request.auth.tenantId;
}

/**
 * The `limit` of a list's query string: the default page size when absent,
 * else 1 to the largest page (TUNING); anything else is a 400 naming it.
 *
 * @example
 * const limit = pageSizeOf(request.query.limit);
 */
export function pageSizeOf(raw: string | undefined): number {
  if (raw === undefined) return TUNING.defaultPageSize.value;
  const limit = /^[0-9]{1,9}$/.test(raw) ? Number(raw) : 0;
  const max = TUNING.maxPageSize.value;
  if (limit < 1 || limit > max) {
    throw new ProblemError(PROBLEMS.invalidQuery([{ path: 'limit', message: `must be between 1 and ${max}` }]));
  }
  return limit;
}

/**
 * The context name of a URL (`/contexts/:context/...`). A name no context
 * can have is simply an unknown context: 404 CONTEXT_NOT_FOUND.
 *
 * @example
 * const context = contextOf(request.params);
 */
export function contextOf(params: { context: string }): string {
  if (!CONTEXT_REGEX.test(params.context)) throw new ProblemError(PROBLEMS.impossibleContextName());
  return params.context;
}

/**
 * Who is making the change a request asks for, for its audit entry: the
 * authenticated key (id, name, role) and the request's id.
 *
 * @example
 * await storage.tenants.setRateLimit(tenantId, limit, originOf(request));
 */
export function originOf(request: FastifyRequest): ChangeOrigin {
  if (request.auth === null || request.auth === undefined) throw new ProblemError(PROBLEMS.notAuthenticated());
  const { keyId, keyName, role } = request.auth;
  return { actor: { keyId, keyName, role }, requestId: request.id };
}

/**
 * True for a syntactically valid UUID. Ids that are not UUIDs are answered
 * 404 before they reach the database: PostgreSQL would refuse to cast them
 * (a 500), and to a caller they are simply unknown ids.
 */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
