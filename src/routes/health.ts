/**
 * Health routes for load balancers and orchestrators; no authentication.
 * Liveness says the process serves HTTP; readiness also needs the database
 * (migrations ran before the server started listening) and a process that
 * is not overloaded (src/overload/overload-monitor.ts), so a load balancer
 * sends new traffic to other instances while this one catches up; it ends
 * at SIGTERM, while the process still serves (docs/operations.md, "Shutdown").
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import { PROBLEMS } from '../errors.ts';
import type { ConnectionDrain } from '../http/connection-drain.ts';
import { sendProblem } from '../http/error-handler.ts';
import { operation } from '../openapi/operation.ts';
import type { OverloadMonitor } from '../overload/overload-monitor.ts';
import { sharedRef } from './schemas/shared-schemas.ts';

const SHUTTING_DOWN = PROBLEMS.shuttingDown();

/**
 * Registers GET /health/live and GET /health/ready.
 *
 * @example
 * await app.register(healthRoutes, { deps, overload, drain });
 */
type HealthOptions = { deps: AppDeps; overload: OverloadMonitor; drain: ConnectionDrain };

// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const healthRoutes: FastifyPluginAsync<HealthOptions> = async (app, { deps, overload, drain }) => {
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
          + 'and the instance is not overloaded (its event loop keeps up), until the process is told to stop.',
        answers: {
          200: '`{ "status": "ready" }`.',
          503: 'The database does not answer, the instance is overloaded, or the process is shutting down (from SIGTERM on); the detail says which.',
        },
      }),
      response: { 200: sharedRef('HealthStatus') },
    },
  }, async (request, reply) => {
    if (drain.isStopping()) return sendProblem(request, reply, SHUTTING_DOWN);
    // No database round trip for an instance that should get no traffic anyway.
    if (overload.shedding) return sendProblem(request, reply, PROBLEMS.instanceOverloaded(overload.reason));
    if (await deps.storage.ping()) return { status: 'ready' };
    return sendProblem(request, reply, PROBLEMS.databaseUnavailable());
  });
};
