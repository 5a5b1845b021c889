/**
 * Context routes (product.md section 4): publish a whole context, roll it
 * back, list contexts with their cache state, recompile, read the generated
 * validator. Admin keys only; another tenant's context is unknown (404).
 *
 * Publish and rollback compile the next validator inside the storage
 * transaction (beforeCommit) and install it before answering; a dry run
 * compiles it before the transaction starts, so the transaction is short
 * (src/validators/early-compile.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import { buildStandaloneModule, StandaloneModuleCache } from '../../compiler/standalone/index.ts';
import { compileAhead } from '../validators/early-compile.ts';
import { runInSlices } from '../validators/time-slices.ts';
import type { AppDeps, CompiledValidator } from '../app-deps.ts';
import { ProblemError } from '../errors.ts';
import { NotFoundError } from '../storage/types.ts';
import { contextNotFound, tenantOf } from './schemas/route-helpers.ts';
import { CONTEXT_REGEX } from './schemas/rule-schemas.ts';
import {
  contextListResponseSchema,
  contextParamsSchema,
  publishResultResponseSchema,
  recompileResponseSchema,
  rollbackBodySchema,
  validatorQuerySchema,
  validatorSourceResponseSchema,
} from './schemas/context-schemas.ts';

interface ContextParams {
  context: string;
}

const adminOnly = { role: 'admin' } as const;

/**
 * Registers the /contexts routes. Mounted by buildApp under /api/v1 with
 * `{ deps }`.
 *
 * @example
 * await app.register(contextsRoutes, { prefix: '/api/v1', deps });
 */
export const contextsRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { storage, validators } = deps;
  // Built modules by tenant, context and ruleset version (a version's rules never change).
  const modules = new StandaloneModuleCache();

  /** The context name of the URL; a name that cannot exist is an unknown context. */
  const contextOf = (params: ContextParams): string => {
    if (!CONTEXT_REGEX.test(params.context)) {
      throw new ProblemError('CONTEXT_NOT_FOUND', 'The context was not found.');
    }
    return params.context;
  };

  app.post<{ Params: ContextParams }>('/contexts/:context/publish', {
    config: adminOnly,
    schema: { params: contextParamsSchema, response: { 200: publishResultResponseSchema } },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    try {
      const { result, live } = await compileAhead(validators, (compile) => storage.rules.publishContext(tenantId, context, compile));
      if (live !== undefined) validators.install(live);
      return result;
    } catch (error) {
      if (error instanceof NotFoundError) throw contextNotFound(context, 'has no rules');
      throw error;
    }
  });

  app.post<{ Params: ContextParams; Body: { rulesetVersion: number } }>('/contexts/:context/rollback', {
    config: adminOnly,
    schema: { params: contextParamsSchema, body: rollbackBodySchema, response: { 200: publishResultResponseSchema } },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    const { result, live } = await compileAhead(validators, (compile) =>
      storage.rules.rollback(tenantId, context, request.body.rulesetVersion, deps.config.maxRulesPerContext, compile));
    validators.install(live);
    return result;
  });

  app.get('/contexts', {
    config: adminOnly,
    schema: { response: { 200: contextListResponseSchema } },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const summaries = await storage.rules.contexts(tenantId);
    return {
      items: summaries.map((summary) => {
        // A look, not a use: listing contexts must not keep every validator from eviction, nor count as hits.
        const cached = validators.peek(tenantId, summary.context);
        // A validator of an older ruleset version (published by another
        // instance, not yet followed here) does not describe this version.
        const current = cached !== undefined && cached.rulesetVersion === summary.rulesetVersion ? cached : undefined;
        return {
          ...summary,
          compiledAt: current?.compiledAt ?? null,
          compileMs: current?.compileMs ?? null,
        };
      }),
    };
  });

  app.post<{ Params: ContextParams }>('/contexts/:context/recompile', {
    config: adminOnly,
    schema: { params: contextParamsSchema, response: { 200: recompileResponseSchema } },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    const validator = await validators.recompile(tenantId, context);
    if (validator === null) throw contextNotFound(context, 'has no published ruleset');
    return {
      context,
      rulesetVersion: validator.rulesetVersion,
      rules: validator.ruleCount,
      compileMs: validator.compileMs,
    };
  });

  app.get<{ Params: ContextParams; Querystring: { format?: 'source' | 'module' } }>('/contexts/:context/validator', {
    config: adminOnly,
    schema: { params: contextParamsSchema, querystring: validatorQuerySchema, response: { 200: validatorSourceResponseSchema } },
  }, async (request, reply) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    const validator: CompiledValidator | null =
      validators.get(tenantId, context) ?? (await validators.load(tenantId, context));
    if (validator === null) throw contextNotFound(context, 'has no published ruleset');
    if (request.query.format === 'module') {
      const { rulesetVersion, ruleset } = validator;
      const code = await modules.get(`${tenantId}\u0000${context}\u0000${rulesetVersion}`, async () => {
        const built = await buildStandaloneModule(ruleset.rules, {
          limits: { maxExpressionLength: deps.config.maxExpressionLength },
          about: { tenantId, context, rulesetVersion },
          // Planned and generated a slice of time at a time, as compiles are.
          runSteps: runInSlices,
        });
        return built.code;
      });
      return reply.type('text/javascript; charset=utf-8').send(code);
    }
    return reply.type('text/javascript; charset=utf-8').send(validator.source);
  });
};
