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
import type { AppDeps, CompiledValidator } from '../app-deps.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import { operation } from '../openapi/operation.ts';
import { compileUncachedOrRefuse } from '../rules/compile-uncached.ts';
import { ImpactReplay, ReplayBudgetExceededError, replayInPages, type ImpactReport } from '../rules/impact-report.ts';
import { ImpactSlots } from '../rules/impact-slots.ts';
import { impactTargetRuleset, type ImpactTarget } from '../rules/impact-target.ts';
import type { SampleCursor } from '../storage/types.ts';
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
  const { storage, validators, config } = deps;
  const limits = {
    maxPayloadDepth: config.maxPayloadDepth,
    evaluationDeadlineMs: TUNING.evaluationDeadlineMs.value,
    budgetMs: TUNING.impactReplayBudgetMs.value,
  };
  const slots = new ImpactSlots();

  /** The target's validator: the live one when the target is what is live, else compiled for this report only. */
  const targetValidator = async (tenantId: string, context: string, target: ImpactTarget, live: CompiledValidator | null) => {
    const ruleset = await impactTargetRuleset(storage, tenantId, context, target, live?.rulesetVersion ?? null);
    if (ruleset === null) return live!;
    return (await compileUncachedOrRefuse(validators, ruleset, { context })).validator;
  };

  /** The report itself, run while the tenant's slot is held. */
  const report = async (tenantId: string, context: string, body: ImpactBody | undefined): Promise<ImpactReport> => {
    const target = body?.target ?? 'draft';
    const { maxSamples } = await storage.tenants.getSampling(tenantId);
    // Samples past the context's maxSamples wait for the minute's sweep: the report never counts them.
    const limit = Math.min(body?.limit ?? TUNING.impactDefaultSamples.value, maxSamples);
    const live = validators.peek(tenantId, context) ?? (await validators.load(tenantId, context));
    const read = (count: number, before?: SampleCursor) =>
      storage.samples.newestBefore(tenantId, context, count, before, TUNING.impactBytesPerRead.value);
    const pageSize = TUNING.impactSamplesPerRead.value;
    // The first page is read while the target compiles: on PostgreSQL the two overlap.
    const [compiledTarget, first] = await Promise.all([targetValidator(tenantId, context, target, live), read(Math.min(limit, pageSize))]);
    const replay = new ImpactReplay({ live, target: compiledTarget }, limits, Date.now());
    try {
      await replayInPages(replay, read, limit, pageSize, first);
    } catch (error) {
      if (error instanceof ReplayBudgetExceededError) throw new ProblemError(PROBLEMS.impactReplayTooLong(error.budgetMs));
      throw error;
    }
    return replay.report();
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
          400: 'The body is invalid, or replaying took longer than the report may (INVALID_BODY, naming `limit`).',
          404: 'The context is unknown, has no rules (draft) (CONTEXT_NOT_FOUND), or has no such version (NOT_FOUND).',
          409: 'The target ruleset is over a limit (LIMIT_EXCEEDED).',
          429: 'An impact report of the tenant is still running on this instance; one runs at a time (RATE_LIMITED, with Retry-After).',
        },
      }),
      params: contextParamsSchema,
      body: impactBodySchema,
      response: { 200: sharedRef('ImpactReport') },
    },
    // The body is optional: none means the defaults.
    preValidation: optionalBody,
  }, async (request): Promise<ImpactReport> => {
    const tenantId = tenantOf(request);
    const release = slots.take(tenantId);
    if (release === undefined) throw new ProblemError(PROBLEMS.impactReportRunning());
    try {
      return await report(tenantId, contextOf(request.params), request.body);
    } finally {
      release();
    }
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
