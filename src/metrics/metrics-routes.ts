/**
 * GET /metrics: Prometheus text exposition, no authentication (docs/api.md
 * 9). Scrapes are cheap: the hot-path counters are copied in at this point.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { InstanceMetrics } from '../cluster/cluster-metrics.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import { operation } from '../openapi/operation.ts';
import type { ServiceMetrics } from './service-metrics.ts';

/**
 * Registers GET /metrics.
 *
 * @example
 * await app.register(metricsRoutes, { metrics });
 */
export const metricsRoutes: FastifyPluginAsync<{
  metrics: ServiceMetrics;
  /** The instance's figures when this process is one of several workers (cluster-metrics.ts). */
  instance?: InstanceMetrics;
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
}> = async (app, { metrics, instance }) => {
  app.get('/metrics', {
    schema: {
      ...operation({
        id: 'getMetrics',
        tag: 'Metrics',
        summary: 'Prometheus metrics',
        description: 'Request latency by route and status, validations, validator cache and compile figures, rate-limit refusals, process metrics.',
        answers: {
          200: 'Prometheus text exposition format 0.0.4; with WORKERS > 1, every worker\'s figures added up.',
          503: 'With WORKERS > 1: the workers\' figures could not be collected.',
        },
      }),
      response: {
        200: { content: { 'text/plain': { schema: { type: 'string', description: 'Prometheus text.' } } } },
      },
    },
  }, async (_request, reply) => {
    let text: string;
    if (instance === undefined) {
      text = await metrics.render();
    } else {
      try {
        text = await instance.render();
      } catch (error) {
        // A scrape that fails is a gap Prometheus shows; one worker's figures as the instance's would be wrong.
        app.log.warn({ err: error }, 'metrics: could not collect every worker\'s figures');
        throw new ProblemError(PROBLEMS.workerMetricsUnavailable());
      }
    }
    return reply.type(metrics.contentType).send(text);
  });
};
