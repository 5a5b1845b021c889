/**
 * Health routes for load balancers and orchestrators; no authentication.
 * Liveness says the process serves HTTP; readiness also needs the database
 * (migrations ran before the server started listening) and a process that
 * is not overloaded (src/overload/overload-monitor.ts), so a load balancer
 * sends new traffic to other instances while this one catches up.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import { PROBLEMS } from '../errors.ts';
import { sendProblem } from '../http/error-handler.ts';
import { operation } from '../openapi/operation.ts';
import type { OverloadMonitor } from '../overload/overload-monitor.ts';
import { sharedRef } from './schemas/shared-schemas.ts';

/**
 * Registers GET /health/live and GET /health/ready.
 *
 * @example
 * await app.register(healthRoutes, { deps, overload });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const healthRoutes: FastifyPluginAsync<{ deps: AppDeps; overload: OverloadMonitor }> = async (app, { deps, overload }) => {
  app.get('/health/live', {
    schema: {
      ...operation({
        id: 'getLiveness',
        tag: 'Health',
        summary: 'Liveness',
        description: 'Answers while the process serves HTTP.',
        answers: { 200: '`{ "status": "ok" }`.' },
      }),
      response: { 200: sharedRef('HealthStatus') },
    },
  // eslint-disable-next-line @typescript-eslint/require-await -- an async handler: Fastify sends what its promise resolves to
  }, async () => ({ status: 'ok' }));

  app.get('/health/ready', {
    schema: {
      ...operation({
        id: 'getReadiness',
        tag: 'Health',
        summary: 'Readiness',
        description: 'Ready when the database answers (migrations ran before the server started listening) '
          + 'and the instance is not overloaded (its event loop keeps up).',
        answers: {
          200: '`{ "status": "ready" }`.',
          503: 'The database does not answer, or the instance is overloaded; the detail says which.',
        },
      }),
      response: { 200: sharedRef('HealthStatus') },
    },
  }, async (request, reply) => {
    // No database round trip for an instance that should get no traffic anyway.
    if (overload.shedding) return sendProblem(request, reply, PROBLEMS.instanceOverloaded(overload.reason));
    if (await deps.storage.ping()) return { status: 'ready' };
    return sendProblem(request, reply, PROBLEMS.databaseUnavailable());
  });
};
