/**
 * Who makes a change of what is live, and why, as the lifecycle routes
 * hand it to storage: the authenticated API key (its name is looked up
 * where the change is recorded) and the optional note of the body.
 */
import type { FastifyRequest } from 'fastify';
import type { ChangeInfo } from '../storage/types.ts';

/**
 * The change info of a request; `body` is the request's body, absent when
 * none was sent (publish needs none).
 *
 * @example
 * storage.rules.publishContext(tenantId, context, compile, changeInfoOf(request, request.body));
 */
export function changeInfoOf(request: FastifyRequest, body?: { note?: string } | null): ChangeInfo {
  return { actorKeyId: request.auth?.keyId ?? null, note: body?.note ?? null };
}
