/**
 * Context routes (docs/api.md): publish a whole context, roll it
 * back, list contexts with their cache state, recompile (reading the generated
 * validator is local evaluation's: routes/local-evaluation.ts). Admin keys only; another tenant's context is unknown (404).
 *
 * Publish and rollback compile the next validator inside the storage
 * transaction (beforeCommit) and install it before answering; a dry run
 * compiles it before the transaction starts, so the transaction is short
 * (src/validators/early-compile.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import { compileAhead } from '../validators/early-compile.ts';
import { goLiveTestsOnPool } from '../pool/go-live-tests.ts';
import { storedTestsGate } from '../rules/stored-tests.ts';
import { forceQuerySchema } from './schemas/context-test-schemas.ts';
import type { AppDeps } from '../app-deps.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import { originOf, contextOf, tenantOf } from './schemas/route-helpers.ts';
import { operation } from '../openapi/operation.ts';
import {
  contextParamsSchema,
  rollbackBodySchema,
} from './schemas/context-schemas.ts';
import { publishBodySchema } from './schemas/history-schemas.ts';
import { sharedRef } from './schemas/shared-schemas.ts';
import { changeInfoOf, optionalBody } from './change-info.ts';

interface ContextParams {
  context: string;
}

const adminOnly = { role: 'admin' } as const;

const NOT_PUBLISHED = 'The context has no published ruleset (CONTEXT_NOT_FOUND).';

/**
 * Registers the /contexts routes. Mounted by buildApp under /api/v1 with
 * `{ deps }`.
 *
 * @example
 * await app.register(contextsRoutes, { prefix: '/api/v1', deps });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const contextsRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { storage, validators } = deps;

  app.post<{ Params: ContextParams; Body: { note?: string } | undefined; Querystring: { force?: 'true' | 'false' } }>('/contexts/:context/publish', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'publishContext',
        tag: 'Contexts',
        summary: 'Publish every draft of a context',
        description: 'Makes the latest version of every draft rule of the context live, in one transaction, as one new ruleset version. '
          + 'The new validator is compiled before the call answers. With no drafts, nothing changes. The body is optional: '
          + 'a `note` to keep with the new ruleset version.',
        answers: {
          200: 'What was published, and what changed by code; `published` is empty and the version unchanged when there were no drafts.',
          400: 'The body is not `{ note }` with a note of at most 500 characters (INVALID_BODY).',
          404: 'The context has no rules (CONTEXT_NOT_FOUND).',
          409: 'The ruleset would be over a limit, or its stored tests took longer than the time budget (LIMIT_EXCEEDED); or a stored test of the context '
            + 'fails against it (TESTS_FAILED).',
          429: 'The context has stored tests and the tenant already has its most heavy management operations waiting or running (RATE_LIMITED, with Retry-After).',
        },
      }),
      params: contextParamsSchema,
      querystring: forceQuerySchema,
      body: publishBodySchema,
      response: { 200: sharedRef('PublishResult') },
    },
    // The body is optional: a publish without one is a publish without a note.
    preValidation: optionalBody,
  }, async (request) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    const info = changeInfoOf(request, request.body);
    const gate = storedTestsGate(storage.tests, goLiveTestsOnPool(deps.pool, deps.config), request.query.force === 'true');
    // A context without rules is refused by storage (ContextNotFoundError, a 404 CONTEXT_NOT_FOUND).
    const { result } = await compileAhead(
      validators,
      (compile) => storage.rules.publishContext(tenantId, context, compile, gate.info(info)),
      gate.check,
    );
    return result;
  });

  app.post<{ Params: ContextParams; Body: { rulesetVersion: number; note?: string }; Querystring: { force?: 'true' | 'false' } }>('/contexts/:context/rollback', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'rollbackContext',
        tag: 'Contexts',
        summary: 'Roll a context back to an earlier ruleset version',
        description: 'Makes what was live at an earlier ruleset version live again, as a new ruleset version: each rule whose live content differs '
          + 'gets a new version copying that content; rules archived since are revived, rules absent then are archived. '
          + 'An optional `note` is kept with the new ruleset version.',
        answers: {
          200: 'What was published by the rollback, and what changed by code.',
          400: 'The body is not `{ rulesetVersion, note? }` (INVALID_BODY).',
          404: 'The context has no such ruleset version (NOT_FOUND or CONTEXT_NOT_FOUND).',
          409: 'The version is the current one, or a revived rule\'s code is taken by another live rule (CONFLICT); or the context would be over a limit (LIMIT_EXCEEDED); '
            + 'or its stored tests took longer than the time budget (LIMIT_EXCEEDED); or a stored test of the context fails against the rules it would make live '
            + '(TESTS_FAILED).',
          429: 'The context has stored tests and the tenant already has its most heavy management operations waiting or running (RATE_LIMITED, with Retry-After).',
        },
      }),
      params: contextParamsSchema,
      querystring: forceQuerySchema,
      body: rollbackBodySchema,
      response: { 200: sharedRef('PublishResult') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    const info = changeInfoOf(request, request.body);
    const gate = storedTestsGate(storage.tests, goLiveTestsOnPool(deps.pool, deps.config), request.query.force === 'true');
    const { result } = await compileAhead(
      validators,
      (compile) => storage.rules.rollback(tenantId, context, request.body.rulesetVersion, deps.config.maxRulesPerContext, compile, gate.info(info)),
      gate.check,
    );
    return result;
  });

  app.get('/contexts', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'listContexts',
        tag: 'Contexts',
        summary: 'List contexts',
        description: 'The tenant\'s contexts, with their live ruleset version, their rules by status and the compiled validator this process holds.',
        answers: { 200: 'The contexts.' },
      }),
      response: { 200: sharedRef('ContextList') },
    },
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
    schema: {
      ...operation({
        id: 'recompileContext',
        tag: 'Contexts',
        summary: 'Recompile a context\'s validator',
        description: 'Rebuilds the validator of the live ruleset from the database now, and caches it.',
        answers: {
          200: 'The rebuilt validator.',
          404: NOT_PUBLISHED,
          409: 'The ruleset is over a limit (LIMIT_EXCEEDED).',
        },
      }),
      params: contextParamsSchema,
      response: { 200: sharedRef('RecompileResult') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    const validator = await validators.recompile(tenantId, context);
    if (validator === null) throw new ProblemError(PROBLEMS.contextsNotPublished([{ context }]));
    await storage.audit.record(tenantId, originOf(request), {
      action: 'context.recompile', context, after: { rulesetVersion: validator.rulesetVersion, compileMs: validator.compileMs },
    });
    return {
      context,
      rulesetVersion: validator.rulesetVersion,
      rules: validator.ruleCount,
      compileMs: validator.compileMs,
    };
  });
};
