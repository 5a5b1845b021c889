/**
 * Load shedding: while the process is overloaded (overload-monitor.ts),
 * management requests (everything under /api/v1 but the three validation
 * operations) are refused with 503 SERVICE_UNAVAILABLE and Retry-After, so
 * the event loop goes to validations. Validations, health, metrics, the
 * docs and the console are never refused for overload.
 *
 * The hook is the app's first after timing: a refused request costs no key
 * lookup and no rate-limit budget. It decides by the matched route's
 * pattern, not the raw URL, which a client could spell differently; it
 * reads the pattern only while shedding (Fastify builds the route options
 * object on each read), so otherwise its cost is one field read.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { AUTHENTICATED_PREFIX } from '../auth/auth-hook.ts';
import { PROBLEMS } from '../errors.ts';
import { sendProblem } from '../http/error-handler.ts';
import { accountedForByFastLane } from '../http/route-hooks.ts';
import type { OverloadMonitor } from './overload-monitor.ts';

/** Routes under this prefix are the data plane: never shed. */
export const VALIDATION_PREFIX = `${AUTHENTICATED_PREFIX}/validation/`;

/**
 * True for a route pattern that is a management operation: under /api/v1,
 * not a validation. Unmatched requests (no pattern) are not.
 *
 * @example
 * isManagementRoute('/api/v1/rules/:id'); // true
 * isManagementRoute('/api/v1/validation/validate'); // false
 */
export function isManagementRoute(pattern: string | undefined): boolean {
  return pattern !== undefined && pattern.startsWith(`${AUTHENTICATED_PREFIX}/`) && !pattern.startsWith(VALIDATION_PREFIX);
}

/**
 * Adds the shedding hook. Call it on the root instance before the
 * authentication hook.
 *
 * @example
 * registerOverloadShedding(app, monitor);
 * registerAuth(app, { cache, lastUsed });
 */
export function registerOverloadShedding(app: FastifyInstance, monitor: OverloadMonitor): void {
  // The fast lane answers only the single validation, which this hook never refuses.
  app.addHook('onRequest', accountedForByFastLane(function shedManagementWhenOverloaded(
    request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction,
  ): void {
    if (!monitor.shedding || !isManagementRoute(request.routeOptions.url)) {
      done();
      return;
    }
    monitor.noteShed();
    sendProblem(request, reply, PROBLEMS.instanceOverloaded(monitor.reason));
  }));
}
