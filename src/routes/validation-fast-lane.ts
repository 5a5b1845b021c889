/**
 * The validation fast lane: the service's most frequent request, a single
 * validation by a caller whose key is already in memory, answered from the
 * HTTP server's request event without Fastify's per-request pipeline.
 *
 * Why: Fastify's pipeline (request and reply objects, router, hook
 * runners, body parser, schema steps) cost more than everything the
 * service does for a validation. Measured with the server and the load
 * generator pinned to their own cores (bench/README.md), answering here
 * took the single validation from 0.58-0.67 to 0.70-0.85 of a bare
 * Fastify route's throughput, and its CPU per request down by a quarter.
 *
 * How it stays the same service: it takes a request only when its headers
 * show the common case (the exact path, a key the auth hook's fast path
 * would accept for the tenant named, the exact JSON media type the body
 * parser accepted before, no Content-Encoding, a Content-Length within the
 * body limit, the tenant's budget policy known, the app not closing,
 * request logging off).
 * It then reads the body and runs the route's own steps: the same UTF-8 and
 * JSON parser with its poisoning screen, the route's body schema, the
 * payload guard, the validator cache, the rate limit, the response schema,
 * the same headers and metrics. At the first thing that is not the happy
 * path, it writes nothing and hands the request to Fastify with the bytes
 * already read (request-replay.ts), so every refusal, error body, log line
 * and 4xx/5xx is Fastify's, exactly as without the fast lane. The budget is
 * spent only once the answer is certain, so a handed-back request spends
 * it once, in Fastify's hook (one over budget is counted again there, past
 * the limit, where RateLimit-Remaining is 0 either way).
 *
 * The price: hooks added to the app do not run for requests answered here.
 * A new concern of every request (a header, a check) belongs here too;
 * test/http/validation-fast-lane.test.ts compares the headers and bodies
 * of both paths and fails when one path has something the other has not.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Ajv } from 'ajv';
import type { FastifyInstance } from 'fastify';
import fastJsonStringify, { type Schema } from 'fast-json-stringify';
import type { ValidationResult } from '../../compiler/types.ts';
import type { CompiledValidator, ValidatorService } from '../app-deps.ts';
import type { KeyCache } from '../auth/key-cache.ts';
import type { LastUsedTracker } from '../auth/last-used-tracker.ts';
import type { ConnectionDrain } from '../http/connection-drain.ts';
import { decodeUtf8Body, isJsonContentType, parseJsonBody } from '../http/json-body-parser.ts';
import { measurePayload } from '../http/payload-guard.ts';
import { markReplay, replayStartOf } from '../http/request-replay.ts';
import { serverTiming } from '../http/request-timing.ts';
import type { ServiceMetrics } from '../metrics/service-metrics.ts';
import {
  HEADER_LIMIT, HEADER_REMAINING, HEADER_RESET, remainingOf, secondsUntil, type RateLimiter,
} from '../rate-limit/register-rate-limit.ts';
import type { RateLimitPolicy } from '../rate-limit/tenant-policies.ts';
import type { WindowState } from '../rate-limit/rate-limit-store.ts';
import { assertAnswerFits } from '../validators/answer-size.ts';
import { estimateCost, costProfileOf } from '../validators/evaluation-cost.ts';
import { UNGUARDED_COST_LIMIT } from '../validators/evaluation-deadline.ts';
import { singleResultResponseSchema } from './schemas/result-schemas.ts';
import { SHARED_SCHEMAS_BY_ID } from './schemas/shared-schemas.ts';
import { SingleAnswer } from './validation-answers.ts';
import { SINGLE_VALIDATION_ROUTE, singleValidationBodySchema, type ValidateBody } from './validation.ts';

/** The one URL the fast lane answers (no query string: anything else is Fastify's). */
export const FAST_LANE_URL = `/api/v1${SINGLE_VALIDATION_ROUTE}`;

