/**
 * The validation fast lane: the service's most frequent request, a single
 * validation by a caller whose key is already in memory, answered from the
 * HTTP server's request event without Fastify's per-request pipeline
 * (request and reply objects, router, hook runners, body parser plumbing).
 *
 * A thin adapter: the validation itself is the route's own core
 * (src/validation/validate-single.ts), called with the same tenant, body
 * and clock; what the pipeline's hooks do for such a request is done here
 * with the same functions (the auth hook's key recall, the rate-limit
 * store and headers, serverTiming, the route's request recorder and
 * recordSingleValidation); the body is checked and the answer serialized
 * with the route's own schemas (schemas/validation-schemas.ts).
 *
 * It is on only when nothing else runs for the route: buildApp turns it
 * off (and says so in the log) when request logging is on or when the
 * route has a hook not marked as accounted for here (src/http/route-hooks.ts),
 * so a hook added to the app can never be silently skipped.
 *
 * Whatever is not the happy path (a body the route refuses, a spent
 * budget, a refusal of the validation, the app closing) is handed to
 * Fastify with the bytes already read, the budget already spent and the
 * core's outcome when it ran (request-replay.ts, RateLimiter.handOverSpent):
 * every refusal, error body, log line and 4xx/5xx is Fastify's, and nothing
 * is counted or evaluated twice.
 *
 * Why it exists: in interleaved rounds against Fastify's path on the same
 * process, it costs less CPU per request (bench/http/validation-paths.bench.ts;
 * the figures are in docs/architecture.md, "The path of one validation").
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Ajv } from 'ajv';
import type { FastifyInstance } from 'fastify';
import fastJsonStringify, { type Schema } from 'fast-json-stringify';
import type { CachedKey, KeyCache } from '../auth/key-cache.ts';
import type { LastUsedTracker } from '../auth/last-used-tracker.ts';
import type { ConnectionDrain } from '../http/connection-drain.ts';
import { decodeUtf8Body, isJsonContentType, parseJsonBody } from '../http/json-body-parser.ts';
import { markReplay, replayStartOf } from '../http/request-replay.ts';
import { serverTiming } from '../http/request-timing.ts';
import { recordSingleValidation } from '../metrics/register-metrics.ts';
import type { ServiceMetrics } from '../metrics/service-metrics.ts';
import {
  HEADER_LIMIT, HEADER_REMAINING, HEADER_RESET, remainingOf, secondsUntil, type RateLimiter,
} from '../rate-limit/register-rate-limit.ts';
import type { RateLimitPolicy } from '../rate-limit/tenant-policies.ts';
import type { WindowState } from '../rate-limit/rate-limit-store.ts';
import { validateSingle, type SingleValidationDeps } from './validate-single.ts';
import { SHARED_SCHEMAS_BY_ID } from '../routes/schemas/shared-schemas.ts';
import { singleValidationBodySchema, singleValidationResponseSchema, type ValidateBody } from './validation-schemas.ts';
import type { SingleAnswer } from './validation-answers.ts';
import { SINGLE_VALIDATION_ROUTE } from './validation-routes.ts';

/** The one URL the fast lane answers (no query string: anything else is Fastify's). */
export const FAST_LANE_URL = `/api/v1${SINGLE_VALIDATION_ROUTE}`;

/** Fastify's Content-Type for a serialized JSON reply. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export interface FastLaneOptions {
  keyCache: KeyCache;
  lastUsed: LastUsedTracker;
  rateLimiter: RateLimiter;
  /** What the route's core needs: the same object the route is given. */
  core: SingleValidationDeps;
  metrics: ServiceMetrics;
  drain: ConnectionDrain;
  bodyLimit: number;
}

/** What the fast lane did (tests check which path answered a request with it). */
export interface FastLaneStats {
  /** Requests answered here. */
  answered: number;
  /** Requests begun here and handed back to Fastify after their body was read. */
  handedBack: number;
}

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/** A counted request's budget: the policy it was counted under and the window's state. */
interface Spent {
  policy: RateLimitPolicy;
  state: WindowState;
}

/**
 * Puts the fast lane in front of Fastify's request listener on `app.server`.
 * Call it once the app is ready (its hooks are final then); requests it
 * does not take reach Fastify untouched.
 *
 * @example
 * const stats = installValidationFastLane(app, { keyCache, lastUsed, rateLimiter, core, metrics, drain, bodyLimit });
 */
