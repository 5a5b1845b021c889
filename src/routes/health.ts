/**
 * Health routes for load balancers and orchestrators; no authentication.
 * Liveness says the process serves HTTP; readiness also needs the database
 * (migrations ran before the server started listening), and ends at
 * SIGTERM, while the process still serves (docs/operations.md, "Shutdown").
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import { PROBLEMS } from '../errors.ts';
import type { ConnectionDrain } from '../http/connection-drain.ts';
import { sendProblem } from '../http/error-handler.ts';
import { operation } from '../openapi/operation.ts';
import { sharedRef } from './schemas/shared-schemas.ts';

const SHUTTING_DOWN = PROBLEMS.shuttingDown();

/**
 * Registers GET /health/live and GET /health/ready.
 *
 * @example
 * await app.register(healthRoutes, { deps, drain });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const healthRoutes: FastifyPluginAsync<{ deps: AppDeps; drain: ConnectionDrain }> = async (app, { deps, drain }) => {
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
        description: 'Ready when the database answers (migrations ran before the server started listening), until the process is told to stop.',
        answers: {
          200: '`{ "status": "ready" }`.',
          503: 'The database does not answer, or the process is shutting down (from SIGTERM on).',
        },
      }),
      response: { 200: sharedRef('HealthStatus') },
    },
  }, async (request, reply) => {
    if (drain.isStopping()) return sendProblem(request, reply, SHUTTING_DOWN);
    if (await deps.storage.ping()) return { status: 'ready' };
    return sendProblem(request, reply, PROBLEMS.databaseUnavailable());
  });
};
