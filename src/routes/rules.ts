/**
 * The rule resource (docs/api.md): create, list, read, replace,
 * archive, restore, publish, versions (PATCH is in rule-patch.ts). Admin
 * keys only. The tenant always comes from the authenticated key; another
 * tenant's rule is an unknown rule (404).
 *
 * Every change that moves what validation evaluates (publish, archive of a
 * live rule) compiles the next validator inside the storage transaction and
 * installs it before answering, so the next validation sees it at once and
 * no request pays for the compile.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import type { ListRulesQuery, Rule, RuleStatus } from '../storage/types.ts';
import { ruleReviewer } from '../pool/rule-review.ts';
import { compileAhead } from '../validators/early-compile.ts';
import { goLiveTestsOnPool } from '../pool/go-live-tests.ts';
import { storedTestsGate } from '../rules/stored-tests.ts';
import { forceQuerySchema } from './schemas/context-test-schemas.ts';
import { operation } from '../openapi/operation.ts';
import { idParamsSchema, isUuid, originOf, tenantOf, pageSizeOf } from './schemas/route-helpers.ts';
import { immutableFieldErrors, toRuleContent, type CreateRuleBody, type UpdateRuleBody } from '../rules/rule-body.ts';
import { createRuleBodySchema, listRulesQuerySchema, updateRuleBodySchema } from './schemas/rule-schemas.ts';
import { sharedRef } from './schemas/shared-schemas.ts';
import { publishBodySchema } from './schemas/history-schemas.ts';
import { changeInfoOf, optionalBody } from './change-info.ts';

interface IdParams {
  id: string;
}

interface ListQuery {
  context?: string;
  status?: RuleStatus | 'all';
  tag?: string;
  limit?: string;
  cursor?: string;
}

const adminOnly = { role: 'admin' } as const;

const NO_SUCH_RULE = 'No rule with this id in the tenant.';

/**
 * Registers the /rules routes. Mounted by buildApp under /api/v1 with
 * `{ deps }`.
 *
 * @example
 * await app.register(rulesRoutes, { prefix: '/api/v1', deps });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const rulesRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { storage, validators, config } = deps;
  // Compile checks and warnings: a decision-table rule's on a management thread (rule-review.ts).
  const review = ruleReviewer({ config, pool: deps.pool, payloadSchemas: deps.payloadSchemas, storedPayloadSchemas: storage.payloadSchemas });
  // Create, replace and read answer a rule with its warnings (docs/rule-language.md, "Warnings").

  /** The rule, or 404 for malformed, unknown and other tenants' ids alike. */
  const findRule = async (tenantId: string, id: string): Promise<Rule> => {
    const rule = isUuid(id) ? await storage.rules.get(tenantId, id) : null;
    if (rule === null) throw new ProblemError(PROBLEMS.ruleNotFound());
    return rule;
  };

  app.post<{ Body: CreateRuleBody }>('/rules', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'createRule',
        tag: 'Rules',
        summary: 'Create a rule',
        description: 'Creates a draft rule (version 1) in a context. The rule is compiled as it is saved: one that does not compile is '
          + 'refused with 400 naming each field, with line and column for expressions and templates. It is evaluated once published.',
        answers: {
          201: 'The rule as stored: status draft, version 1, with its warnings.',
          409: 'A rule of the context that is not archived has this code (CONFLICT), or the context has as many rules as it may have (LIMIT_EXCEEDED).',
        },
      }),
      body: createRuleBodySchema,
      response: { 201: sharedRef('Rule') },
    },
  }, async (request, reply) => {
    const tenantId = tenantOf(request);
    const { context, code } = request.body;
    const content = toRuleContent(request.body);
    await review.assertCompiles(tenantId, code, content);
    const rule = await storage.rules.create(tenantId, context, code, content, config.maxRulesPerContext, originOf(request));
    return reply.code(201).send(await review.withWarnings(tenantId, rule));
  });

  app.get<{ Querystring: ListQuery }>('/rules', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'listRules',
        tag: 'Rules',
        summary: 'List rules',
        description: 'Rules of the tenant, by creation time then id, a page at a time; filter by context, status and tag.',
        answers: { 200: 'A page of rules; nextCursor is null on the last page.' },
      }),
      querystring: listRulesQuerySchema,
      response: { 200: sharedRef('RulePage') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const { context, status, tag, cursor } = request.query;
    const query: ListRulesQuery = { limit: pageSizeOf(request.query.limit) };
    if (context !== undefined) query.context = context;
    if (status !== undefined) query.status = status;
    if (tag !== undefined) query.tag = tag;
    if (cursor !== undefined) query.cursor = cursor;
    return storage.rules.list(tenantId, query);
  });

  app.get<{ Params: IdParams }>('/rules/:id', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'getRule',
        tag: 'Rules',
        summary: 'Read a rule',
        description: 'The rule with its latest content, whatever its status.',
        answers: { 200: 'The rule, with its warnings against the context\'s payload schema as it is now.', 404: NO_SUCH_RULE },
      }),
      params: idParamsSchema,
      response: { 200: sharedRef('Rule') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    return review.withWarnings(tenantId, await findRule(tenantId, request.params.id));
  });

  app.put<{ Params: IdParams; Body: UpdateRuleBody }>('/rules/:id', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'updateRule',
        tag: 'Rules',
        summary: 'Replace a rule\'s content',
        description: 'Saves a new version of the rule\'s content, based on the version sent; it is compiled as on create. '
          + 'A published rule stays live in its published version until the new one is published. '
          + 'Server-managed fields may be sent and are ignored, so a rule read with GET can be edited and sent back.',
        answers: {
          200: 'The rule with its new version (status draft), or unchanged when the content is the same; with its warnings.',
          404: NO_SUCH_RULE,
          409: 'The version sent is not the latest (another edit came first), or the rule is archived.',
        },
      }),
      params: idParamsSchema,
      body: updateRuleBodySchema,
      response: { 200: sharedRef('Rule') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const stored = await findRule(tenantId, request.params.id);
    const body = request.body;
    const immutable = immutableFieldErrors(stored, body);
    if (immutable.length > 0) {
      throw new ProblemError(PROBLEMS.immutableRuleFields(immutable));
    }
    const content = toRuleContent(body);
    await review.assertCompiles(tenantId, stored.code, content);
    const updated = await storage.rules.update(tenantId, stored.id, body.version, content, { origin: originOf(request), action: 'rule.update' });
    return review.withWarnings(tenantId, updated);
  });

  app.delete<{ Params: IdParams }>('/rules/:id', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'archiveRule',
        tag: 'Rules',
        summary: 'Archive a rule',
        description: 'Archives the rule: it stops being evaluated at once (a live rule moves the context to a new ruleset version). '
          + 'Archiving an archived rule changes nothing.',
        answers: { 204: 'Archived.', 404: NO_SUCH_RULE },
      }),
      params: idParamsSchema,
      response: { 204: { type: 'null' } },
    },
  }, async (request, reply) => {
    const tenantId = tenantOf(request);
    if (!isUuid(request.params.id)) throw new ProblemError(PROBLEMS.ruleNotFound());
    await compileAhead(validators, (compile) => storage.rules.archive(tenantId, request.params.id, compile, changeInfoOf(request)));
    return reply.code(204).send();
  });

  app.post<{ Params: IdParams; Body: { note?: string } | undefined; Querystring: { force?: 'true' | 'false' } }>('/rules/:id/publish', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'publishRule',
        tag: 'Rules',
        summary: 'Publish a rule',
        description: 'Makes the rule\'s latest version live, as a new ruleset version of its context. '
          + 'The new validator is compiled before the call answers, so the next validation uses it. '
          + 'The body is optional: a `note` to keep with the new ruleset version.',
        answers: {
          200: 'The rule, now published, with the new ruleset version and what it changed by code.',
          400: 'The body is not `{ note }` with a note of at most 500 characters (INVALID_BODY).',
          404: NO_SUCH_RULE,
          409: 'The latest version is already live, or the rule is archived (CONFLICT); or the context\'s ruleset would be over a limit (LIMIT_EXCEEDED); '
            + 'or its stored tests took longer than the time budget (LIMIT_EXCEEDED); or a stored test of the context fails against it (TESTS_FAILED).',
          429: 'The context has stored tests and the tenant already has its most heavy management operations waiting or running (RATE_LIMITED, with Retry-After).',
        },
      }),
      params: idParamsSchema,
      querystring: forceQuerySchema,
      body: publishBodySchema,
      response: { 200: sharedRef('PublishedRule') },
    },
    preValidation: optionalBody,
  }, async (request) => {
    const tenantId = tenantOf(request);
    if (!isUuid(request.params.id)) throw new ProblemError(PROBLEMS.ruleNotFound());
    const info = changeInfoOf(request, request.body);
    const gate = storedTestsGate(storage.tests, goLiveTestsOnPool(deps.pool, deps.config), request.query.force === 'true');
    const { rule, result } = await compileAhead(
      validators,
      (compile) => storage.rules.publishRule(tenantId, request.params.id, compile, gate.info(info)),
      gate.check,
    );
    return { ...rule, rulesetVersion: result.rulesetVersion, changes: result.changes };
  });

  app.post<{ Params: IdParams }>('/rules/:id/restore', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'restoreRule',
        tag: 'Rules',
        summary: 'Restore an archived rule',
        description: 'Makes an archived rule a draft again, with a new version copying the content it was archived with '
          + '(earlier versions stay as they were). Its code must be free among the context\'s rules that are not archived. '
          + 'Nothing goes live until it is published.',
        answers: {
          200: 'The rule, now a draft at its new version, with its warnings.',
          404: NO_SUCH_RULE,
          409: 'The rule is not archived, or another rule of the context that is not archived has its code (CONFLICT); '
            + 'or the context has as many rules as it may have (LIMIT_EXCEEDED).',
        },
      }),
      params: idParamsSchema,
      response: { 200: sharedRef('Rule') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    if (!isUuid(request.params.id)) throw new ProblemError(PROBLEMS.ruleNotFound());
    const restored = await storage.rules.restore(tenantId, request.params.id, config.maxRulesPerContext, originOf(request));
    return review.withWarnings(tenantId, restored);
  });

  app.get<{ Params: IdParams }>('/rules/:id/versions', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'listRuleVersions',
        tag: 'Rules',
        summary: 'List a rule\'s versions',
        description: 'Every saved version of the rule\'s content, newest first, with when each was last live.',
        answers: { 200: 'The versions, newest first.', 404: NO_SUCH_RULE },
      }),
      params: idParamsSchema,
      response: { 200: sharedRef('RuleVersionList') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const versions = isUuid(request.params.id) ? await storage.rules.versions(tenantId, request.params.id) : null;
    if (versions === null) throw new ProblemError(PROBLEMS.ruleNotFound());
    return { items: versions };
  });
};

