/**
 * The rule resource (product.md section 4): create, list, read, replace,
 * archive, publish, versions. Admin keys only. The tenant always comes from
 * the authenticated key; another tenant's rule is an unknown rule (404).
 *
 * Every change that moves what validation evaluates (publish, archive of a
 * live rule) compiles the next validator inside the storage transaction and
 * installs it before answering, so the next validation sees it at once and
 * no request pays for the compile.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import { ProblemError } from '../errors.ts';
import type { ListRulesQuery, Rule, RuleStatus } from '../storage/types.ts';
import { assertRuleCompiles } from '../rules/check-rule-content.ts';
import { compileAhead } from '../validators/early-compile.ts';
import { idParamsSchema, isUuid, notFound, tenantOf } from './schemas/route-helpers.ts';
import { toRuleContent, type CreateRuleBody, type UpdateRuleBody } from './schemas/rule-body.ts';
import {
  createRuleBodySchema,
  listRulesQuerySchema,
  ruleListResponseSchema,
  ruleResponseSchema,
  ruleVersionsResponseSchema,
  updateRuleBodySchema,
} from './schemas/rule-schemas.ts';

/** Rules per page of GET /rules when `limit` is not given. */
export const DEFAULT_PAGE_SIZE = 50;
/** The largest `limit` GET /rules accepts; more is 400. */
export const MAX_PAGE_SIZE = 500;

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

/**
 * Registers the /rules routes. Mounted by buildApp under /api/v1 with
 * `{ deps }`.
 *
 * @example
 * await app.register(rulesRoutes, { prefix: '/api/v1', deps });
 */
export const rulesRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { storage, validators, config } = deps;
  const checkOptions = { maxExpressionLength: config.maxExpressionLength };

  /** The rule, or 404 for malformed, unknown and other tenants' ids alike. */
  const findRule = async (tenantId: string, id: string): Promise<Rule> => {
    const rule = isUuid(id) ? await storage.rules.get(tenantId, id) : null;
    if (rule === null) throw notFound('Rule');
    return rule;
  };

  app.post<{ Body: CreateRuleBody }>('/rules', {
    config: adminOnly,
    schema: { body: createRuleBodySchema, response: { 201: ruleResponseSchema } },
  }, async (request, reply) => {
    const tenantId = tenantOf(request);
    const { context, code } = request.body;
    const content = toRuleContent(request.body);
    assertRuleCompiles(code, content, checkOptions);
    const rule = await storage.rules.create(tenantId, context, code, content, config.maxRulesPerContext);
    return reply.code(201).send(rule);
  });

  app.get<{ Querystring: ListQuery }>('/rules', {
    config: adminOnly,
    schema: { querystring: listRulesQuerySchema, response: { 200: ruleListResponseSchema } },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const { context, status, tag, cursor } = request.query;
    const query: ListRulesQuery = { limit: pageSize(request.query.limit) };
    if (context !== undefined) query.context = context;
    if (status !== undefined) query.status = status;
    if (tag !== undefined) query.tag = tag;
    if (cursor !== undefined) query.cursor = cursor;
    return storage.rules.list(tenantId, query);
  });

  app.get<{ Params: IdParams }>('/rules/:id', {
    config: adminOnly,
    schema: { params: idParamsSchema, response: { 200: ruleResponseSchema } },
  }, async (request) => findRule(tenantOf(request), request.params.id));

  app.put<{ Params: IdParams; Body: UpdateRuleBody }>('/rules/:id', {
    config: adminOnly,
    schema: { params: idParamsSchema, body: updateRuleBodySchema, response: { 200: ruleResponseSchema } },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const stored = await findRule(tenantId, request.params.id);
    const body = request.body;
    const immutable: { path: string; message: string }[] = [];
    if (body.context !== undefined && body.context !== stored.context) {
      immutable.push({ path: 'context', message: `cannot change: the rule's context is "${stored.context}"` });
    }
    if (body.code !== undefined && body.code !== stored.code) {
      immutable.push({ path: 'code', message: `cannot change: the rule's code is "${stored.code}"` });
    }
    if (immutable.length > 0) {
      throw new ProblemError('INVALID_BODY', 'The context and code of a rule are immutable.', immutable);
    }
    const content = toRuleContent(body);
    assertRuleCompiles(stored.code, content, checkOptions);
    return storage.rules.update(tenantId, stored.id, body.version, content);
  });

  app.delete<{ Params: IdParams }>('/rules/:id', {
    config: adminOnly,
    schema: { params: idParamsSchema, response: { 204: { type: 'null' } } },
  }, async (request, reply) => {
    const tenantId = tenantOf(request);
    if (!isUuid(request.params.id)) throw notFound('Rule');
    const { live } = await compileAhead(validators, (compile) => storage.rules.archive(tenantId, request.params.id, compile));
    if (live !== undefined) validators.install(live);
    return reply.code(204).send();
  });

  app.post<{ Params: IdParams }>('/rules/:id/publish', {
    config: adminOnly,
    schema: { params: idParamsSchema, response: { 200: ruleResponseSchema } },
  }, async (request) => {
    const tenantId = tenantOf(request);
    if (!isUuid(request.params.id)) throw notFound('Rule');
    const { rule, live } = await compileAhead(validators, (compile) => storage.rules.publishRule(tenantId, request.params.id, compile));
    validators.install(live);
    return rule;
  });

  app.get<{ Params: IdParams }>('/rules/:id/versions', {
    config: adminOnly,
    schema: { params: idParamsSchema, response: { 200: ruleVersionsResponseSchema } },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const versions = isUuid(request.params.id) ? await storage.rules.versions(tenantId, request.params.id) : null;
    if (versions === null) throw notFound('Rule');
    return { items: versions };
  });
};

/** `limit` of GET /rules: default 50, 1 to 500, anything else a 400 naming it. */
function pageSize(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_PAGE_SIZE;
  const limit = Number(raw);
  if (limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new ProblemError('INVALID_BODY', 'The query is invalid.', [
      { path: 'limit', message: `must be between 1 and ${MAX_PAGE_SIZE}` },
    ]);
  }
  return limit;
}
