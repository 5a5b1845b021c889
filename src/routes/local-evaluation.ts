/**
 * Local evaluation's routes (docs/api.md, "Local evaluation"): a context's
 * settings (admin keys), the generated validator and its signed module, the
 * change feed, samples sent back by clients, and the signing key.
 *
 * The module, the change feed and the samples are role `client` (admin and
 * client keys): a client key only for contexts whose admin turned
 * `localValidation` on; the change feed and the samples need it on for
 * every key, the module for client keys only (admins read it as before).
 * They and the signing key answer cross-origin requests from the tenant's
 * allowed origins (local-evaluation/cors.ts); no other route does.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps, CompiledValidator } from '../app-deps.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import { measurePayload } from '../http/payload-guard.ts';
import { answerPreflight, corsCheck, type PolicyOf } from '../local-evaluation/cors.ts';
import type { LocalEvaluation } from '../local-evaluation/local-evaluation.ts';
import type { SignedModule } from '../local-evaluation/signed-modules.ts';
import { operation } from '../openapi/operation.ts';
import type { FailureRecord } from '../../compiler/types.ts';
import { TUNING } from '../tuning.ts';
import { contextParamsSchema, validatorQuerySchema, validatorSourceResponseSchema } from './schemas/context-schemas.ts';
import {
  contextSettingsSchema, eventStreamResponseSchema, samplesAcceptedSchema, samplesBodySchema, signingKeySchema,
} from './schemas/local-evaluation-schemas.ts';
import { contextOf, originOf, tenantOf } from './schemas/route-helpers.ts';

interface ContextParams {
  context: string;
}

interface SampleBody {
  samples: Array<{ payload: Record<string, unknown>; rulesetVersion: number; isValid: boolean; errorCodes: string[]; at: string }>;
}

export interface LocalEvaluationRoutesOptions {
  deps: AppDeps;
  local: LocalEvaluation;
  /** The tenant's cached policy, which carries its allowed origins. */
  policyOf: PolicyOf;
}

const NOT_PUBLISHED = 'The context has no published ruleset (CONTEXT_NOT_FOUND).';
const NOT_SERVED = 'A client key, and local validation is off for the context (FORBIDDEN).';
const LAST_EVENT_ID = /^[0-9]{1,10}$/;

