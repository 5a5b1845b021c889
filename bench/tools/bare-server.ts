/**
 * The HTTP baseline, run as a child process: a bare Fastify 5 route at the
 * service's validation path that parses the same JSON body (Fastify's own
 * parser) and returns a fixed answer shaped like a passing single result.
 * What the service does beyond this (authentication, payload guard, cache
 * lookup, validation, response serialization, timing header) is what the
 * throughput ratio prices.
 *
 * With BARE_BUSY_US set, each request also spins for that many
 * microseconds before answering: the latency step's CPU-matched baseline,
 * a bare route that costs what the service costs per request, so that the
 * service's tail can be told apart from the tail any server of its cost
 * has on the same machine (http.bench.ts).
 *
 * Listens on 127.0.0.1:$PORT; SIGTERM closes it.
 */
import { performance } from 'node:perf_hooks';
import Fastify from 'fastify';
import { FIXED_ANSWER } from './fixed-answer.ts';

const BUSY_MS = Number(process.env.BARE_BUSY_US ?? 0) / 1000;

const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
// eslint-disable-next-line @typescript-eslint/require-await -- an async handler: Fastify sends what its promise resolves to
app.get('/health/live', async () => ({ status: 'ok' }));
for (const path of ['/api/v1/validation/validate', '/api/v1/validation/validate-batch', '/api/v1/validation/validate-transaction']) {
  // eslint-disable-next-line @typescript-eslint/require-await -- an async handler: Fastify sends what its promise resolves to
  app.post(path, async (request) => {
    // The body must be parsed (and so paid for); reading it keeps that visible.
    if (typeof request.body !== 'object' || request.body === null) throw new Error('expected a JSON object');
    if (BUSY_MS > 0) {
      const until = performance.now() + BUSY_MS;
      while (performance.now() < until);
    }
    return FIXED_ANSWER;
  });
}

process.once('SIGTERM', () => {
  app.close().then(() => process.exit(0), () => process.exit(1));
});

await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