export function installValidationFastLane(app: FastifyInstance, options: FastLaneOptions): FastLaneStats {
  const { keyCache, lastUsed, rateLimiter, core, metrics, drain, bodyLimit } = options;
  const { store, policies } = rateLimiter;
  const stats: FastLaneStats = { answered: 0, handedBack: 0 };
  // The route's own schemas: a body this accepts, the route accepts; output
  // is byte for byte what Fastify's serializer writes from the same schema.
  const isValidBody = new Ajv({ allErrors: false, coerceTypes: false, useDefaults: false, removeAdditional: false })
    .compile<ValidateBody>(singleValidationBodySchema);
  // `as const` makes the schema's arrays readonly, which fast-json-stringify's types do not take.
  const serialize = fastJsonStringify(singleValidationResponseSchema as unknown as Schema, {
    schema: SHARED_SCHEMAS_BY_ID as unknown as Record<string, Schema>,
  });
  const recordRequest = metrics.requestRecorder('POST', FAST_LANE_URL);

  const listeners = app.server.listeners('request') as RequestListener[];
  if (listeners.length !== 1) throw new Error(`expected Fastify's one request listener, found ${listeners.length}`);
  const fastify = listeners[0];

  /** To Fastify, with what was done so far: the budget spent (if it was) and the core's outcome (if it ran). */
  const handBack = (
    request: IncomingMessage, response: ServerResponse, body: Buffer, startedAt: number, spent?: Spent, outcome?: () => unknown,
  ): void => {
    stats.handedBack++;
    if (spent !== undefined) rateLimiter.handOverSpent(request, spent.policy, spent.state);
    markReplay(request, body, startedAt, outcome);
    fastify(request, response);
  };

  /** The answer, with the headers in the order Fastify's path writes them: budget (onRequest), type (send), timing (onSend), length. */
  const send = (response: ServerResponse, key: CachedKey, context: string, spent: Spent, answer: SingleAnswer, startedAt: number): void => {
    const text = serialize(answer);
    // After serializing, as Fastify's onSend hook takes it.
    const elapsedMs = performance.now() - startedAt;
    const { policy, state } = spent;
    response.writeHead(200, {
      [HEADER_LIMIT]: policy.max,
      [HEADER_REMAINING]: remainingOf(policy.max, state.count),
      [HEADER_RESET]: secondsUntil(state.resetAt),
      'content-type': JSON_CONTENT_TYPE,
      'server-timing': serverTiming(elapsedMs),
      'content-length': Buffer.byteLength(text),
    });
    response.end(text);
    stats.answered++;
    lastUsed.record(key.keyId);
    recordSingleValidation(metrics, key.tenantId, context, answer);
    recordRequest(200, elapsedMs / 1000, key.tenantId);
  };

  /** The core's answer: sent here, or handed over with it when the app started closing (Fastify adds Connection: close). */
  const conclude = (
    request: IncomingMessage, response: ServerResponse, body: Buffer, startedAt: number, key: CachedKey, context: string, spent: Spent,
    answer: SingleAnswer,
  ): void => {
    if (drain.isDraining()) {
      handBack(request, response, body, startedAt, spent, () => answer);
      return;
    }
    try {
      send(response, key, context, spent, answer, startedAt);
    } catch (error) {
      // Nothing written yet: Fastify answers it. Written: only the bookkeeping failed.
      if (!response.headersSent) handBack(request, response, body, startedAt, spent, () => answer);
      else app.log.error({ err: error }, 'validation fast lane: bookkeeping after the answer failed');
    }
  };

  /** Once the budget was counted: over it, Fastify's rate-limit hook answers 429; else the route's core. */
  const validate = (
    request: IncomingMessage, response: ServerResponse, body: Buffer, startedAt: number, key: CachedKey, parsed: ValidateBody, spent: Spent,
  ): void => {
    if (spent.state.count > spent.policy.max) {
      handBack(request, response, body, startedAt, spent);
      return;
    }
    let answer: SingleAnswer | Promise<SingleAnswer>;
    try {
      answer = validateSingle(core, key.tenantId, parsed, startedAt, spent.policy.samplingRate);
    } catch (error) {
      handBack(request, response, body, startedAt, spent, () => {
        throw error;
      });
      return;
    }
    if (answer instanceof Promise) {
      answer.then(
        (loaded) => conclude(request, response, body, startedAt, key, parsed.context, spent, loaded),
        (error: unknown) => handBack(request, response, body, startedAt, spent, () => {
          throw error;
        }),
      );
    } else {
      conclude(request, response, body, startedAt, key, parsed.context, spent, answer);
    }
  };

  /** Everything after the body arrived: the body parser's and the schema's steps, then the budget. */
  const answer = (
    request: IncomingMessage, response: ServerResponse, body: Buffer, startedAt: number, key: CachedKey, policy: RateLimitPolicy,
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
    // Spent after the body was read, where Fastify spends it before: the count is the same, as a body
    // refused above is handed back uncounted and Fastify's hook counts it.
    const state = store.hit(policy.key, policy.windowMs);
    if (state instanceof Promise) {
      state.then(
        (resolved) => validate(request, response, body, startedAt, key, parsed, { policy, state: resolved }),
        () => handBack(request, response, body, startedAt),
      );
    } else {
      validate(request, response, body, startedAt, key, parsed, { policy, state });
    }
  };

  const take = (request: IncomingMessage, response: ServerResponse): boolean => {
    if (request.url !== FAST_LANE_URL || request.method !== 'POST' || drain.isDraining()) return false;
    const headers = request.headers;
    const apiKey = headers['x-api-key'];
    if (typeof apiKey !== 'string') return false;
    // The auth hook's fast path: this exact key was presented before, is known, and names its own tenant.
    const key = keyCache.recall(apiKey);
    // A client key may not validate: Fastify's auth hook answers its 403.
    if (key === undefined || key.tenantId !== headers['x-tenant-id'] || key.role === 'client') return false;
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
        answer(request, response, body, startedAt, key, policy);
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