/**
 * Registers the routes under /api/v1.
 *
 * @example
 * await app.register(localEvaluationRoutes, { prefix: '/api/v1', deps, local, policyOf: (t) => policies.get(t) });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const localEvaluationRoutes: FastifyPluginAsync<LocalEvaluationRoutesOptions> = async (app, { deps, local, policyOf }) => {
  const { storage, validators, config } = deps;
  const cors = corsCheck(policyOf);
  const roleOf = (request: FastifyRequest) => request.auth!.role;

  // Preflights carry no key: the auth hook lets OPTIONS of these routes through (config.preflight).
  for (const url of ['/contexts/:context/validator', '/contexts/:context/validator/events', '/contexts/:context/samples', '/signing-key']) {
    app.options(url, { config: { preflight: true }, schema: { hide: true } }, (request, reply) => answerPreflight(request, reply));
  }

  app.get<{ Params: ContextParams }>('/contexts/:context/settings', {
    config: { role: 'admin' },
    schema: {
      ...operation({
        id: 'getContextSettings',
        tag: 'Local evaluation',
        summary: 'Read a context\'s settings',
        description: 'Whether the context is served for local evaluation (`localValidation`, off by default).',
        answers: { 200: 'The settings.', 404: 'The context has no rules (CONTEXT_NOT_FOUND).' },
      }),
      params: contextParamsSchema,
      response: { 200: contextSettingsSchema },
    },
  }, async (request) => {
    const context = contextOf(request.params);
    const state = await storage.contextSettings.state(tenantOf(request), context);
    if (state === null) throw new ProblemError(PROBLEMS.contextHasNoRules(context));
    return { localValidation: state.localValidation };
  });

  app.put<{ Params: ContextParams; Body: { localValidation: boolean } }>('/contexts/:context/settings', {
    config: { role: 'admin' },
    schema: {
      ...operation({
        id: 'setContextSettings',
        tag: 'Local evaluation',
        summary: 'Set a context\'s settings',
        description: 'With `{ "localValidation": true }`, client keys may fetch the context\'s signed validator module and follow its '
          + 'change feed, and clients may send samples of it; `false` stops serving it: feeds already open, on every instance, end with a '
          + '`closed` event saying why. Audited as `context.settings`.',
        answers: { 200: 'The settings now in force.', 404: 'The context has no rules (CONTEXT_NOT_FOUND).' },
      }),
      params: contextParamsSchema,
      body: contextSettingsSchema,
      response: { 200: contextSettingsSchema },
    },
  }, async (request) => {
    const context = contextOf(request.params);
    const tenantId = tenantOf(request);
    const saved = await storage.contextSettings.set(tenantId, context, { localValidation: request.body.localValidation }, originOf(request));
    if (saved === null) throw new ProblemError(PROBLEMS.contextHasNoRules(context));
    // This instance's feeds at once; other instances' through the change notice.
    local.events.settingsChanged(tenantId, context);
    return saved;
  });

  app.get<{ Params: ContextParams; Querystring: { format?: 'source' | 'module' } }>('/contexts/:context/validator', {
    config: { role: 'client' },
    onRequest: cors,
    schema: {
      ...operation({
        id: 'getContextValidator',
        tag: 'Contexts',
        summary: 'Read the generated validator',
        description: 'The JavaScript generated for the live ruleset. With `format=module`, a self-contained ES module (no imports) exporting '
          + '`validate(payload)`, which returns what a single validation answers, less executionTimeMs; it runs in Node and in browsers. '
          + 'The module comes with `ETag` (answered 304 to a matching `If-None-Match`), `X-Ruleset-Version`, and `X-Rules-Signature`, the '
          + 'Ed25519 signature (base64) of its exact bytes by the key `X-Rules-Signing-Key-Id` names (GET /signing-key). Client keys may '
          + 'read only the module, of contexts served for local evaluation.',
        answers: { 200: 'The JavaScript source.', 304: 'The module has not changed since the ETag sent.', 403: NOT_SERVED, 404: NOT_PUBLISHED },
      }),
      params: contextParamsSchema,
      querystring: validatorQuerySchema,
      response: { 200: validatorSourceResponseSchema, 304: { type: 'null', description: 'Not modified.' } },
    },
  }, async (request, reply) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    const role = roleOf(request);
    if (request.query.format !== 'module') {
      if (role !== 'admin') throw new ProblemError(PROBLEMS.clientRoleForbidden());
      const validator: CompiledValidator | null = validators.get(tenantId, context) ?? (await validators.load(tenantId, context));
      if (validator === null) throw new ProblemError(PROBLEMS.contextsNotPublished([{ context }]));
      return reply.type('text/javascript; charset=utf-8').send(validator.source);
    }
    if (role !== 'admin') await local.access(tenantId, context, role, true);
    const module = await local.moduleOf(tenantId, context);
    if (module === null) throw new ProblemError(PROBLEMS.contextsNotPublished([{ context }]));
    return sendModule(request, reply, module, local);
  });

  app.get<{ Params: ContextParams }>('/contexts/:context/validator/events', {
    config: { role: 'client' },
    onRequest: cors,
    schema: {
      ...operation({
        id: 'followContextValidator',
        tag: 'Local evaluation',
        summary: 'Follow a context\'s live validator (Server-Sent Events)',
        description: 'A held `text/event-stream`: first a `published` event with the live state, then one on every publish, rollback, import '
          + 'or archive that changes the live ruleset, made on any instance, within about a second. Each event\'s `id` is the ruleset '
          + 'version and its data `{ "context", "version", "etag" }` (the module\'s ETag). A heartbeat comment comes every SSE_HEARTBEAT_MS. '
          + 'With `Last-Event-ID` (the last id received), the live state is sent only when it is newer. Needs local validation on; when '
          + 'an admin turns it off, or the key is revoked, the feed ends with a `closed` event (data `{ "context", "reason", "detail" }`; '
          + 'reason `LOCAL_VALIDATION_OFF` or `KEY_CHANGED`).',
        answers: {
          200: 'The event stream, held open.',
          400: 'Last-Event-ID is not a ruleset version of the context up to the live one (INVALID_BODY).',
          403: 'Local validation is off for the context (FORBIDDEN).',
          404: NOT_PUBLISHED,
          429: 'This instance holds its most change feeds, in all or for the tenant (RATE_LIMITED, with Retry-After).',
          503: 'This instance is closing: its feeds have ended (SERVICE_UNAVAILABLE); reconnect, to another instance.',
        },
      }),
      params: contextParamsSchema,
      response: { 200: eventStreamResponseSchema },
    },
  }, async (request, reply) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    const state = await local.access(tenantId, context, roleOf(request), true);
    if (state.rulesetVersion === null) throw new ProblemError(PROBLEMS.contextsNotPublished([{ context }]));
    const lastEventId = request.headers['last-event-id'];
    let known = 0;
    if (lastEventId !== undefined) {
      const given = Array.isArray(lastEventId) ? lastEventId.join(',') : lastEventId;
      if (!LAST_EVENT_ID.test(given) || Number(given) > state.rulesetVersion) {
        throw new ProblemError(PROBLEMS.staleLastEventId(given.slice(0, 40), state.rulesetVersion));
      }
      known = Number(given);
    }
    const refusal = local.events.refusal(tenantId);
    // Closing: a feed asked for on a connection still open then goes to another instance, not to a bound's 429.
    if (refusal?.scope === 'closing') throw new ProblemError(PROBLEMS.shuttingDown());
    if (refusal !== undefined) throw new ProblemError(PROBLEMS.tooManyEventStreams(refusal.scope, refusal.limit));
    reply.hijack();
    const response = reply.raw;
    // Headers the hooks set on the reply (CORS, the request id) go out with the stream's own.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) response.setHeader(name, value);
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      // Proxies that buffer answers (nginx) would hold events back.
      'x-accel-buffering': 'no',
      // The socket goes with the feed: nothing is left idle when it ends.
      connection: 'close',
    });
    response.write(`retry: ${TUNING.sseRetryMs.value}\n\n`);
    local.events.subscribe(tenantId, request.auth!.keyId, context, response, known);
  });

  app.post<{ Params: ContextParams; Body: SampleBody }>('/contexts/:context/samples', {
    config: { role: 'client' },
    onRequest: cors,
    schema: {
      ...operation({
        id: 'sendContextSamples',
        tag: 'Local evaluation',
        summary: 'Send outcomes of local validations',
        description: 'Samples of validations a client ran itself, recorded like sampled traffic (PUT /tenant/sampling) so the impact report sees '
          + 'them. The client sends the share `samplingRate` of its outcomes; the service stores what it is sent within the same bounds '
          + 'as its own samples (SAMPLE_MAX_PAYLOAD_BYTES, SAMPLES_MAX_BYTES_PER_TENANT, the tenant\'s maxSamples and retention). '
          + 'Nothing is kept while the tenant samples no traffic. Needs local validation on.',
        answers: {
          202: 'What was queued and what was not, by reason.', 403: 'Local validation is off for the context (FORBIDDEN).',
          404: 'The context has no rules (CONTEXT_NOT_FOUND).',
        },
      }),
      params: contextParamsSchema,
      body: samplesBodySchema,
      response: { 202: samplesAcceptedSchema },
    },
  }, async (request, reply) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    const state = await local.access(tenantId, context, roleOf(request), true);
    const rate = request.samplingRate;
    const reasons: Record<string, number> = {};
    const drop = (reason: string): void => {
      reasons[reason] = (reasons[reason] ?? 0) + 1;
    };
    let accepted = 0;
    for (const sample of request.body.samples) {
      if (rate === 0) drop('samplingOff');
      else if (state.rulesetVersion === null || sample.rulesetVersion > state.rulesetVersion) drop('versionNotLive');
      else {
        const size = measurePayload(sample.payload, config.maxPayloadDepth);
        if (size < 0) drop('payloadInvalid');
        else if (Buffer.byteLength(JSON.stringify(sample.payload), 'utf8') > config.sampleMaxPayloadBytes) drop('payloadTooLarge');
        else if (!deps.samples.record(
          tenantId, context, sample.rulesetVersion, recordedAtOf(sample.at), sample.isValid, failuresOf(sample.errorCodes), sample.payload, size,
        )) drop('queueFull');
        else accepted++;
      }
    }
    const dropped = request.body.samples.length - accepted;
    return reply.code(202).send({ accepted, dropped, reasons, samplingRate: rate });
  });

  app.get('/signing-key', {
    config: { role: 'any' },
    onRequest: cors,
    schema: {
      ...operation({
        id: 'getSigningKey',
        tag: 'Local evaluation',
        summary: 'Read the module signing key',
        description: 'The Ed25519 public key that verifies the `X-Rules-Signature` of every validator module this service serves. Any key '
          + 'of the tenant may read it; the CLI prints it too (`signing-key`).',
        answers: { 200: 'The public key.' },
      }),
      response: { 200: signingKeySchema },
    },
  }, (_request, reply) => reply.send(local.signer.publicKey));
};

/** The module with its ETag, version and signature; 304 when the caller holds it already. */
function sendModule(request: FastifyRequest, reply: FastifyReply, module: SignedModule, local: LocalEvaluation): FastifyReply {
  reply.header('etag', module.etag);
  reply.header('cache-control', 'no-cache');
  reply.header('x-ruleset-version', String(module.rulesetVersion));
  reply.header('x-rules-signing-key-id', local.signer.publicKey.keyId);
  if (matchesEtag(request.headers['if-none-match'], module.etag)) return reply.code(304).send();
  reply.header('x-rules-signature', module.signature);
  return reply.type('text/javascript; charset=utf-8').send(module.body);
}

/** If-None-Match: `*`, or a list of entity tags (weak ones compared weakly, as RFC 9110 says for it). */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || (trimmed.startsWith('W/') ? trimmed.slice(2) : trimmed) === etag;
  });
}

/** A client's clock may run ahead: a sample is never recorded later than it arrived, so retention ages it like the rest. */
function recordedAtOf(at: string): number {
  return Math.min(Date.parse(at), Date.now());
}

/** The failures of a sample as the sample writer reads them: it keeps each failure's rule code only. */
function failuresOf(codes: readonly string[]): FailureRecord[] {
  return codes.map((ruleCode) => ({ ruleCode }) as FailureRecord);
}
