/**
 * POST /rules/test (docs/api.md): evaluate a payload without
 * storing anything, either against one rule as it would be saved, or
 * against a context's ruleset as it is live now (`draft: false`, the
 * default) or as it would be after a context publish (`draft: true`).
 * Validators built here are never cached: a test must not change what
 * validation sees.
 */
import type { FastifyPluginAsync } from 'fastify';
import { toRuleDefinition } from '../../compiler/rule-schema.ts';
import type { AppDeps } from '../app-deps.ts';
import { PROBLEMS, ProblemError } from '../errors.ts';
import { checkPayload } from '../http/payload-guard.ts';
import { OPERATIONS } from '../pool/operations.ts';
import { assertStorableText } from '../http/storable-text.ts';
import type { LiveRuleset } from '../storage/types.ts';
import { ruleReviewer } from '../pool/rule-review.ts';
import type { RuleWarning } from '../rules/rule-warnings.ts';
import { tenantOf } from './schemas/route-helpers.ts';
import { toRuleContent, type TestRuleBody } from '../rules/rule-body.ts';
import { ruleTestBodySchema } from './schemas/rule-test-schemas.ts';
import { operation } from '../openapi/operation.ts';
import { sharedRef } from './schemas/shared-schemas.ts';
import { RuleTestAnswer } from '../validation/validation-answers.ts';

interface RuleTestBody {
  rule?: TestRuleBody;
  context?: string;
  draft?: boolean;
  payload: Record<string, unknown>;
  explain?: boolean;
}

/** The context name a one-rule test runs under when the rule names none. */
const TEST_CONTEXT = 'rule-test';

/**
 * Registers POST /rules/test. Mounted by buildApp under /api/v1 with
 * `{ deps }`.
 *
 * @example
 * await app.register(ruleTestRoutes, { prefix: '/api/v1', deps });
 */
// eslint-disable-next-line @typescript-eslint/require-await -- a Fastify plugin without a done parameter must return a promise
export const ruleTestRoutes: FastifyPluginAsync<{ deps: AppDeps }> = async (app, { deps }) => {
  const { storage, pool, config } = deps;
  // Compile check and warnings of a tested rule, a decision table's on a management thread (rule-review.ts).
  const review = ruleReviewer({ config, pool, payloadSchemas: deps.payloadSchemas, storedPayloadSchemas: storage.payloadSchemas });

  /** The one-rule ruleset of `{ rule, payload }`, checked as a save would check it. */
  const ruleRuleset = async (tenantId: string, rule: TestRuleBody): Promise<LiveRuleset> => {
    // A rule that could not be saved does not pass its test either.
    assertStorableText(rule, 'rule');
    const content = toRuleContent(rule);
    await review.assertCompiles(tenantId, rule.code, content, 'rule');
    return {
      tenantId,
      context: rule.context ?? TEST_CONTEXT,
      rulesetVersion: 0,
      rules: [toRuleDefinition(rule.code, content)],
    };
  };

  /** The ruleset of `{ context, payload, draft }`. */
  const contextRuleset = async (tenantId: string, context: string, draft: boolean): Promise<LiveRuleset> => {
    const ruleset = draft
      ? await storage.rules.draftRuleset(tenantId, context)
      : await storage.rules.liveRuleset(tenantId, context);
    if (ruleset === null) {
      throw new ProblemError(draft ? PROBLEMS.contextHasNoRules(context) : PROBLEMS.contextsNotPublished([{ context }]));
    }
    return ruleset;
  };

  app.post<{ Body: RuleTestBody }>('/rules/test', {
    config: { role: 'admin' },
    schema: {
      ...operation({
        id: 'testRule',
        tag: 'Rules',
        summary: 'Test a rule or a context on a payload',
        description: 'Evaluates a payload without storing anything. `{ rule, payload }`: the rule is checked as a save would check it '
          + '(code uniqueness aside) and evaluated alone. `{ context, payload, draft }`: the context\'s live ruleset (`draft: false`, '
          + 'the default), or the ruleset a context publish would make live (`draft: true`). With `explain: true` the answer adds '
          + '`trace`: what became of each rule of the ruleset (disabled ones included), passed, failed or skipped and why.',
        answers: {
          200: 'The result, as a single validation answers it, with the tested rule\'s warnings (empty for a context).',
          404: 'The context has no published ruleset (or, with `draft: true`, no rules) (CONTEXT_NOT_FOUND).',
          409: 'The context\'s ruleset is over a limit, or the test stopped at its time or memory budget (LIMIT_EXCEEDED).',
          429: 'The tenant already has its most heavy management operations waiting or running, or this one waited its whole time budget for a '
            + 'thread behind them (RATE_LIMITED, with Retry-After).',
          503: 'No management thread was free within the test\'s time budget, other tenants\' work holding them (SERVICE_UNAVAILABLE, with Retry-After).',
        },
      }),
      body: ruleTestBodySchema,
      response: { 200: sharedRef('RuleTestResult') },
    },
  }, async (request) => {
    const tenantId = tenantOf(request);
    const body = request.body;
    // The same guard as the validation operations: depth and finite numbers,
    // before anything recursive (the validator, the serializer) sees it.
    const payloadProblem = checkPayload(body.payload, 'payload', config.maxPayloadDepth);
    if (payloadProblem !== undefined) throw new ProblemError(PROBLEMS.invalidBody([payloadProblem]));
    let ruleset: LiveRuleset;
    let warnings: RuleWarning[] = [];
    if (body.rule !== undefined) {
      assertOneForm(body);
      ruleset = await ruleRuleset(tenantId, body.rule);
      // A tested rule is warned about as a saved one is (docs/rule-language.md, "Warnings").
      warnings = await review.warningsFor(tenantId, body.rule.context, body.rule.code, toRuleContent(body.rule));
    } else {
      ruleset = await contextRuleset(tenantId, requireContext(body), body.draft ?? false);
    }

    // On a management thread, under the same deadline as the validation operations: a test
    // runs caller-supplied rules on a caller-supplied payload just the same. A publish would
    // refuse a ruleset that does not compile, or a draft over a ruleset-wide limit; so does the test.
    const result = await pool.operation(tenantId, OPERATIONS.ruleTest, (run) => run('ruleTest', {
      ruleset,
      payload: body.payload,
      explain: body.explain === true,
      pathPrefix: body.rule !== undefined ? 'rule.' : '',
      compilerLimits: { maxExpressionLength: config.maxExpressionLength, maxTableRows: config.maxTableRows },
      maxPayloadDepth: config.maxPayloadDepth,
      maxAnswerBytes: config.maxAnswerBytes,
    }));
    // The same body, and clock, as a single validation's, with the rule's warnings.
    const answer = new RuleTestAnswer(result.isValid, result.totalRulesEvaluated, result.failures, warnings, request.startedAt);
    if (result.trace !== undefined) answer.trace = result.trace;
    return answer;
  });
};

/** A rule test carries no context-test fields. */
function assertOneForm(body: RuleTestBody): void {
  const extra = (['context', 'draft'] as const).filter((field) => body[field] !== undefined);
  if (extra.length > 0) {
    throw new ProblemError(PROBLEMS.ruleAndContextBoth(extra.map((field) => ({
      path: field,
      message: 'must be left out when `rule` is sent (put the context inside the rule)',
    }))));
  }
}

function requireContext(body: RuleTestBody): string {
  if (body.context === undefined) {
    throw new ProblemError(PROBLEMS.ruleOrContextMissing());
  }
  return body.context;
}