/** Fastify's Content-Type for a serialized JSON reply. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export interface FastLaneOptions {
  keyCache: KeyCache;
  lastUsed: LastUsedTracker;
  rateLimiter: RateLimiter;
  validators: ValidatorService;
  metrics: ServiceMetrics;
  drain: ConnectionDrain;
  bodyLimit: number;
  maxPayloadDepth: number;
  maxAnswerBytes: number;
}

/** What the fast lane did (tests check which path answered a request with it). */
export interface FastLaneStats {
  /** Requests answered here. */
  answered: number;
  /** Requests begun here and handed back to Fastify after their body was read. */
  handedBack: number;
}

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * Puts the fast lane in front of Fastify's request listener on `app.server`.
 * Call it once the app's hooks and routes are registered; requests it does
 * not take reach Fastify untouched.
 *
 * @example
 * const stats = installValidationFastLane(app, { keyCache, lastUsed, rateLimiter, validators, metrics, drain, bodyLimit, maxPayloadDepth, maxAnswerBytes });
 */
export function installValidationFastLane(app: FastifyInstance, options: FastLaneOptions): FastLaneStats {
  const { keyCache, lastUsed, validators, metrics, drain, bodyLimit, maxPayloadDepth, maxAnswerBytes } = options;
  const { store, policies } = options.rateLimiter;
  const stats: FastLaneStats = { answered: 0, handedBack: 0 };
  // The route's own schemas: a body this accepts, the route accepts; output
  // is byte for byte what Fastify's serializer writes from the same schema.
  const isValidBody = new Ajv({ allErrors: false, coerceTypes: false, useDefaults: false, removeAdditional: false })
    .compile<ValidateBody>(singleValidationBodySchema);
  // `as const` makes the schema's arrays readonly, which fast-json-stringify's types do not take.
  const serialize = fastJsonStringify(singleResultResponseSchema as unknown as Schema, {
    schema: SHARED_SCHEMAS_BY_ID as unknown as Record<string, Schema>,
  });
  const recordRequest = metrics.requestRecorder('POST', FAST_LANE_URL);

  const listeners = app.server.listeners('request') as RequestListener[];
  if (listeners.length !== 1) throw new Error(`expected Fastify's one request listener, found ${listeners.length}`);
  const fastify = listeners[0];

  const handBack = (request: IncomingMessage, response: ServerResponse, body: Buffer, startedAt: number): void => {
    stats.handedBack++;
    markReplay(request, body, startedAt);
    fastify(request, response);
  };

  /** The answer, once everything passed and the budget said yes (or could not count). */
  const send = (
    response: ServerResponse, tenantId: string, keyId: string, context: string, policy: RateLimitPolicy,
    state: WindowState | undefined, result: ValidationResult, startedAt: number,
  ): void => {
    const text = serialize(new SingleAnswer(result.isValid, result.totalRulesEvaluated, result.failures, startedAt));
    // After serializing, as Fastify's onSend hook takes it.
    const elapsedMs = performance.now() - startedAt;
    // The headers and order Fastify's path writes: budget (onRequest), type (send), timing (onSend), length.
    response.writeHead(200, state === undefined
      ? { 'content-type': JSON_CONTENT_TYPE, 'server-timing': serverTiming(elapsedMs), 'content-length': Buffer.byteLength(text) }
      : {
        [HEADER_LIMIT]: policy.max,
        [HEADER_REMAINING]: remainingOf(policy.max, state.count),
        [HEADER_RESET]: secondsUntil(state.resetAt),
        'content-type': JSON_CONTENT_TYPE,
        'server-timing': serverTiming(elapsedMs),
        'content-length': Buffer.byteLength(text),
      });
    response.end(text);
    stats.answered++;
    lastUsed.record(keyId);
    validators.countHit(tenantId, context);
    metrics.recordValidations('single', result.isValid ? 1 : 0, result.isValid ? 0 : 1, result.failures.length, tenantId, context);
    recordRequest(200, elapsedMs / 1000, tenantId);
  };

  /**
   * Once the budget was counted: the answer, or Fastify's when over budget
   * (its rate-limit hook answers 429) or closing (its drain hook adds
   * Connection: close). A function of the installation, not a closure per
   * request: a closure costs an allocation per request, and under tsx (the
   * tests run the sources through it) also a `__name` call.
   */
  const conclude = (
    request: IncomingMessage, response: ServerResponse, body: Buffer, startedAt: number, tenantId: string,
    keyId: string, context: string, policy: RateLimitPolicy, state: WindowState | undefined, result: ValidationResult,
  ): void => {
    if ((state !== undefined && state.count > policy.max) || drain.isDraining()) {
      handBack(request, response, body, startedAt);
      return;
    }
    try {
      send(response, tenantId, keyId, context, policy, state, result, startedAt);
    } catch (error) {
      // Nothing written yet: Fastify answers (and reports) it. Written: only the bookkeeping failed.
      if (!response.headersSent) handBack(request, response, body, startedAt);
      else app.log.error({ err: error }, 'validation fast lane: bookkeeping after the answer failed');
    }
  };

  /** Everything after the body arrived; any step off the happy path hands the request back. */
  const answer = (
    request: IncomingMessage, response: ServerResponse, body: Buffer, startedAt: number,
    tenantId: string, keyId: string, policy: RateLimitPolicy,
  ): void => {
    let parsed: unknown;
    try {
      parsed = parseJsonBody(decodeUtf8Body(body));
    } catch {
      handBack(request, response, body, startedAt);
      return;
    }
    if (!isValidBody(parsed)) {
      handBack(request, response, body, startedAt);
      return;
    }
    const { context, payload } = parsed;
    const size = measurePayload(payload, maxPayloadDepth);
    // Counted as a hit only when answered here (`send`): a request handed back looks it up again on Fastify's route.
    const validator: CompiledValidator | undefined = size < 0 ? undefined : validators.find(tenantId, context);
    // Large evaluations run under Fastify's route, within the evaluation deadline.
    if (validator === undefined || estimateCost(costProfileOf(validator), size) > UNGUARDED_COST_LIMIT) {
      handBack(request, response, body, startedAt);
      return;
    }
    let result: ValidationResult;
    try {
      result = validator.validate(payload, Date.now());
      assertAnswerFits(result.failures, maxAnswerBytes, 'payload');
    } catch {
      // Too many failures, too large an answer, or unexpected: Fastify's path evaluates again and refuses or reports it.
      handBack(request, response, body, startedAt);
      return;
    }
    const state = store.hit(policy.key, policy.windowMs);
    if (state instanceof Promise) {
      state.then(
        (resolved) => conclude(request, response, body, startedAt, tenantId, keyId, context, policy, resolved, result),
        () => handBack(request, response, body, startedAt),
      );
    } else {
      conclude(request, response, body, startedAt, tenantId, keyId, context, policy, state, result);
    }
  };

  const take = (request: IncomingMessage, response: ServerResponse): boolean => {
    if (request.url !== FAST_LANE_URL || request.method !== 'POST' || drain.isDraining()) return false;
    const headers = request.headers;
    const apiKey = headers['x-api-key'];
    if (typeof apiKey !== 'string') return false;
    // The auth hook's fast path: this exact key was presented before, is known, and names its own tenant.
    const key = keyCache.recall(apiKey);
    if (key === undefined || key.tenantId !== headers['x-tenant-id']) return false;
    if (!isJsonContentType(headers['content-type'])) return false;
    // A body sent chunked or encoded (gzip...) is Fastify's: Content-Length framing and identity bytes only here.
    if (headers['transfer-encoding'] !== undefined || headers['content-encoding'] !== undefined) return false;
    const length = Number(headers['content-length']);
    if (!(length > 0 && length <= bodyLimit)) return false;
    const policy = policies.get(key.tenantId);
    if (policy instanceof Promise) return false;

    const startedAt = performance.now();
    const chunks: Buffer[] = [];
    let received = 0;
    request.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
    });
    request.on('end', () => {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received);
      try {
        answer(request, response, body, startedAt, key.tenantId, key.keyId, policy);
      } catch (error) {
        // A step threw where none should: Fastify answers it, unless it already has the request.
        if (!response.headersSent && replayStartOf(request) === undefined) handBack(request, response, body, startedAt);
        else app.log.error({ err: error }, 'validation fast lane: unexpected error');
      }
    });
    // A client that goes away mid-body gets no answer, as on Fastify's path; Node closes the socket.
    request.on('error', () => {});
    return true;
  };

  app.server.removeListener('request', fastify);
  app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (!take(request, response)) fastify(request, response);
  });
  return stats;
}
