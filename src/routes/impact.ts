/**
 * The impact report and the samples it names (docs/api.md, "Impact on
 * recorded traffic"): POST /contexts/{context}/impact replays the context's
 * newest recorded samples against the live ruleset and a target (the draft,
 * or a numbered ruleset version) and counts what would change;
 * GET /contexts/{context}/samples/{sampleId} answers one sample's payload.
 * The replay and the counting are src/rules/impact-report.ts; this plugin
 * reads, compiles and answers. Admin keys only; another tenant's samples,
 * or another context's, are unknown (404). Nothing is stored or cached:
 * the target is compiled for the report and dropped with it.
 */
import type { FastifyPluginAsync } from 'fastify';
import { MessageChannel } from 'node:worker_threads';
import type { AppDeps } from '../app-deps.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import { sendAnswerJson } from '../http/json-answer.ts';
import { operation } from '../openapi/operation.ts';
import type { AnswerJson } from '../pool/answer-json.ts';
import type { TaskRunner } from '../pool/management-pool.ts';
import { OPERATIONS } from '../pool/operations.ts';
import { serveSamplePages } from '../pool/sample-pages.ts';
import { impactTargetRuleset, type ImpactTarget } from '../rules/impact-target.ts';
import { TUNING } from '../tuning.ts';
import { optionalBody } from './change-info.ts';
import { contextParamsSchema } from './schemas/context-schemas.ts';
import { impactBodySchema, sampleParamsSchema } from './schemas/impact-schemas.ts';
import { contextOf, tenantOf } from './schemas/route-helpers.ts';
import { sharedRef } from './schemas/shared-schemas.ts';

interface ImpactBody {
  target?: ImpactTarget;
  limit?: number;
}

const adminOnly = { role: 'admin' } as const;

/**
 * Registers the impact report and the sample route. Mounted by buildApp
 * under /api/v1 with `{ deps }`.
 *
 * @example
 * await app.register(impactRoutes, { prefix: '/api/v1', deps });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const impactRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { storage, config, pool } = deps;
  const limits = {
    maxPayloadDepth: config.maxPayloadDepth,
    evaluationDeadlineMs: TUNING.evaluationDeadlineMs.value,
    budgetMs: config.operationTimeBudgetMs,
  };
  const compilerLimits = { maxExpressionLength: config.maxExpressionLength, maxTableRows: config.maxTableRows };

  /**
   * The report, replayed on a management thread that asks this thread for the samples a page at a
   * time, and answered as that thread wrote it (its examples hold samples' payloads).
   */
  const report = async (run: TaskRunner, tenantId: string, context: string, body: ImpactBody | undefined): Promise<AnswerJson> => {
    const target = body?.target ?? 'draft';
    const { maxSamples } = await storage.tenants.getSampling(tenantId);
    // Samples past the context's maxSamples wait for the minute's sweep: the report never counts them.
    const limit = Math.min(body?.limit ?? TUNING.impactDefaultSamples.value, maxSamples);
    // The live rules as the database's JSON text, parsed on the replay's thread (the cached validator keeps none):
    // a large context's rules parsed here would hold the event loop that answers validations.
    const live = await storage.rules.rulesetText(tenantId, context, 'live');
    const targetRuleset = await impactTargetRuleset(storage, tenantId, context, target, live?.rulesetVersion ?? null);
    const { port1, port2 } = new MessageChannel();
    const pages = serveSamplePages(port1, (count, before) =>
      storage.samples.newestTextsBefore(tenantId, context, count, before, TUNING.impactBytesPerRead.value));
    try {
      return await run('impact', {
        context,
        live,
        target: targetRuleset,
        limit,
        pageSize: TUNING.impactSamplesPerRead.value,
        limits,
        compilerLimits,
        pages: port2,
      }, [port2], { schema: 'ImpactReport', lead: {} });
    } catch (error) {
      throw pages.failure ?? error;
    } finally {
      port1.close();
    }
  };

  app.post<{ Params: { context: string }; Body: ImpactBody | undefined }>('/contexts/:context/impact', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'reportImpact',
        tag: 'Contexts',
        summary: 'Replay recorded traffic against a draft or a version',
        description: 'Replays the context\'s newest recorded samples (see PUT /tenant/sampling) against the live ruleset and a target, '
          + '`draft` (default: what a context publish would make live now) or a ruleset version number, and counts what would change: '
          + 'samples that became invalid, became valid, or fail other rules; per rule, the samples it would newly fail and no longer '
          + 'fail; and examples with their sample ids. A context with nothing live counts every sample as valid live. Changes nothing.',
        answers: {
          200: 'The report.',
          400: 'The body is invalid (INVALID_BODY).',
          404: 'The context is unknown, has no rules (draft) (CONTEXT_NOT_FOUND), or has no such version (NOT_FOUND).',
          409: 'The target ruleset is over a limit, or the replay stopped at its time or memory budget, naming `limit` (LIMIT_EXCEEDED).',
          429: 'The tenant already has its most heavy management operations waiting or running, or this one waited its whole time budget for a '
            + 'thread behind them (RATE_LIMITED, with Retry-After).',
          503: 'No management thread was free within the report\'s time budget, other tenants\' work holding them (SERVICE_UNAVAILABLE, with Retry-After).',
        },
      }),
      params: contextParamsSchema,
      body: impactBodySchema,
      response: { 200: sharedRef('ImpactReport') },
    },
    // The body is optional: none means the defaults.
    preValidation: optionalBody,
  }, async (request, reply) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    return sendAnswerJson(reply, await pool.operation(tenantId, OPERATIONS.impactReport, (run) => report(run, tenantId, context, request.body)));
  });

  app.get<{ Params: { context: string; sampleId: string } }>('/contexts/:context/samples/:sampleId', {
    config: adminOnly,
    schema: {
      ...operation({
        id: 'getSample',
        tag: 'Contexts',
        summary: 'Read one recorded sample',
        description: 'The payload of a recorded sample of the context, as it was validated, with when it was recorded and the ruleset '
          + 'version that validated it. Impact reports name samples by these ids.',
        answers: { 200: 'The sample.', 404: 'The context has no sample with this id (NOT_FOUND).' },
      }),
      params: sampleParamsSchema,
      response: { 200: sharedRef('Sample') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const context = contextOf(request.params);
    const sample = await storage.samples.get(tenantId, context, request.params.sampleId);
    if (sample === null) throw new ProblemError(PROBLEMS.sampleNotFound());
    return { sampleId: sample.id, recordedAt: sample.recordedAt.toISOString(), rulesetVersion: sample.rulesetVersion, payload: sample.payload };
  });
};
