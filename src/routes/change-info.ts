/**
 * Who makes a change of what is live, and why, as the lifecycle routes
 * hand it to storage: the authenticated API key (its name is looked up
 * where the change is recorded), the optional note of the body, and the
 * origin its audit entry records.
 */
import type { FastifyRequest } from 'fastify';
import type { ChangeInfo } from '../storage/types.ts';
import { originOf } from './schemas/route-helpers.ts';

/**
 * The change info of a request; `body` is the request's body, absent when
 * none was sent (publish needs none).
 *
 * @example
 * storage.rules.publishContext(tenantId, context, compile, changeInfoOf(request, request.body));
 */
export function changeInfoOf(request: FastifyRequest, body?: { note?: string } | null): ChangeInfo {
  return { actorKeyId: request.auth?.keyId ?? null, note: body?.note ?? null, origin: originOf(request) };
}

/**
 * preValidation of the routes whose body is optional (publish): no body
 * reads as `{}`, so the body schema checks what was sent and accepts
 * nothing sent.
 *
 * @example
 * app.post('/contexts/:context/publish', { schema: { body: publishBodySchema }, preValidation: optionalBody }, handler);
 */
export function optionalBody(request: FastifyRequest, _reply: unknown, done: () => void): void {
  request.body ??= {};
  done();
}
