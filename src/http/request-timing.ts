/**
 * Request timing: the clock starts in the first onRequest hook and every
 * response, errors included, carries `Server-Timing: total;dur=<ms>` with
 * sub-millisecond precision (docs/api.md). Validation bodies read the same
 * clock (`request.startedAt`) for `executionTimeMs` (validation/validation-answers.ts).
 */
import { performance } from 'node:perf_hooks';
import type { FastifyInstance, FastifyRequest, onSendHookHandler } from 'fastify';
import { replayStartOf } from './request-replay.ts';
import { accountedForByFastLane } from './route-hooks.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** performance.now() when the request reached the first hook. */
    startedAt: number;
  }
}

/** Milliseconds since the request arrived (fractional). */
function elapsedMs(request: FastifyRequest): number {
  return performance.now() - request.startedAt;
}

/**
 * The Server-Timing value for a duration in milliseconds, to the
 * microsecond. Written with integer arithmetic: `toFixed(3)` is a runtime
 * call, and on the hot path it measured as a few percent of a request's
 * CPU time (bench/README.md, "Where the time goes").
 */
export function serverTiming(durationMs: number): string {
  const micros = Math.round(durationMs * 1000);
  const fraction = micros % 1000;
  const padding = fraction < 10 ? '00' : fraction < 100 ? '0' : '';
  return `total;dur=${(micros - fraction) / 1000}.${padding}${fraction}`;
}

/**
 * Registers the timing hooks. Call it before any other hook so the clock
 * covers authentication too.
 */
export function registerRequestTiming(app: FastifyInstance): void {
  app.decorateRequest('startedAt', 0);
  // The fast lane starts the same clock when it takes a request, and writes Server-Timing with serverTiming.
  app.addHook('onRequest', accountedForByFastLane((request, _reply, done) => {
    // A request the validation fast lane handed back arrived earlier than now.
    request.startedAt = replayStartOf(request.raw) ?? performance.now();
    done();
  }));
  app.addHook('onSend', accountedForByFastLane<onSendHookHandler>((request, reply, payload, done) => {
    // A request rejected before onRequest ran (e.g. a malformed URL) has no
    // start; report zero rather than a duration since process start.
    reply.header('server-timing', serverTiming(request.startedAt === 0 ? 0 : elapsedMs(request)));
    done(null, payload);
  }));
}
