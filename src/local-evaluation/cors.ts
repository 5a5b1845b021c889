/**
 * CORS for local evaluation's routes only (docs/operations.md, "CORS"):
 * the module, the change feed, the samples and the signing key. No other
 * route sends a CORS header.
 *
 * A preflight carries no key, so it cannot know the tenant: it is answered
 * for any origin, and says only that the browser may send the request. The
 * request itself carries the key: its Origin must be one the key's tenant
 * allows (PUT /tenant/cors), or it is refused 403 before anything is done,
 * and only an allowed origin gets Access-Control-Allow-Origin, so no other
 * page can read an answer. Requests without an Origin (servers, same-origin
 * GETs) are not cross-origin and pass.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { PROBLEMS } from '../errors.ts';
import { sendProblem } from '../http/error-handler.ts';
import type { RateLimitPolicy } from '../rate-limit/tenant-policies.ts';

/** The headers a page may send to these routes. */
const ALLOWED_HEADERS = 'x-api-key, x-tenant-id, content-type, if-none-match, last-event-id';
/** The answer headers a page may read. */
const EXPOSED_HEADERS = 'etag, x-ruleset-version, x-rules-signature, x-rules-signing-key-id, retry-after, '
  + 'ratelimit-limit, ratelimit-remaining, ratelimit-reset, x-request-id';
/** How long a browser may keep a preflight's answer, in seconds. */
const PREFLIGHT_MAX_AGE = '600';

/** Where a tenant's allowed origins are read: the tenant's cached policy. */
export type PolicyOf = (tenantId: string) => RateLimitPolicy | Promise<RateLimitPolicy>;

/** The route onRequest hook of local evaluation's routes (after authentication). */
export function corsCheck(policyOf: PolicyOf) {
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    const origin = request.headers.origin;
    if (origin === undefined || request.auth === null || isSameOrigin(request, origin)) {
      done();
      return;
    }
    const decide = (policy: RateLimitPolicy): void => {
      if (!policy.corsOrigins.includes(origin)) {
        sendProblem(request, reply, PROBLEMS.corsOriginNotAllowed(origin));
        return;
      }
      reply.header('access-control-allow-origin', origin);
      reply.header('access-control-expose-headers', EXPOSED_HEADERS);
      reply.header('vary', 'Origin');
      done();
    };
    const policy = policyOf(request.auth.tenantId);
    if (policy instanceof Promise) policy.then(decide, (error: unknown) => done(error as Error));
    else decide(policy);
  };
}

/** The answer to a preflight (OPTIONS) of one of these routes. */
export function answerPreflight(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const origin = request.headers.origin;
  if (origin !== undefined) {
    reply.header('access-control-allow-origin', origin);
    reply.header('access-control-allow-methods', 'GET, POST');
    reply.header('access-control-allow-headers', ALLOWED_HEADERS);
    reply.header('access-control-max-age', PREFLIGHT_MAX_AGE);
  }
  reply.header('vary', 'Origin');
  return reply.code(204).send();
}

/** An Origin naming the host the request was sent to is the page's own: no CORS involved. */
function isSameOrigin(request: FastifyRequest, origin: string): boolean {
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}
