/**
 * PATCH /rules/{id} (docs/api.md): edit a rule with a JSON merge patch
 * (RFC 7396) instead of sending its whole content. The fields sent change,
 * the others stay, `null` removes an optional field; the result is checked,
 * compiled, versioned and answered exactly as a PUT of the merged content.
 *
 * Its own plugin, so that its encapsulated scope takes
 * `application/merge-patch+json` bodies, and only those, while every other
 * route keeps taking application/json only.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import { registerMergePatchBodyParser } from '../http/json-body-parser.ts';
import { operation } from '../openapi/operation.ts';
import { RuleArchivedError, StaleVersionError } from '../storage/types.ts';
import { idParamsSchema, isUuid, originOf, tenantOf } from './schemas/route-helpers.ts';
import { immutableFieldErrors, overNestedPatchFields, patchedContent, removedRequiredFields, type PatchRuleBody } from '../rules/rule-body.ts';
import { patchRuleBodySchema } from './schemas/rule-schemas.ts';
import { sharedRef } from './schemas/shared-schemas.ts';
import { ruleReviewer } from '../pool/rule-review.ts';

/** The media type of a JSON merge patch: the only one this route takes. */
const MERGE_PATCH_MEDIA_TYPE = 'application/merge-patch+json';

/**
 * A null for a field the rule cannot be without is named as such before the
 * body's schema runs (which would only say "must be string").
 */
function refuseRemovingRequired(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const errors = removedRequiredFields(request.body);
  done(errors.length > 0 ? new ProblemError(PROBLEMS.requiredRuleFieldsRemoved(errors)) : undefined);
}

/** A patch nested deeper than a rule may be is named as such before anything walks it. */
function refuseOverNested(request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void): void {
  const errors = overNestedPatchFields(request.body);
  done(errors.length > 0 ? new ProblemError(PROBLEMS.invalidBody(errors)) : undefined);
}

/**
 * Registers PATCH /rules/{id}. Mounted by buildApp under /api/v1 with
 * `{ deps }`, beside rulesRoutes.
 *
 * @example
 * await app.register(rulePatchRoutes, { prefix: '/api/v1', deps });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const rulePatchRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { storage, config } = deps;
  // Compile checks and warnings: a decision-table rule's on a management thread (rule-review.ts).
  const review = ruleReviewer({ config, pool: deps.pool, payloadSchemas: deps.payloadSchemas, storedPayloadSchemas: storage.payloadSchemas });
  registerMergePatchBodyParser(app);

  app.patch<{ Params: { id: string }; Body: PatchRuleBody }>('/rules/:id', {
    config: { role: 'admin' },
    preValidation: [refuseOverNested, refuseRemovingRequired],
    schema: {
      ...operation({
        id: 'patchRule',
        tag: 'Rules',
        summary: 'Edit some fields of a rule',
        description: 'Applies a JSON merge patch (RFC 7396, `Content-Type: application/merge-patch+json`) to the rule\'s latest '
          + 'content: the fields sent change, the others stay, and null removes an optional field (it returns to its default). '
          + '`schema` and object `expectedValue`s are merged key by key. `version` names the version the edit is based on. '
          + 'The result is checked and saved as a PUT of the whole content would be, and answered the same way.',
        answers: {
          200: 'The rule with its new version (status draft), or unchanged when the patch changes nothing.',
          400: 'The patch is invalid: a field of the wrong type, an unknown field, a missing `version`, null for `name` or `version`, '
            + 'another context or code, `expectedValue` or `schema` nested deeper than 32 levels; or the patched rule does not compile '
            + '(`errors` names each field, line and column).',
          404: 'No rule with this id in the tenant.',
          409: 'The version sent is not the latest (another edit came first), or the rule is archived.',
          415: 'The body is not sent as Content-Type: application/merge-patch+json, or is compressed.',
        },
      }),
      consumes: [MERGE_PATCH_MEDIA_TYPE],
      params: idParamsSchema,
      body: patchRuleBodySchema,
      response: { 200: sharedRef('Rule') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const stored = isUuid(request.params.id) ? await storage.rules.get(tenantId, request.params.id) : null;
    if (stored === null) throw new ProblemError(PROBLEMS.ruleNotFound());
    const body = request.body;
    const immutable = immutableFieldErrors(stored, body);
    if (immutable.length > 0) throw new ProblemError(PROBLEMS.immutableRuleFields(immutable));
    // The patch applies to the content the client based it on: on any
    // other, its result is nothing the client asked for, so a stale or
    // archived base is refused before that result is compiled (storage
    // checks both again, atomically, as it saves).
    if (stored.status === 'archived') throw new RuleArchivedError();
    if (stored.version !== body.version) throw new StaleVersionError(stored.version, body.version);
    const content = patchedContent(stored, body);
    await review.assertCompiles(tenantId, stored.code, content);
    // Answered with its warnings, as PUT is (docs/rule-language.md, "Warnings").
    const updated = await storage.rules.update(tenantId, stored.id, body.version, content, { origin: originOf(request), action: 'rule.patch' });
    return review.withWarnings(tenantId, updated);
  });
};
