/**
 * Wires ServiceMetrics into Fastify. Each route gets its own onResponse
 * hook, built when the route is added, that already knows the route's
 * pattern (never the raw URL, whose ids would make a series per rule):
 * nothing is looked up or allocated per request. Requests that match no
 * route share the pattern "unmatched". The validation routes also get a
 * preSerialization hook that counts validations from the result object,
 * before it becomes JSON.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { accountedForByFastLane } from '../http/route-hooks.ts';
import type { RequestRecorder, ServiceMetrics, ValidationOperation } from './service-metrics.ts';

/** The route label of requests no route matched. */
export const UNMATCHED_ROUTE = 'unmatched';

const VALIDATION_ROUTES: Record<string, ValidationOperation> = {
  '/api/v1/validation/validate': 'single',
  '/api/v1/validation/validate-batch': 'batch',
  '/api/v1/validation/validate-transaction': 'transaction',
};

interface FailuresHolder {
  isValid: boolean;
  failures: unknown[];
}
type SingleResult = FailuresHolder;
interface BatchResult {
  results: FailuresHolder[];
  totalProcessed: number;
  totalFailed: number;
}
interface TransactionResult {
  contextResults: (FailuresHolder & { context: string })[];
}

type Hook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;
type PayloadHook = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: null, payload: unknown) => void) => void;

/**
 * Installs the recording hooks. Call it on the root instance before any
 * route is registered: routes added earlier are not measured.
 *
 * @example
 * registerMetrics(app, metrics);
 * await app.register(metricsRoutes, { metrics });
 */
export function registerMetrics(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method.join(',') : route.method;
    const record = metrics.requestRecorder(methods, route.url);
    // The fast lane records its answers with the route's own recorder (requestRecorder of the same route).
    const onResponse: Hook = accountedForByFastLane((request, reply, done) => {
      record(reply.statusCode, reply.elapsedTime / 1000, request.auth?.tenantId);
      done();
    });
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the route's own hooks may be async; Fastify awaits those
    route.onResponse = appendHook(route.onResponse, onResponse);
    const operation = VALIDATION_ROUTES[route.url];
    if (operation !== undefined && methods === 'POST') {
      // The fast lane counts its answers with recordSingleValidation, as this hook does.
      route.preSerialization = appendHook(route.preSerialization, accountedForByFastLane(validationRecorder(metrics, operation)));
    }
  });

  const unmatched = new Map<string, RequestRecorder>();
  // Only for requests no route matched: never a validation.
  app.addHook('onResponse', accountedForByFastLane((request, reply, done) => {
    if (request.is404) {
      let record = unmatched.get(request.method);
      if (record === undefined) {
        record = metrics.requestRecorder(request.method, UNMATCHED_ROUTE);
        unmatched.set(request.method, record);
      }
      record(reply.statusCode, reply.elapsedTime / 1000, request.auth?.tenantId);
    }
    done();
  }));
}

function validationRecorder(metrics: ServiceMetrics, operation: ValidationOperation): PayloadHook {
  return (request, reply, payload, done) => {
    if (reply.statusCode === 200 && request.auth !== null) {
      const tenantId = request.auth.tenantId;
      if (operation === 'transaction') {
        for (const result of (payload as TransactionResult).contextResults) {
          metrics.recordValidations(operation, result.isValid ? 1 : 0, result.isValid ? 0 : 1, result.failures.length, tenantId, result.context);
        }
      } else {
        const context = (request.body as { context: string }).context;
        if (operation === 'single') {
          recordSingleValidation(metrics, tenantId, context, payload as SingleResult);
        } else {
          const batch = payload as BatchResult;
          let failures = 0;
          for (const item of batch.results) failures += item.failures.length;
          metrics.recordValidations(operation, batch.totalProcessed - batch.totalFailed, batch.totalFailed, failures, tenantId, context);
        }
      }
    }
    done(null, payload);
  };
}

/**
 * Counts one single validation's result: the route's preSerialization hook
 * and the validation fast lane both record through here.
 */
export function recordSingleValidation(
  metrics: ServiceMetrics, tenantId: string, context: string, result: { readonly isValid: boolean; readonly failures: readonly unknown[] },
): void {
  metrics.recordValidations('single', result.isValid ? 1 : 0, result.isValid ? 0 : 1, result.failures.length, tenantId, context);
}

/** Adds a hook to a route's own hooks, which may be absent, one function or a list. */
function appendHook<T>(existing: T | T[] | undefined, hook: T): T[] {
  if (existing === undefined) return [hook];
  return Array.isArray(existing) ? [...existing, hook] : [existing, hook];
}
