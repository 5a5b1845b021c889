/**
 * Health routes for load balancers and orchestrators; no authentication.
 * Liveness says the process serves HTTP; readiness also needs the database
 * (migrations ran before the server started listening).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import { PROBLEMS } from '../errors.ts';
import { sendProblem } from '../http/error-handler.ts';
import { operation } from '../openapi/operation.ts';
import { sharedRef } from './schemas/shared-schemas.ts';

/**
 * Registers GET /health/live and GET /health/ready.
 *
 * @example
 * await app.register(healthRoutes, { deps });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const healthRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
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
        description: 'Ready when the database answers (migrations ran before the server started listening).',
        answers: {
          200: '`{ "status": "ready" }`.',
          503: 'The database does not answer.',
        },
      }),
      response: { 200: sharedRef('HealthStatus') },
    },
  }, async (request, reply) => {
    if (await deps.storage.ping()) return { status: 'ready' };
    return sendProblem(request, reply, PROBLEMS.databaseUnavailable());
  });
};
