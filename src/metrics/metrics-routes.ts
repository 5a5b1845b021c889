/**
 * GET /metrics: Prometheus text exposition, no authentication (product.md
 * 9). Scrapes are cheap: the hot-path counters are copied in at this point.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { ServiceMetrics } from './service-metrics.ts';

/**
 * Registers GET /metrics.
 *
 * @example
 * await app.register(metricsRoutes, { metrics });
 */
export const metricsRoutes: FastifyPluginAsync<{ metrics: ServiceMetrics }> = async (app, { metrics }) => {
  app.get('/metrics', {
    schema: {
      summary: 'Prometheus metrics',
      description: 'Request latency by route and status, validations, validator cache and compile figures, rate-limit refusals, process metrics.',
      tags: ['operations'],
      response: {
        200: {
          description: 'Prometheus text exposition format 0.0.4',
          content: { 'text/plain': { schema: { type: 'string' } } },
        },
      },
    },
  }, async (_request, reply) => {
    const text = await metrics.render();
    return reply.type(metrics.contentType).send(text);
  });
};
