/**
 * Health routes for load balancers and orchestrators; no authentication.
 * Liveness says the process serves HTTP; readiness also needs the database
 * (migrations ran before the server started listening).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import { sendProblem, unavailable } from '../http/error-handler.ts';

const statusSchema = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string' } },
} as const;

/**
 * Registers GET /health/live and GET /health/ready.
 *
 * @example
 * await app.register(healthRoutes, { deps });
 */
export const healthRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  app.get('/health/live', { schema: { response: { 200: statusSchema } } }, async () => ({ status: 'ok' }));

  app.get('/health/ready', { schema: { response: { 200: statusSchema } } }, async (request, reply) => {
    if (await deps.storage.ping()) return { status: 'ready' };
    return sendProblem(request, reply, unavailable());
  });
};
