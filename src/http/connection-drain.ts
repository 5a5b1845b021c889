/**
 * Graceful drain: once the app starts closing, responses carry
 * `Connection: close`, so clients on keep-alive connections go elsewhere
 * after their current request instead of getting a 503 (product.md 9).
 */
import type { FastifyInstance } from 'fastify';

/** Registers the preClose flag and the onSend header. */
export function registerConnectionDrain(app: FastifyInstance): void {
  let draining = false;
  app.addHook('preClose', (done) => {
    draining = true;
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (draining) reply.header('connection', 'close');
    done(null, payload);
  });
}
